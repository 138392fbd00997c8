"""Warnings before a tool call, and what happened after each one (issue 25).

:func:`warnings_for` is the one implementation every door asks (the hooks of Claude Code,
Codex and Gemini CLI; Engram's own agent): the live lessons whose trigger matches the call
about to run, most specific first. :class:`Outcomes` keeps, per session, each warning said and
whether the warned failure happened anyway later in that session, which is how the product
measures whether it helps (``engram report``, the Agents tab): counted, never estimated.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from desktop.memory.observer.run_parts import selects_part
from desktop.memory.observer.signal_kinds import (
    ASKED_TESTS,
    CHECK_GAP,
    CHECK_RULE,
    COMMAND_FIX,
    ERROR_FIX,
    PROJECT_FACT,
    REJECTED_FLAG,
    REVIEWED_TESTS,
    SHELL_ESCAPE,
    SHELL_STRAY,
    TOOL_ARGS,
    WRONG_PLACE,
)
from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.stats import wilson_interval
from desktop.memory.store.writer import FnOp, Tx
from desktop.memory.text.lazy_re import lazy
from desktop.memory.triggers.index import candidates
from desktop.memory.triggers.model import CODE, COMMAND, EDIT, PATH, TOOL, WRITE_TRIGGERS, CallShape, Trigger, matches
from desktop.memory.types import Memory

MAX_WARNINGS: Final = 2
#: One said lesson is one line of at most this many characters (every door cuts it there).
LINE_CHARS: Final = 320
#: The signals whose lesson is "this exact command shape fails": a call of that shape may be
#: refused outright (by an agent that can only refuse, not add context), since it would fail.
EXACT_FAILURE_SIGNALS: Final = frozenset({COMMAND_FIX})
WARNED, AVOIDED, REPEATED, DECLINED = "warned", "avoided", "repeated", "declined"
#: Lessons about what a checker reports (a lint rule and how this project satisfies it): said when
#: the checker has just reported that rule, never before each run of the checker, most of which
#: never meet it (two blind judges found them noise there: said ~280 times in 100 sessions).
REPORTED_SIGNALS: Final = frozenset({CHECK_RULE})
#: Lessons about a check that passes while a stronger one fails ("`make test` passing is not
#: enough"): the moment is right after the weaker check passed, when the agent is about to call the
#: work done, not before each run of it (judged noise there: said before every test run).
AFTER_PASS_SIGNALS: Final = frozenset({CHECK_GAP})
#: Lessons said only before a call: a refused flag's lesson, after the refusal, restates the program's
#: own error (two blind judges, round 19: useful before the call, useless after it). A tool argument's
#: lesson fires on the call's arguments, so before the call it was already said, and after a failure
#: for another reason (the user declining it for something else) it is beside the point.
BEFORE_ONLY_SIGNALS: Final = frozenset({REJECTED_FLAG, TOOL_ARGS})
#: Lessons learned from a failure. Each is said at its own moment (its trigger, or the failure it
#: knows), never because a prompt shares words with it: at prompts, blind judges found them said
#: where nothing was about to fail (a test-suite reminder 38 times, a layout lesson 30 times).
LESSON_SIGNALS: Final = frozenset({COMMAND_FIX, CHECK_RULE, CHECK_GAP, WRONG_PLACE, ERROR_FIX, ASKED_TESTS,
                                   REVIEWED_TESTS, SHELL_STRAY, SHELL_ESCAPE, REJECTED_FLAG, TOOL_ARGS})
#: Lessons about the tests an agent writes: said before an edit that declares new test cases, not before
#: an update of the tests there. Blind judges (rounds 9-14, sessions 0-99) found the user's review quotes
#: useful where new tests were being written and useless before renames, fixed expectations and moved
#: paths (about one useful saying in six when said before any edit adding lines to a test file).
ADDING_SIGNALS: Final = frozenset({REVIEWED_TESTS})
#: A checker's rule code at the start of its message ("G104: Errors unhandled"): a linter that
#: groups many rules under one name (gosec) is matched by the code, not the name.
_RULE_CODE: Final = lazy(r'reports `[^`]+`: "([A-Z]{1,5}\d{2,5})\b')
#: A checker rule lesson's message, and its literal parts (instance details were made "…" and "N").
_REPORTED_MESSAGE: Final = lazy(r'reports `[^`]+`: "(.+?)"(?:;|\.$)')
_INSTANCE_MARK: Final = lazy(r"…|\bN\b")
MESSAGE_PART_MIN: Final = 12


@dataclass(frozen=True, slots=True)
class Warning:
    """One lesson to say before a call."""

    memory: Memory
    trigger: Trigger

    @property
    def exact(self) -> bool:
        """True when the call has the exact shape of a command that failed, or gives a tool the value it
        refused (it would fail again), so an agent that can only refuse a call may refuse it."""
        signal = self.memory.metadata.get("signal")
        if self.trigger.kind == TOOL:  # a refused value, not an argument left out (that one may pass)
            return (signal == TOOL_ARGS and bool(self.trigger.tokens) and not self.trigger.unless
                    and not self.memory.metadata.get("declined"))
        return self.trigger.kind == COMMAND and bool(self.trigger.tokens) and signal in EXACT_FAILURE_SIGNALS


def _specificity(trig: Trigger) -> int:
    """How narrowly a trigger names the call: exact tokens, then paths, then a file kind."""
    if trig.kind == COMMAND:
        return 3 + len(trig.tokens) + len(trig.words)
    if trig.kind == PATH:
        return 3 + trig.path.count("/")
    if trig.kind == EDIT and trig.path:
        return 2 + trig.path.count("/")
    if trig.kind in (CODE, TOOL):
        return 3
    return 1


def reported_rule(memory: Memory) -> str | None:
    """The checker's rule a lesson is about (``nilerr``, ``E501``), None for any other lesson."""
    if memory.metadata.get("signal") not in REPORTED_SIGNALS:
        return None
    parts = str(memory.metadata.get("signal_key") or "").split(":")
    return parts[1] if len(parts) > 1 and parts[1] else None


