"""The hook handlers in-process: budgets, trust threshold, no filler, no repeats, compaction, the dialects."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.agents.hooks import ledger
from desktop.agents.hooks.handlers import Handlers
from desktop.agents.hooks.protocol import from_dict
from desktop.composition import Engram
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.writer import FnOp
from desktop.memory.text.tokens import count_tokens
from desktop.settings import Settings
from tests.hooks.conftest import run_hook


@pytest.fixture
def project(payments_dir: Path, data_dir: Path, memories: dict[str, int]) -> Iterator[Any]:
    proj = Engram(Settings(data_dir=data_dir)).open_project(payments_dir, remember=False)
    yield proj
    proj.close()


def call(project: Any, event: str, agent: str = "claude-code", **fields: Any) -> Any:
    payload = {"session_id": fields.pop("session_id", "s-1"), "cwd": str(project.info.root), **fields}
    return from_dict(agent, event, payload)


def flush(project: Any) -> None:
    project.db.writer.run(FnOp("flush", lambda tx: None))


def test_session_start_within_budget_and_cited(project: Any, memories: dict[str, int]) -> None:
    for i in range(40):
        project.memories.add(NewMemory(content=f"Pinned rule number {i}: " + "keep the ledger balanced " * 12,
                                       type="decision", pinned=True, confidence=0.9)).result(10)
    text = Handlers(project, token_budget=300).handle(call(project, "session-start", source="startup"))
    assert text and count_tokens(text) <= 300
    assert '<memory id="' in text and "[Memory #" in text


def test_prompt_gives_nothing_when_nothing_is_relevant(project: Any, memories: dict[str, int]) -> None:
    h = Handlers(project)
    assert h.handle(call(project, "prompt", prompt="Please rename the CSS classes of the landing page")) == ""
    assert h.handle(call(project, "prompt", prompt="/clear")) == ""
    flush(project)
    assert ledger.shown_ids(project.db, "s-1") == []


def test_prompt_respects_the_trust_threshold(project: Any, memories: dict[str, int]) -> None:
    low = project.memories.add(NewMemory(content="The refund webhook handler logs to refunds.log",
                                         type="note", confidence=0.6)).result(10).id
    h = Handlers(project)
    text = h.handle(call(project, "prompt", prompt="where does the refund webhook handler log?"))
    assert f'id="{memories["prompt"]}"' in text and f'id="{low}"' not in text  # Cautious: 0.80
    project.db.writer.run(FnOp("trust", lambda tx: tx.execute(
        "INSERT INTO project_meta(key, value) VALUES ('trust_level', '4') ON CONFLICT(key) DO UPDATE "
        "SET value = excluded.value")))
    text = h.handle(call(project, "prompt", session_id="s-2", prompt="where does the refund webhook handler log?"))
    assert f'id="{low}"' in text  # Autonomous: 0.45


def test_candidates_and_needs_review_never_injected(project: Any, memories: dict[str, int]) -> None:
    review = project.memories.add(NewMemory(content="The refund webhook handler must run in a transaction.",
                                            type="gotcha", confidence=0.95, needs_review=True)).result(10).id
    h = Handlers(project)
    start = h.handle(call(project, "session-start", source="startup"))
    prompt = h.handle(call(project, "prompt", prompt="refund webhook handler secret rotation transaction"))
    assert f'id="{memories["candidate"]}"' not in start + prompt
    assert f'id="{memories["prompt"]}"' in prompt and f'id="{review}"' not in prompt
    if f'id="{review}"' in start:  # T1 is the core's build_start_context
        pytest.xfail("needs_review filtering of T1 lands in the core with issue 14")


def test_before_tool_shows_a_gotcha_once_and_after_tool_observes_live(project: Any,
                                                                     memories: dict[str, int]) -> None:
    h = Handlers(project)
    root = project.info.root
    read = {"tool_name": "Read", "tool_input": {"file_path": str(root / "core/payments.py")}, "tool_use_id": "t1"}
    first = h.handle(call(project, "before-tool", **read))
    assert f"[Memory #{memories['gotcha']}]" in first and "euros" in first
    assert h.handle(call(project, "before-tool", **{**read, "tool_use_id": "t2"})) == ""  # once a session
    done = {**read, "tool_response": {"type": "text", "file": {"content": "def charge..."}}}
    assert h.handle(call(project, "after-tool", **done)) == ""  # Claude Code heard it before the call
    assert h.handle(call(project, "after-tool", tool_name="Bash", tool_input={"command": "ls"},
                         tool_response={"stdout": "core"}, tool_use_id="t3")) == ""
    flush(project)
    # a hook process of its own writes the calls down for the observer, in order
    conn = project.db.reads.conn()
    journal = conn.execute("SELECT call FROM hook_journal WHERE session_id = 's-1' ORDER BY id").fetchall()
    assert [json.loads(r[0])["tool_name"] for r in journal] == ["Read", "Bash"]
    assert json.loads(journal[1][0])["output"] == "core"
    # no transcript: session end observes them, promotes the session and drops the journal
    h.handle(call(project, "session-end", transcript_path=""))
    flush(project)
    assert conn.execute("SELECT count(*) FROM hook_journal").fetchall()[0][0] == 0
    assert conn.execute("SELECT count(*) FROM scratchpad_checkpoints").fetchall()[0][0] == 0
    assert conn.execute("SELECT count(*) FROM session_metrics WHERE session_id = 's-1'").fetchall()[0][0] == 1


def test_compaction_reinjects_what_was_shown(project: Any, memories: dict[str, int]) -> None:
    h = Handlers(project)
    h.handle(call(project, "prompt", prompt="Is the refund webhook handler idempotent?"))
    flush(project)
    text = h.handle(call(project, "session-start", source="compact"))
    assert "compacted" in text and f'id="{memories["prompt"]}"' in text
    flush(project)
    events = {r.event for r in ledger.session_rows(project.db, "s-1")}
    assert events == {"prompt", "compact"}


def test_citations_count_once_and_unshown_citations_are_recorded(project: Any, memories: dict[str, int]) -> None:
    h = Handlers(project)
    h.handle(call(project, "session-start", source="startup"))
    flush(project)
    reply = f"Using [Memory #{memories['pinned']}: cents] and [Memory #{memories['gotcha']}: euros] [Memory #99999]."
    h.handle(call(project, "stop", last_assistant_message=reply))
    h.handle(call(project, "stop", last_assistant_message=reply))  # a second turn citing the same: counted once
    flush(project)
    uses = dict(project.db.reads.conn().execute("SELECT id, access_count FROM memories").fetchall())
    # Shown at the start and cited: one use. Cited without being shown: recorded, never counted.
    assert uses[memories["pinned"]] == 1 and uses[memories["gotcha"]] == 0
    rows = {(r.event, r.memory_id, r.cited) for r in ledger.session_rows(project.db, "s-1")}
    assert ("reply", memories["gotcha"], True) in rows and not any(m == 99999 for _, m, _ in rows)


@pytest.mark.parametrize(("agent", "event", "native", "payload"), [
    ("codex", "session-start", "SessionStart", {"hook_event_name": "SessionStart", "source": "startup",
                                                "model": "gpt-5", "transcript_path": None}),
    ("codex", "prompt", "UserPromptSubmit", {"hook_event_name": "UserPromptSubmit", "turn_id": "t",
                                             "prompt": "Is the refund webhook handler idempotent?"}),
    ("codex", "before-tool", "PreToolUse", {"hook_event_name": "PreToolUse", "tool_name": "apply_patch",
                                            "tool_input": {"input": "*** Begin Patch\n*** Update File: "
                                                                    "core/payments.py\n@@\n-a\n+b\n*** End Patch"},
                                            "tool_use_id": "c1", "turn_id": "t"}),
    ("gemini", "session-start", "SessionStart", {"hook_event_name": "SessionStart", "source": "startup",
                                                 "timestamp": "2026-01-01T00:00:00Z"}),
    ("gemini", "prompt", "BeforeAgent", {"hook_event_name": "BeforeAgent",
                                         "prompt": "Is the refund webhook handler idempotent?"}),
    ("gemini", "after-tool", "AfterTool", {"hook_event_name": "AfterTool", "tool_name": "read_file",
                                           "tool_input": {"absolute_path": "core/payments.py"},
                                           "tool_response": {"llmContent": "def charge(amount): ..."}}),
])
def test_codex_and_gemini_payloads(hook_env: dict[str, str], payments_dir: Path, memories: dict[str, int],
                                   agent: str, event: str, native: str, payload: dict[str, Any]) -> None:
    """The payloads their hook runners send (Codex 0.169, Gemini CLI 0.61), through ``engram hook``."""
    body = {"session_id": f"{agent}-1", "cwd": str(payments_dir), **payload}
    if agent == "gemini" and "absolute_path" in body.get("tool_input", {}):
        body["tool_input"] = {"absolute_path": str(payments_dir / "core" / "payments.py")}
    done = run_hook(hook_env, native, body, agent=agent)
    assert done.returncode == 0 and done.stderr == ""
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == native
    want = {"session-start": "pinned", "prompt": "prompt", "before-tool": "gotcha", "after-tool": "gotcha"}[event]
    # Codex gets plain text ("#12 [GOTCHA] ..."), Gemini Markdown ("[#12]"), both citable by id
    assert re.search(rf'(?:#|id="){memories[want]}\b', out["additionalContext"]), out["additionalContext"]


def test_service_answers_over_a_private_socket(hook_env: dict[str, str], payments_dir: Path, data_dir: Path,
                                               memories: dict[str, int]) -> None:
    from desktop.agents.hooks.client import socket_path

    env = {k: v for k, v in hook_env.items() if k != "ENGRAM_HOOK_NO_SERVICE"}
    server = subprocess.Popen(["engram", "serve", "--data-dir", str(data_dir), "--idle", "20", "--no-warm-search"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        path = socket_path(data_dir)
        for _ in range(200):
            if path.exists():
                break
            subprocess.run(["sleep", "0.1"], check=False)
        assert path.exists()
        assert (path.stat().st_mode & 0o777) == 0o600 and (path.parent.stat().st_mode & 0o777) == 0o700
        payload = {"session_id": "svc-1", "cwd": str(payments_dir), "hook_event_name": "UserPromptSubmit",
                   "prompt": "Is the refund webhook handler idempotent?"}
        done = run_hook(env, "prompt", payload)
        assert f'id=\\"{memories["prompt"]}\\"' in done.stdout
        log = (data_dir / "logs" / "hooks.log").read_text(encoding="utf-8")
        assert "opened project" in log.split("hook service listening")[1]  # the service opened it, not the hook
    finally:
        server.terminate()
        server.wait(10)


def test_first_hook_starts_the_service_which_stops_when_idle(hook_env: dict[str, str], payments_dir: Path,
                                                              data_dir: Path, memories: dict[str, int]) -> None:
    import time

    from desktop.agents.hooks.client import socket_path

    env = {k: v for k, v in hook_env.items() if k != "ENGRAM_HOOK_NO_SERVICE"}
    env["ENGRAM_SERVE_IDLE"] = "4"
    payload = {"session_id": "auto-1", "cwd": str(payments_dir), "hook_event_name": "UserPromptSubmit",
               "prompt": "Is the refund webhook handler idempotent?"}
    first = run_hook(env, "prompt", payload)
    assert f'id=\\"{memories["prompt"]}\\"' in first.stdout  # answered inline while the service starts
    path = socket_path(data_dir)
    deadline = time.monotonic() + 30
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert path.exists()
    second = run_hook(env, "prompt", {**payload, "session_id": "auto-2"})
    assert f'id=\\"{memories["prompt"]}\\"' in second.stdout
    deadline = time.monotonic() + 40
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not path.exists()  # idle: the service stopped and removed its socket


def test_context_the_cli_prepends_is_not_the_prompt(project: Any, memories: dict[str, int]) -> None:
    """Gemini CLI's first prompt carries the folder tree in <session_context>: not what the user asked."""
    h = Handlers(project)
    prompt = ("<session_context>\nThis is the Gemini CLI. Folder: core/payments.py charge refunds.py refund webhook"
              " handler idempotent\n</session_context>\nRename the landing page CSS classes")
    assert h.handle(call(project, "prompt", agent="gemini", prompt=prompt)) == ""


