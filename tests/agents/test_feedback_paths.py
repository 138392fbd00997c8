"""Feedback from every injection path: Engram's agent at session end and the MCP server's search.

Each test fails if its door stops calling lifecycle.feedback.record_feedback: the memory's
history would have no ``use`` entry and its access count would not move."""

from __future__ import annotations

from typing import Any

import pytest

from desktop.agents.mcp_server import EngramMCP
from desktop.agents.memory_access import StoreMemoryAccess
from desktop.agents.providers.scripted import ScriptedProvider
from desktop.agents.session import AgentSession
from desktop.agents.session_types import SessionConfig
from desktop.agents.tools.registry import ApprovalPolicy
from desktop.memory.lifecycle.feedback import confirm_right, record_feedback
from desktop.memory.store.writer import FnOp
from tests.agents.conftest import add
from tests.support.shown import show


def _uses(project: Any, mid: int) -> list[dict[str, Any]]:
    return [h for h in project.memories.history(mid) if h["action"] == "use"]


def test_agent_session_records_cited_and_ignored_and_counts_only_what_it_was_shown(project: Any) -> None:
    own = add(project, "Deploys go through make release only", type="requirement", pinned=True,
              candidate=True, source="agent_explicit")
    ignored = add(project, "The cache is warmed at boot", type="requirement", pinned=True)
    helped = add(project, "Releases are tagged vX.Y.Z", type="requirement", pinned=True, confidence=0.8)
    answer = (f"Use make release, as [Memory #{own}: deploys go through make release] says; tag it as "
              f"[Memory #{helped}: Releases are tagged vX.Y.Z] says.")
    session = AgentSession(project, SessionConfig("how do I deploy?", ScriptedProvider([{"text": answer}]),
                                                  ab_group="full", learn=False))
    result = session.run()
    assert result.outcome == "success"
    project.db.writer.run(FnOp("sync", lambda tx: None))  # the feedback op is queued, not awaited
    [use] = _uses(project, own)
    assert use["detail"]["outcome"] == "cited" and use["detail"]["session"] == session.session_id
    assert use["detail"]["counted"] is False  # a candidate is never injected: citing it is the agent's word
    assert _uses(project, ignored)[0]["detail"]["outcome"] == "ignored"
    m = project.memories.get(own)
    assert m.access_count == 0 and m.candidate
    h = project.memories.get(helped)
    assert h.access_count == 1 and round(h.confidence, 6) == 0.85
    assert project.memories.get(ignored).access_count == 1


def test_mcp_search_records_shown_and_counts_nothing(project: Any) -> None:
    mid = add(project, "Deploys go through make release only", type="requirement")
    mcp = EngramMCP(project)
    try:
        assert f"#{mid}" in mcp.search_memory("deploys release")
    finally:
        mcp.close()
    project.db.writer.run(FnOp("sync", lambda tx: None))
    [use] = _uses(project, mid)
    assert use["detail"] == {"outcome": "shown", "session": None, "source": "mcp", "counted": False}
    assert project.memories.get(mid).access_count == 0


def test_confirmed_ends_review_and_quarantine_and_five_uses_reinforce(project: Any) -> None:
    mid = add(project, "Tests need docker", source="observer_inferred", candidate=True, needs_review=True,
              confidence=0.6)
    confirm_right(project.db, mid).result(10)
    m = project.memories.get(mid)
    assert not m.candidate and not m.needs_review and m.confidence == pytest.approx(0.65)
    for i in range(5):  # a person's confirmation is not a use: five shown sessions are
        show(project.db, f"s-{i}", [mid])
        record_feedback(project.db, [mid], session_id=f"s-{i}").result(10)
    assert project.memories.get(mid).confidence == pytest.approx(0.70)  # 5th uncorrected use: +0.05
    outcomes = [u["detail"]["outcome"] for u in _uses(project, mid)]
    assert outcomes == ["confirmed", "shown", "shown", "shown", "shown", "shown"]


def test_engrams_own_agent_hears_a_lesson_for_the_call_it_makes(project: Any) -> None:
    """Issue 25 from the agent door: the core's warnings_for, given with the call's result, once."""
    from desktop.memory.triggers.model import COMMAND, Trigger

    lesson = add(project, "`git show --no-stat` fails here (unrecognized argument); `git show --stat` works.",
                 type="gotcha", source="observer_inferred", confidence=0.85,
                 metadata={"signal": "command_fix",
                           "triggers": [Trigger(COMMAND, "git", ("show",), ("--no-stat",)).as_json()]})
    call = {"name": "Bash", "arguments": {"command": "git show HEAD --no-stat"}}
    provider = ScriptedProvider([{"tool_calls": [call]}, {"tool_calls": [call]}, {"text": "Done."}])
    events: list[Any] = []
    session = AgentSession(project, SessionConfig("tidy up the readme", provider, ab_group="full", learn=False),
                           on_event=events.append)
    session.run()
    results = [e for e in events if e.kind == "tool_result"]
    assert f'id="{lesson}"' in results[0].data["output"] or f"#{lesson}" in results[0].data["output"]
    assert lesson in results[0].data["augmented"]
    assert lesson not in results[1].data["augmented"]  # once a session