def is_lesson(memory: Memory) -> bool:
    """True for a lesson learned from a failure, said only at its own moment (not at a prompt)."""
    return memory.metadata.get("signal") in LESSON_SIGNALS


def found_unaided(memory: Memory) -> bool:
    """A recipe the observer learned from agents' own successful runs: an agent found it without
    help, so it is not volunteered (at a session start or a prompt; two blind judges found it useless
    at both), only given when an agent asks for a recipe."""
    return memory.type == "workflow_recipe" and memory.source == "observer_inferred"


def read_from_environment(memory: Memory) -> bool:
    """A fact the observer read from a command's outcome (a missing Docker, a required variable; in a
    database from before they stopped being learned, the repository, the shell, a pinned version): an
    agent reads it again in one command, and a prompt matches its wording by accident
    ("The project's repository is …" shares "project" and "repository" with any request), so it is
    not volunteered at a prompt (two blind judge pairs: 11 of 11 such sayings useless); search and
    MCP give it when asked."""
    return memory.metadata.get("signal") == PROJECT_FACT and memory.metadata.get("promoted_on") == "command_outcome"


def fits_moment(memory: Memory, output: str | None, *, passed: bool = False,
                trigger: Trigger | None = None, part: bool = False) -> bool:
    """Whether a matched lesson is for this moment.

    ``output`` is what the call printed (None before a call); ``passed``: the call succeeded;
    ``trigger``: the one that matched; ``part``: the call ran one part of the project
    (``run_parts.selects_part``). A checker's rule fits right after the checker reported it (its code
    too, when it has one), and before an edit writes the construct it flagged; a check-gap lesson
    only right after the weaker check passed over the whole project (a focused run is an agent
    checking the unit it works on, not declaring the work done); a refused flag or a tool argument's
    lesson only before a call (after the refusal it says what the program just printed); every
    other lesson before a call or after a failure.
    """
    signal = memory.metadata.get("signal")
    if signal in AFTER_PASS_SIGNALS:
        return passed and not part
    if signal in BEFORE_ONLY_SIGNALS:
        return output is None
    if passed:
        return False
    if signal not in REPORTED_SIGNALS:
        return True
    if trigger is not None and trigger.kind == CODE:
        return True  # an edit writing the construct (its output is never the checker's report)
    rule = reported_rule(memory)
    if output is None or rule is None or rule.lower() not in output.lower():
        return False
    code = _RULE_CODE.search(memory.content)
    if code is not None:
        return code.group(1) in output
    # A checker that groups many checks under one name (gocritic's ifElseChain, appendAssign…):
    # the lesson is about its message, not every report of the name (blind judge: said after three
    # other gocritic checks).
    message = _REPORTED_MESSAGE.search(memory.content)
    parts = _INSTANCE_MARK.split(message.group(1)) if message is not None else []
    longest = max((" ".join(p.split()).strip(" :;,") for p in parts), key=len, default="")
    return len(longest) < MESSAGE_PART_MIN or longest.lower() in output.lower()


