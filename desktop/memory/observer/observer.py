"""The Observer: watches one session's events and hands a digest to promotion at the end.

``observe`` is the hot path, called for every event of every agent: it dispatches
to a detector that does constant work on the scratchpad, measures itself, and
never touches the database or raises. ``finalize`` runs the session-level
detectors (bounded scans of the capped scratchpad) and returns a
:class:`SessionDigest`: the signals plus the facts cross-session learning needs.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from desktop.memory.observer import (
    asked_tests,
    detectors,
    hook_blocks,
    lessons,
    prose_lessons,
    rejected_flags,
    tool_arguments,
    type_clashes,
)
from desktop.memory.observer.continuation import MAX_PRINTS, event_print
from desktop.memory.observer.events import (
    AgentEvent,
    Reasoning,
    SessionEnd,
    SessionStart,
    StepComplete,
    ToolCall,
    ToolResult,
    UserMessage,
)
from desktop.memory.observer.evidence import SessionEvidence, build_evidence, collect
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.signals import (
    BACKTRACK,
    CO_ACCESS,
    CONFIG_TOUCH,
    DEAD_END,
    FILE_ACCESS,
    READ_ABANDON,
    SEQUENCE,
    STEP_OVERRUN,
    TEST_ORDER,
    TIME_ANOMALY,
    Signal,
    excerpt,
    is_test_file,
)
from desktop.memory.privacy.boundary import redact_then_cut

logger = logging.getLogger("engram.observer")

BUDGET_MS: Final = 2.0
CHECKPOINT_EVERY_STEPS: Final = 10
DEAD_END_MIN_SPAN: Final = 20
DEAD_END_DIVERGENCE: Final = 0.6
SEQUENCE_LEN: Final = 4

Checkpointer = Callable[[str, bytes], None]


@dataclass
class SessionDigest:
    """What one finished session taught: signals plus facts for cross-session state."""

    session_id: str
    agent: str
    session_type: str
    outcome: str
    cwd: str
    started_at: float
    ended_at: float
    first_prompt: str
    steps: int
    events: int
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    pairs: list[tuple[str, str, int, float, bool]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    searches: list[str] = field(default_factory=list)
    sequences: list[str] = field(default_factory=list)
    signals: list[Signal] = field(default_factory=list)
    external_step: int | None = None
    early: dict[str, float] = field(default_factory=dict)
    evicted: int = 0
    parent_session_id: str | None = None
    removed: list[str] = field(default_factory=list)
    """Paths, folders or rm globs the session deleted (and did not re-create)."""
    moved: list[tuple[str, str]] = field(default_factory=list)
    """(old, new) renames, in order."""
    evidence: SessionEvidence | None = None
    """What the session showed (user messages, commands, errors, edits), for model synthesis."""
    prints: list[str] = field(default_factory=list)
    """Prints of its user messages and tool calls (``continuation``): a copy of them is this session."""
    succeeded: list[str] = field(default_factory=list)
    """The shell commands that ran fine (redacted): they retire lessons saying such a command fails."""
    tool_calls_ok: list[list[str]] = field(default_factory=list)
    """Calls of non-shell tools that went through (the tool's name, then its arguments): they retire
    lessons saying the tool refused one of those values."""
    unused_suppressions: list[str] = field(default_factory=list)
    """The rules a checker reported a suppression annotation did not need: they retire lessons that
    recommend that annotation."""
    declined: list[list[str]] = field(default_factory=list)
    """Shell commands the user declined to let run, each with the words they typed (or ''): a lesson
    recommending one of them waits for the user's review."""


class Observer:
    """One session's observer. Feed it events with ``observe``; call ``finalize`` at the end."""

    def __init__(self, session_id: str = "", *, scratchpad: Scratchpad | None = None,
                 checkpointer: Checkpointer | None = None,
                 checkpoint_every: int = CHECKPOINT_EVERY_STEPS) -> None:
        """Start fresh, or continue from a restored ``scratchpad`` (after a crash)."""
        self.sp = scratchpad or Scratchpad(session_id)
        self.checkpointer = checkpointer
        self.checkpoint_every = checkpoint_every
        self.outcome = "unknown"
        self.ended_at: float = 0.0
        self.ended = False
        self.slow_events = 0
        self._steps_since_checkpoint = 0

    @property
    def session_id(self) -> str:
        """The observed session's id."""
        return self.sp.session_id

    def observe(self, event: AgentEvent) -> None:
        """Process one event in constant time. Never raises: a bad event is logged and dropped."""
        start = time.perf_counter()
        sp = self.sp
        sp.events += 1
        try:
            collect(sp.evidence, event)
            if isinstance(event, (ToolCall, UserMessage)):
                prints = sp.ev.setdefault("prints", [])
                if len(prints) < MAX_PRINTS:
                    prints.append(event_print(event))
            if isinstance(event, ToolCall):
                detectors.on_tool_call(sp, event)
                hook_blocks.on_call(sp, event)
            elif isinstance(event, ToolResult):
                detectors.on_tool_result(sp, event)
            elif isinstance(event, Reasoning):
                detectors.on_reasoning(sp, event)
            elif isinstance(event, StepComplete):
                self._on_step(event)
            elif isinstance(event, UserMessage):
                sp.prompts += 1
                prose_lessons.on_user(sp, event)
                asked_tests.on_user(sp, event)
                if not sp.first_prompt and event.text.strip():
                    sp.first_prompt = redact_then_cut(event.text, 2000)  # redact first, then cut
            elif isinstance(event, SessionStart):
                self._on_start(event)
            elif isinstance(event, SessionEnd):
                self.outcome = event.outcome
                self.ended_at = event.ended_at
                self.ended = True
            if sp.events % 512 == 0:
                sp.trim_maps()
        except Exception:  # the agent loop always wins: never let a detector break it
            logger.exception("observer dropped a %s event", type(event).__name__)
        elapsed = (time.perf_counter() - start) * 1000
        if elapsed > BUDGET_MS:
            self.slow_events += 1
            logger.debug("observe() over budget: %.2f ms for %s", elapsed, type(event).__name__)

    def _on_start(self, ev: SessionStart) -> None:
        sp = self.sp
        if not sp.session_id:
            sp.session_id = ev.session_id
        sp.agent, sp.session_type, sp.cwd = ev.agent, ev.session_type, ev.cwd
        sp.started_at, sp.parent_session_id = ev.started_at, ev.parent_session_id

    def _on_step(self, ev: StepComplete) -> None:
        self.sp.step = max(self.sp.step, ev.step)
        self._steps_since_checkpoint += 1
        if self.checkpointer is not None and self._steps_since_checkpoint >= self.checkpoint_every:
            self.checkpoint()

    def checkpoint(self) -> bytes:
        """Serialise the scratchpad (a subtask boundary) and hand it to the checkpointer."""
        self._steps_since_checkpoint = 0
        blob = self.sp.to_state()
        if self.checkpointer is not None:
            try:
                self.checkpointer(self.sp.session_id, blob)
            except Exception:
                logger.exception("scratchpad checkpoint failed for %s", self.sp.session_id)
        return blob

    # -- session end ---------------------------------------------------------------------
    def finalize(self, outcome: str | None = None) -> SessionDigest:
        """Run the session-level detectors and return the digest (no database access)."""
        sp = self.sp
        for glob in list(sp.globs):
            detectors._judge_glob(sp, glob)
        sp.globs.clear()
        self._finalize_files()
        self._finalize_sequences()
        self._finalize_calibration()
        self._finalize_dead_ends()
        self._finalize_time_anomalies()
        rejected_flags.finalize(sp)
        type_clashes.finalize(sp)
        hook_blocks.finalize(sp)
        files = {p: {"reads": f.reads, "edits": f.edits, "first_step": f.first_step,
                     "last_step": f.last_step, "created": f.created} for p, f in sp.files.items()}
        pairs = [(a, b, int(v[0]), v[1] / v[0], v[2] >= 0.8 * v[0] or v[2] <= 0.2 * v[0])
                 for (a, b), v in sp.pairs.items() if v[0] > 0]
        errors = [{"fingerprint": fp, "tool": e.tool, "message": e.message, "count": e.count,
                   "first_step": e.first_step, "resolved_how": e.resolved_how, "command": e.command,
                   "fix_files": list(e.fix_files)} for fp, e in sp.errors.items()]
        proof = build_evidence(sp.evidence, session_id=sp.session_id, agent=sp.agent, cwd=sp.cwd,
                               files=files, errors=errors)
        return SessionDigest(
            sp.session_id, sp.agent, sp.session_type, outcome or self.outcome, sp.cwd, sp.started_at,
            self.ended_at or sp.started_at, sp.first_prompt, sp.step, sp.events, files, pairs, errors,
            list(sp.grep_counts), self._ngrams(), list(sp.signals.values()), sp.external_step,
            dict(sp.early), sp.evicted, sp.parent_session_id, list(sp.removed),
            [(old, new) for old, new in sp.moved], evidence=proof, prints=list(sp.ev.get("prints", [])),
            succeeded=list(sp.ev.get("ok", [])), unused_suppressions=list(sp.ev.get("unused", [])),
            tool_calls_ok=list(sp.ev.get(tool_arguments.WENT_THROUGH, [])),
            declined=list(sp.ev.get(lessons.DECLINED_CALLS, [])))

    def _finalize_files(self) -> None:
        sp = self.sp
        ranked = sorted(sp.files.items(), key=lambda kv: kv[1].first_step)
        for path, st in ranked[:40]:
            if st.created:
                continue
            sp.add_signal(Signal(FILE_ACCESS, f"{FILE_ACCESS}:{path}", st.first_step, [path],
                                 {"reads": st.reads, "edits": st.edits, "first_step": st.first_step}))
            if st.reads >= 3 and st.edits == 0:
                sp.add_signal(Signal(READ_ABANDON, f"{READ_ABANDON}:{path}", st.last_step, [path],
                                     {"reads": st.reads}, [f"{path} read {st.reads} times, never edited"]))
        top = sorted(sp.pairs.items(), key=lambda kv: -kv[1][0])[:30]
        for (a, b), v in top:
            if v[0] >= 2:
                sp.add_signal(Signal(CO_ACCESS, f"{CO_ACCESS}:{a}|{b}", 0, [a, b],
                                     {"count": int(v[0]), "step_delta": v[1] / v[0]}))
        if sp.config_touched and len(sp.edit_set) >= 2:
            for cfg in sorted(sp.config_touched)[:3]:
                others = sorted(p for p in sp.edit_set if p != cfg)[:4]
                if others:
                    sp.add_signal(Signal(CONFIG_TOUCH, f"{CONFIG_TOUCH}:{cfg}", sp.files[cfg].last_step
                                         if cfg in sp.files else 0, [cfg, *others], {"config": cfg}))

    def _ngrams(self) -> list[str]:
        seq = self.sp.sequence
        grams = Counter(" > ".join(seq[i:i + SEQUENCE_LEN]) for i in range(len(seq) - SEQUENCE_LEN + 1))
        return [g for g, _ in grams.most_common(40)]

    def _finalize_sequences(self) -> None:
        seq = self.sp.sequence
        grams = Counter(tuple(seq[i:i + SEQUENCE_LEN]) for i in range(len(seq) - SEQUENCE_LEN + 1))
        for gram, n in grams.most_common(5):
            if n >= 2:
                label = " > ".join(gram)
                self.sp.add_signal(Signal(SEQUENCE, f"{SEQUENCE}:{label}", 0, [], {"sequence": list(gram),
                                                                                    "count": n}))

    def _finalize_calibration(self) -> None:
        sp = self.sp
        if sp.first_test_step is not None and sp.first_impl_edit_step is not None:
            first = sp.first_test_step <= sp.first_impl_edit_step
            sp.add_signal(Signal(TEST_ORDER, f"{TEST_ORDER}:{'first' if first else 'after'}",
                                 sp.first_impl_edit_step, [p for p in sp.files if is_test_file(p)][:3],
                                 {"tests_first": first}))
        if sp.planned_steps and sp.step / sp.planned_steps > 1.2:
            sp.add_signal(Signal(STEP_OVERRUN, f"{STEP_OVERRUN}:{sp.session_type}", sp.step, [],
                                 {"planned": sp.planned_steps, "actual": sp.step}))

    def _finalize_dead_ends(self) -> None:
        """The backtrack-divergence filter: a long-explored branch followed by different files."""
        sp = self.sp
        for sig in sp.signals_of(BACKTRACK):
            start, reedit = int(sig.data["branch_start"]), int(sig.data["reedit_step"])
            if reedit - start < DEAD_END_MIN_SPAN:
                continue
            pre = {f for s, f in sp.access_log if start <= s < reedit}
            post = {f for s, f in sp.access_log if reedit < s <= reedit + (reedit - start)}
            if not pre or not post:
                continue
            divergence = 1 - len(pre & post) / max(len(pre), len(post))
            if divergence > DEAD_END_DIVERGENCE:
                path = sig.data["file"]
                sp.add_signal(Signal(DEAD_END, f"{DEAD_END}:backtrack:{path}", reedit, [path],
                                     {"origin": "backtrack", "divergence": round(divergence, 2),
                                      "span": reedit - start, "abandoned": sorted(pre - post)[:5]},
                                     [excerpt(f"explored {len(pre)} files for {reedit - start} steps, "
                                              f"then switched to {len(post - pre)} others")]))

    def _finalize_time_anomalies(self) -> None:
        """Time anomalies only matter when they coincide with an error or a backtrack."""
        sp = self.sp
        backtracked = {f for s in sp.signals_of(BACKTRACK) for f in s.files}
        for sig in sp.signals_of(TIME_ANOMALY):
            if not sig.data.get("error") and not (set(sig.files) & backtracked):
                del sp.signals[sig.key]