def test_engrams_own_agent_records_what_its_warnings_did(project: Any) -> None:
    """Issue 25 item 8 from the agent door: each lesson heard is a warning in the product's record;
    its failure coming back in a later call makes it repeated, a session ending without it avoided."""
    from desktop.memory.triggers.model import COMMAND, Trigger
    from desktop.memory.triggers.warn import outcome_report

    lesson = add(project, "`git show --no-stat` fails here (unrecognized argument); `git show --stat` works.",
                 type="gotcha", source="observer_inferred", confidence=0.85,
                 metadata={"signal": "command_fix",
                           "triggers": [Trigger(COMMAND, "git", ("show",), ("--no-stat",)).as_json()]})
    bad = {"name": "Bash", "arguments": {"command": "git show HEAD --no-stat"}}
    good = {"name": "Bash", "arguments": {"command": "git show HEAD --stat"}}
    allowed = ApprovalPolicy(allow_writes=True, allow_commands=True)
    for calls in ([bad, bad], [bad, good]):
        provider = ScriptedProvider([*({"tool_calls": [c]} for c in calls), {"text": "Done."}])
        AgentSession(project, SessionConfig("look at the last commit", provider, ab_group="full", learn=False,
                                            approval=allowed)).run()
    report = outcome_report(project.db.reads.conn())
    assert (report.warned, report.repeated, report.avoided, report.sessions) == (2, 1, 1, 2)
    assert report.by_memory == [(lesson, 2, 1, 1)] and report.by_agent == [("engram", 2, 1, 1)]


def test_engrams_own_agent_records_a_rewrite_lessons_repeat_when_the_checker_reports_it(project: Any) -> None:
    """The record from the agent door: a rule said before its call was written (its only trigger is the
    writing) repeats when the checker reports it again, as from the hooks."""
    from desktop.memory.triggers.model import CODE, Trigger
    from desktop.memory.triggers.warn import outcome_report

    add(project, '`make lint` reports `noctx`: "os/exec.Command must not be called"; a fix here wrote '
        '`c := exec.Command("git")` as `c := exec.CommandContext(ctx, "git")`.', type="error_pattern",
        source="observer_inferred", confidence=0.9,
        metadata={"signal": "check_rule", "signal_key": "check_rule:noctx",
                  "triggers": [Trigger(CODE, "call exec.Command(", tokens=(".go",)).as_json()]})
    (project.info.root / "Makefile").write_text(
        "lint:\n\t@echo 'x.go:3:7: os/exec.Command must not be called (noctx)'; echo '1 issues:'; exit 1\n",
        encoding="utf-8")
    code = 'package x\n\nvar c = exec.Command("git")\n'
    write = {"name": "Write", "arguments": {"file_path": "x.go", "content": code}}
    lint = {"name": "Bash", "arguments": {"command": "make lint"}}
    provider = ScriptedProvider([{"tool_calls": [write]}, {"tool_calls": [lint]}, {"text": "Done."}])
    AgentSession(project, SessionConfig("add x", provider, ab_group="full", learn=False,
                                        approval=ApprovalPolicy(allow_writes=True, allow_commands=True))).run()
    report = outcome_report(project.db.reads.conn())
    assert (report.warned, report.repeated, report.avoided) == (1, 1, 0)