def test_session_start_knows_uncommitted_files_and_the_branch(project: Any, memories: dict[str, int]) -> None:
    root = project.info.root
    subprocess.run(["git", "checkout", "-q", "-b", "fix/refund-webhook"], cwd=root, check=True)
    (root / "core" / "payments.py").write_text("def charge(amount):\n    return round(amount * 100)\n",
                                               encoding="utf-8")
    text = Handlers(project).handle(call(project, "session-start", source="startup"))
    assert "fix/refund-webhook" in text and f'id="{memories["gotcha"]}"' in text  # the changed file's gotcha
    # No task yet: nothing "relevant to the task" is guessed from the branch name (issue 25).
    assert f'id="{memories["prompt"]}"' not in text
    assert f'id="{memories["candidate"]}"' not in text


def test_a_prompt_hears_a_taught_recipe_not_one_agents_found_unaided(project: Any,
                                                                     memories: dict[str, int]) -> None:
    found = project.memories.add(NewMemory(content="Build the refund service with `make refund-build`.",
                                           type="workflow_recipe", source="observer_inferred",
                                           confidence=0.95)).result(10).id
    taught = project.memories.add(NewMemory(content="Deploy the refund service with `make refund-deploy`.",
                                            type="workflow_recipe", source="user_taught",
                                            confidence=0.9)).result(10).id
    h = Handlers(project)
    text = h.handle(call(project, "prompt", prompt="how do I build and deploy the refund service?"))
    assert f'id="{taught}"' in text and f'id="{found}"' not in text