def warnings_for(conn: Any, memories: Any, call: CallShape, root: Path | None, *,
                 exclude: Iterable[int] = (), limit: int = MAX_WARNINGS, output: str | None = None,
                 passed: bool = False) -> list[Warning]:
    """Lessons whose trigger matches ``call`` (not in ``exclude``), most specific first.

    ``conn`` is a read connection, ``memories`` the project's MemoryService (``get_many``).
    Only live memories that are not candidates, flagged or stale can fire (the index's join).
    ``output`` is what the call printed, after it ran (None before), ``passed`` whether it
    succeeded: see :func:`fits_moment`.
    """
    matched = _matched(conn, memories, call, root, exclude)
    # Which part of the project the call ran is read only for a check gap that matched (most calls
    # that pass match none: the hot path after a call).
    part = passed and call.command is not None and any(
        w.memory.metadata.get("signal") in AFTER_PASS_SIGNALS for w in matched) and any(
        selects_part(seg.text()) for seg in call.command.segments if not seg.piped)
    ranked = sorted((w for w in matched
                     if fits_moment(w.memory, output, passed=passed, trigger=w.trigger, part=part)),
                    key=lambda w: (-_specificity(w.trigger), -w.memory.confidence, w.memory.id))
    return _one_per_flag(_not_told(ranked, root))[:limit]


def _not_told(ranked: list[Warning], root: Path | None) -> list[Warning]:
    """Leave out a check gap whose stronger check the project's agent instructions already give
    (``known_already``); the instruction files are read only when a gap is about to be said."""
    def gap(w: Warning) -> bool:
        return w.memory.metadata.get("signal") in AFTER_PASS_SIGNALS

    if root is None or not any(gap(w) for w in ranked):
        return ranked
    from desktop.memory.observer.known_already import instructions, stronger_check_told

    told = instructions(root)
    return [w for w in ranked if not (gap(w) and stronger_check_told(str(w.memory.metadata.get("signal_key") or ""),
                                                                      told))]


def _matched(conn: Any, memories: Any, call: CallShape, root: Path | None,
             exclude: Iterable[int] = ()) -> list[Warning]:
    """Every live lesson whose trigger matches ``call``, with its most specific matching trigger, for
    whatever moment (a lesson about adding tests only when the call adds some)."""
    skip = set(exclude)
    best: dict[int, Trigger] = {}
    for armed in candidates(conn, call):
        if armed.memory_id in skip or not matches(armed.trigger, call, root):
            continue
        known = best.get(armed.memory_id)
        if known is None or _specificity(armed.trigger) > _specificity(known):
            best[armed.memory_id] = armed.trigger
    if not best:
        return []
    found = memories.get_many(list(best))
    return [Warning(found[i], t) for i, t in best.items() if i in found
            and (call.adds_tests or found[i].metadata.get("signal") not in ADDING_SIGNALS)]


def _one_per_flag(ranked: list[Warning]) -> list[Warning]:
    """A refused flag's lesson is left out when another lesson about the same program and flag fires
    too (a command-fix lesson also says what worked)."""
    said = {(w.trigger.key, t) for w in ranked if w.trigger.kind == COMMAND
            and w.memory.metadata.get("signal") != REJECTED_FLAG for t in w.trigger.tokens}
    return [w for w in ranked if not (w.memory.metadata.get("signal") == REJECTED_FLAG
                                      and any((w.trigger.key, t) in said for t in w.trigger.tokens))]