def test_engrams_own_agent_hears_the_tests_habit_when_its_check_passes_on_untested_code(project: Any) -> None:
    """Issue 25 from the agent door: the same moment as the hooks' (triggers/untested), once."""
    habit = add(project, "Add tests with each code change here, without waiting to be asked: once code had changed "
                "without tests, the user asked for them (\"can we add a test?\").", type="preference",
                source="observer_inferred", confidence=0.95, provenance_session_ids=["a", "b"],
                metadata={"signal": "asked_tests", "signal_key": "asked_tests"})
    (project.info.root / "core" / "check_ok.py").write_text(
        "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n", encoding="utf-8")
    check = {"name": "Bash", "arguments": {"command": "python3 -m unittest discover -s core -p 'check_*.py'"}}
    change = {"name": "Edit", "arguments": {"file_path": "core/payments.py", "old_string": "amount * 100",
                                            "new_string": "round(amount * 100)"}}
    provider = ScriptedProvider([{"tool_calls": [check]}, {"tool_calls": [change]}, {"tool_calls": [check]},
                                 {"tool_calls": [check]}, {"text": "Done."}])
    events: list[Any] = []
    allowed = ApprovalPolicy(allow_writes=True, allow_commands=True)  # the user allowed both
    AgentSession(project, SessionConfig("round the charge", provider, ab_group="full", learn=False,
                                        approval=allowed), on_event=events.append).run()
    start = [e for e in events if e.kind == "injection" and e.data["trigger"] == "session_start"]
    assert all(habit not in e.data["memory_ids"] for e in start)  # not said to every start
    results = [e for e in events if e.kind == "tool_result"]
    assert "OK" in results[0].data["output"] and habit not in results[0].data["augmented"]  # nothing changed yet
    assert habit in results[2].data["augmented"]  # the check passed on the untested change
    assert habit not in results[3].data["augmented"]  # once a session


def test_engrams_own_agent_hears_a_checkers_rule_after_a_failure_a_pipe_hid(project: Any) -> None:
    """Issue 25 from the agent door: ``make lint | head`` exits 0; its output shows the rule fired,
    and the rule is said with it, as the hooks say it; a clean run hears nothing."""
    from desktop.memory.triggers.model import COMMAND, Trigger

    rule = add(project, "`make lint` reports `nilerr`; where it is intended, annotate `//nolint:nilerr // <reason>`.",
               type="error_pattern", source="observer_inferred", confidence=0.9,
               metadata={"signal": "check_rule", "signal_key": "check_rule:nilerr",
                         "triggers": [Trigger(COMMAND, "make", ("lint",)).as_json()]})
    (project.info.root / "Makefile").write_text(
        "lint:\n\t@test -f clean || { echo 'a.go:9:2: error is not nil (line 7) but it returns nil (nilerr)'; "
        "echo '1 issues:'; exit 1; }\n", encoding="utf-8")
    lint = {"name": "Bash", "arguments": {"command": "rm -f clean && make lint 2>&1 | head -20"}}
    clean = {"name": "Bash", "arguments": {"command": "touch clean && make lint 2>&1 | head -20"}}
    provider = ScriptedProvider([{"tool_calls": [clean]}, {"tool_calls": [lint]}, {"text": "Done."}])
    events: list[Any] = []
    allowed = ApprovalPolicy(allow_writes=True, allow_commands=True)
    (project.info.root / "clean").unlink(missing_ok=True)
    AgentSession(project, SessionConfig("fix lint", provider, ab_group="full", learn=False, approval=allowed),
                 on_event=events.append).run()
    results = [e for e in events if e.kind == "tool_result"]
    assert rule not in results[0].data["augmented"]
    assert "(nilerr)" in results[1].data["output"] and rule in results[1].data["augmented"]


def test_engrams_own_agent_hears_the_construct_lesson_before_writing_it(project: Any) -> None:
    """Issue 25 from the agent door: what an edit writes fires the checker's rule (its construct);
    an edit that writes other code does not."""
    from desktop.memory.triggers.model import CODE, Trigger

    rule = add(project, "`make lint` reports `errcheck`: \"Error return value is not checked\"; where it is intended, "
               "the line is annotated `//nolint:errcheck // <reason>`.", type="error_pattern",
               source="observer_inferred", confidence=0.9,
               metadata={"signal": "check_rule", "signal_key": "check_rule:errcheck",
                         "triggers": [Trigger(CODE, "w, _ := w(").as_json()]})
    access = StoreMemoryAccess(project)
    other = {"file_path": "core/payments.py", "old_string": "a", "new_string": "v, err := parse(x)"}
    assert access.warnings_for("Edit", other, ["core/payments.py"]) == []
    write_code = {"file_path": "core/payments.py", "old_string": "a", "new_string": "v, _ := parse(x)"}
    assert [m.id for m in access.warnings_for("Edit", write_code, ["core/payments.py"])] == [rule]


def test_engrams_own_agent_hears_a_guess_missed_before_where_no_lesson_is_yet(project: Any) -> None:
    """Issue 25 from the agent door: the core's guess_note, live, for a look at a file not on disk
    in a folder an earlier session's look missed in once; nothing for a file that is there."""
    from desktop.memory.store.writer import FnOp

    project.db.writer.submit(FnOp("seen_once", lambda tx: tx.execute(
        "INSERT INTO observer_signal_counts(signal_key, kind, session_count) VALUES ('wrong_place:core/*', "
        "'wrong_place', 1)"))).result(10)
    access = StoreMemoryAccess(project)
    note = access.guess_note("Read", {"file_path": "core/helpers.py"}, ["core/helpers.py"])
    assert note.startswith("Engram: `core/helpers.py` is not on disk")
    assert "`payments.py`" in note.split("holds now:")[1]
    assert access.guess_note("Read", {"file_path": "core/payments.py"}, ["core/payments.py"]) == ""