def test_a_prompt_does_not_hear_what_it_already_says(project: Any, memories: dict[str, int]) -> None:
    """The repository's name is news to a prompt about its pull requests, not to one that links it."""
    repo = project.memories.add(NewMemory(content="The project's repository is `acme/shop` on github.com.",
                                          type="note", source="user_taught", confidence=0.9)).result(10).id
    h = Handlers(project)
    linked = h.handle(call(project, "prompt", prompt="did we miss this comment? https://github.com/acme/shop/pull/7"))
    assert f'id="{repo}"' not in linked
    asked = h.handle(call(project, "prompt", session_id="s-2", prompt="which github repository do we open the pull "
                                                                       "request against?"))
    assert f'id="{repo}"' in asked


def test_a_prompt_does_not_hear_a_fact_read_from_the_environment(project: Any, memories: dict[str, int]) -> None:
    """The repository's name read from `git remote` is the agent's to read again: not volunteered at a
    prompt whose words match its wording, and still found by a search for it."""
    read = project.memories.add(NewMemory(
        content="The project's repository is `acme/shop` on github.com.", type="note", source="observer_inferred",
        confidence=0.95, metadata={"signal": "project_fact", "signal_key": "project_fact:repo:github.com/acme/shop",
                                   "promoted_on": "command_outcome"})).result(10).id
    h = Handlers(project)
    asked = h.handle(call(project, "prompt", prompt="which github repository do we open the pull request against?"))
    assert f'id="{read}"' not in asked
    assert read in project.search.search("github repository acme shop", limit=5).ids