class Outcomes:
    """The ``warning_outcomes`` rows of one project database."""

    def __init__(self, db: Any) -> None:
        """``db`` is the project's Database (writer and read pool)."""
        self.db = db

    def warned(self, session_id: str, agent: str, memory_ids: Iterable[int], call_id: str, call: str) -> Any:
        """Record warnings just said before the call ``call_id`` (a memory warned again in the
        session keeps its first row)."""
        ids = list(dict.fromkeys(int(i) for i in memory_ids))
        said = redact_then_cut(call, 300)  # redact first: a cut can keep half a secret

        def write(tx: Tx) -> int:
            tx.conn.executemany(
                "INSERT OR IGNORE INTO warning_outcomes(session_id, agent, memory_id, warned_at, call_id, call) "
                "VALUES (?,?,?,?,?,?)", [(session_id, agent, i, tx.now, call_id[:200], said) for i in ids])
            return len(ids)
        return self.db.writer.submit(FnOp("record_warnings", write))

    def repeated(self, session_id: str, memory_ids: Iterable[int], call_id: str) -> Any:
        """The warned failure happened anyway, in a later call than the one warned about (the
        warned call itself ran before its agent could read the warning)."""
        return self._decide(session_id, memory_ids, call_id, REPEATED)

    def _decide(self, session_id: str, memory_ids: Iterable[int], call_id: str, outcome: str) -> Any:
        """Close this session's open warnings about ``memory_ids`` with ``outcome``, from a later call."""
        ids = sorted({int(i) for i in memory_ids})

        def write(tx: Tx) -> int:
            if not ids:
                return 0
            marks = ",".join("?" * len(ids))
            return len(tx.execute(
                f"UPDATE warning_outcomes SET outcome = ?, decided_at = ? WHERE session_id = ? AND outcome = ? "
                f"AND call_id <> ? AND memory_id IN ({marks}) RETURNING id",
                (outcome, tx.now, session_id, WARNED, call_id, *ids)).fetchall())
        return self.db.writer.submit(FnOp(f"record_warning_{outcome}", write))

    @staticmethod
    def _advice_declined(memories: Any, call: CallShape, open_ids: set[int]) -> list[int]:
        """The open warnings whose lesson recommends the command the user just declined to let run."""
        from desktop.memory.observer.contradictions import declines_advice

        if call.command is None:
            return []
        line = " && ".join(seg.text() for seg in call.command.segments)
        found = memories.get_many(sorted(open_ids))
        return [i for i, m in found.items() if declines_advice(line, str(m.metadata.get("signal_key") or ""))]

    def failed_again(self, memories: Any, call: CallShape, root: Path | None, output: str, session_id: str,
                     call_id: str) -> Any | None:
        """A failed call matching a lesson this session was warned about: the warning did not help.
        Every door calls this after a failure. Returns the writer's future, None when nothing was open."""
        open_ids = set(self.open_ids(session_id))
        if not open_ids:
            return None
        # Imported here: the utterance rules (cues in nine languages) cost a hook process that
        # answers a tool call inline ~10 ms, and only a failure with a warning open needs them.
        from desktop.memory.observer.utterances import declined_call

        declined = declined_call(output)
        refused = self._advice_declined(memories, call, open_ids) if declined else []
        if refused:  # the user said no to what the warning recommended: that, not a failure, is its outcome
            return self._decide(session_id, refused, call_id, DECLINED)
        # One match of the call. A lesson said only before a call (a refused flag, a tool's argument)
        # counts by the call alone (the moment filter would never let it match after one); one the user
        # declined repeats when the user declines again, not when the tool fails for a reason of its own.
        # A failed edit wrote nothing: it is not the warned construct or change happening anyway.
        hit = [w.memory.id for w in _matched(self.db.reads.conn(), memories, call, root)
               if w.memory.id in open_ids and w.trigger.kind not in WRITE_TRIGGERS
               and (fits_moment(w.memory, output, trigger=w.trigger)
                    or (w.memory.metadata.get("signal") in BEFORE_ONLY_SIGNALS
                        and (declined or not w.memory.metadata.get("declined"))))]
        # A checker's rule said before the construct was written has no trigger on the checker's run
        # (fixed by a rewrite, its moment is the writing): the checker reporting it again is its repeat.
        rest = sorted(open_ids - set(hit))
        hit += [i for i, m in (memories.get_many(rest) if rest else {}).items()
                if reported_rule(m) is not None and fits_moment(m, output)]
        return self.repeated(session_id, hit, call_id) if hit else None

    def close(self, session_id: str) -> Any:
        """The session ended: warnings whose failure never came back count as avoided."""
        def write(tx: Tx) -> int:
            return len(tx.execute(
                "UPDATE warning_outcomes SET outcome = ?, decided_at = ? WHERE session_id = ? AND outcome = ? "
                "RETURNING id", (AVOIDED, tx.now, session_id, WARNED)).fetchall())
        return self.db.writer.submit(FnOp("close_warnings", write))

    def rearmed(self, session_id: str) -> set[int]:
        """Lessons whose warned failure came back in this session and that were said only once:
        their trigger firing again may say them once more (never a third time). Not a user's habit:
        its repeat is the user saying it, and the agent has just heard it from them (blind judges
        found its second saying useless)."""
        rows = self.db.reads.conn().execute(
            "SELECT o.memory_id FROM warning_outcomes o JOIN memories m ON m.id = o.memory_id "
            "WHERE o.session_id = ? AND o.outcome = ? AND "
            "coalesce(json_extract(m.metadata, '$.signal'), '') NOT IN (?, ?) AND "
            "(SELECT count(*) FROM external_injections e WHERE e.session_id = o.session_id "
            "AND e.memory_id = o.memory_id) <= 1", (session_id, REPEATED, ASKED_TESTS, REVIEWED_TESTS)).fetchall()
        return {int(r[0]) for r in rows}

    def open_ids(self, session_id: str) -> list[int]:
        """Memories warned about in this session whose outcome is still open."""
        rows = self.db.reads.conn().execute(
            "SELECT memory_id FROM warning_outcomes WHERE session_id = ? AND outcome = ?",
            (session_id, WARNED)).fetchall()
        return [int(r[0]) for r in rows]