def test_engrams_own_agent_sends_a_lesson_to_review_when_the_user_declines_what_it_recommends(project: Any) -> None:
    """The agent door of the declined-advice rule: the user answers no to the stronger check a lesson
    recommends; at the session's end the lesson waits for their review, and the refusal is no failure."""
    from desktop.memory.triggers.model import COMMAND, Trigger
    from desktop.memory.triggers.warn import outcome_report

    lesson = add(project, "`python3 -m unittest` passing is not enough here: `make test-all` also checks, and has "
                 "failed after it passed; run `make test-all` before calling the work done.", type="gotcha",
                 source="observer_inferred", confidence=0.9,
                 metadata={"signal": "check_gap", "signal_key": "check_gap:unittest>make test-all",
                           "triggers": [Trigger(COMMAND, "unittest").as_json()]})
    (project.info.root / "core" / "check_ok.py").write_text(
        "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n", encoding="utf-8")
    check = {"name": "Bash", "arguments": {"command": "python3 -m unittest discover -s core -p 'check_*.py'"}}
    asked: list[str] = []

    def ask(request: Any) -> bool:  # the user lets the quick check run, not the long one
        asked.append(str(request.arguments.get("command")))
        return "unittest" in asked[-1]

    call = {"name": "Bash", "arguments": {"command": "make test-all 2>&1 | tail -5"}}
    provider = ScriptedProvider([{"tool_calls": [check]}, {"tool_calls": [call]},
                                 {"text": "Stopped: the user declined the long run."}])
    events: list[Any] = []
    AgentSession(project, SessionConfig("finish the refactor", provider, ab_group="full",
                                        approval=ApprovalPolicy(allow_writes=True, ask=ask)),
                 on_event=events.append).run()
    project.db.writer.run(FnOp("sync", lambda tx: None))
    assert asked[-1] == "make test-all 2>&1 | tail -5"
    results = [e for e in events if e.kind == "tool_result"]
    assert lesson in results[0].data["augmented"]  # said once the quick check passed
    report = outcome_report(project.db.reads.conn())
    assert (report.warned, report.declined, report.avoided, report.repeated) == (1, 1, 0, 0)
    m = project.memories.get(lesson)
    assert m.needs_review and not m.deprecated
    assert any(h["action"] == "review" and "make test-all" in (h["reason"] or "")
               for h in project.memories.history(lesson))
    failures = project.db.reads.conn().execute(
        "SELECT count(*) FROM memories WHERE json_extract(metadata, '$.signal') IN ('command_fix', 'rejected_flag')")
    assert failures.fetchone()[0] == 0


def test_engrams_own_agent_does_not_hear_a_check_gap_its_instructions_already_give(project: Any) -> None:
    """The agent door of ``known_already.stronger_check_told``: AGENTS.md already gives `make test-all`,
    so the gap is not said after the quick check passed; without that line it is."""
    from desktop.memory.triggers.model import COMMAND, Trigger

    lesson = add(project, "`python3 -m unittest` passing is not enough here: `make test-all` also checks, and has "
                 "failed after it passed; run `make test-all` before calling the work done.", type="gotcha",
                 source="observer_inferred", confidence=0.9,
                 metadata={"signal": "check_gap", "signal_key": "check_gap:unittest>make test-all",
                           "triggers": [Trigger(COMMAND, "unittest").as_json()]})
    root = project.info.root
    (root / "core" / "check_ok.py").write_text(
        "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n", encoding="utf-8")
    check = {"name": "Bash", "arguments": {"command": "python3 -m unittest discover -s core -p 'check_*.py'"}}
    heard = []
    for told in ("Run `python3 -m unittest` while you work.", "Run `make test-all` before you commit."):
        (root / "AGENTS.md").write_text(told, encoding="utf-8")
        events: list[Any] = []
        AgentSession(project, SessionConfig("finish the refactor", ScriptedProvider([{"tool_calls": [check]},
                                                                                     {"text": "Done."}]),
                                            ab_group="full", learn=False,
                                            approval=ApprovalPolicy(allow_writes=True, ask=lambda request: True)),
                     on_event=events.append).run()
        results = [e for e in events if e.kind == "tool_result"]
        heard.append(lesson in results[0].data["augmented"])
    assert heard == [True, False]