@dataclass(frozen=True)
class OutcomeReport:
    """Warned / avoided / repeated, counted over decided warnings, with the sessions they span."""

    warned: int
    avoided: int
    repeated: int
    open: int
    sessions: int
    by_memory: list[tuple[int, int, int, int]]  # (memory id, warned, avoided, repeated), most warned first
    by_agent: list[tuple[str, int, int, int]] = field(default_factory=list)  # (agent, warned, avoided, repeated)
    declined: int = 0  # the user declined to run what the warning recommended

    @property
    def decided(self) -> int:
        """Warnings whose session has shown what followed: avoided, repeated, or the user declined
        what it recommended (which counts against it: nothing was avoided)."""
        return self.avoided + self.repeated + self.declined

    def avoided_interval(self) -> tuple[float, float]:
        """The 95 % Wilson interval of the avoided share of decided warnings."""
        return wilson_interval(self.avoided, self.decided)


def outcome_report(conn: Any, *, limit: int = 10) -> OutcomeReport:
    """What the warnings did, from the product's own records."""
    row = conn.execute(
        "SELECT count(*), sum(outcome = ?), sum(outcome = ?), sum(outcome = ?), count(DISTINCT session_id), "
        "sum(outcome = ?) FROM warning_outcomes", (AVOIDED, REPEATED, WARNED, DECLINED)).fetchall()[0]
    per = conn.execute(
        "SELECT memory_id, count(*), sum(outcome = ?), sum(outcome = ?) FROM warning_outcomes "
        "GROUP BY memory_id ORDER BY count(*) DESC, memory_id LIMIT ?", (AVOIDED, REPEATED, limit)).fetchall()
    agents = conn.execute(
        "SELECT agent, count(*), sum(outcome = ?), sum(outcome = ?) FROM warning_outcomes "
        "GROUP BY agent ORDER BY count(*) DESC, agent", (AVOIDED, REPEATED)).fetchall()
    return OutcomeReport(int(row[0] or 0), int(row[1] or 0), int(row[2] or 0), int(row[3] or 0), int(row[4] or 0),
                         [(int(m), int(n), int(a or 0), int(r or 0)) for m, n, a, r in per],
                         [(str(g), int(n), int(a or 0), int(r or 0)) for g, n, a, r in agents], int(row[5] or 0))
