"""T3 tool-result augmentation and T4 the step-injection decider (design 004 section 4.3).

T4 runs before every step and returns at most one injection, from the first of
three triggers that fires:

1. the agent just read or edited files that have gotchas / dead ends / known
   errors it has not been shown yet;
2. the agent recorded something with record_memory since the last step (it is
   reflected back so the rest of the session can use it at once);
3. a recent Grep/Glob searched for something a memory already answers.

A memory is never injected twice in one session (one ``injected`` set shared with
T1 and T3). Step injections are capped per step and per session; once the
session budget is spent only dead ends still get through (highest value).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from desktop.agents.injection.budget import Allocation
from desktop.agents.injection.formatting import Section, fit, render
from desktop.memory.text.tokens import count_tokens
from desktop.memory.types import Memory

RECENT_STEPS = 3


@dataclass
class RecentCall:
    """A tool call of a recent step, as the decider needs it."""

    step: int
    tool: str
    args: dict[str, Any]
    files: list[str]


@dataclass
class Injection:
    """One injection: which tier/trigger, the text and the memories it carries."""

    tier: str  # t3 | t4
    trigger: str  # gotcha_injection | scratchpad_reflection | search_short_circuit | tool_result
    content: str
    memory_ids: list[int] = field(default_factory=list)
    tokens: int = 0


@dataclass
class InjectionState:
    """Per-session bookkeeping shared by every tier."""

    injected: set[int] = field(default_factory=set)
    step_tokens: int = 0
    log: list[Injection] = field(default_factory=list)
    decide_ms: list[float] = field(default_factory=list)
    augment_ms: list[float] = field(default_factory=list)
    dead_end_files: dict[str, set[int]] = field(default_factory=dict)
    touched: dict[str, None] = field(default_factory=dict)  # files read/edited so far, in order
    untested: str = ""  # the first code file changed since the last test edit (triggers/untested)


class StepInjectionDecider:
    """Decides T4 injections and produces T3 augmentations for one session."""

    def __init__(self, memory: Any, fmt: str, state: InjectionState | None = None,
                 notes: Any | None = None, phase: str | None = None) -> None:
        """``memory`` is a MemoryAccess; ``notes`` the session's record_memory scratchpad;
        ``phase`` the session's phase (memory searches rank with it)."""
        self.memory = memory
        self.phase = phase
        self.fmt = fmt
        self.state = state or InjectionState()
        self.notes = notes
        self.recent: deque[RecentCall] = deque(maxlen=32)
        self._notes_seen = 0

    def note_call(self, call: RecentCall) -> None:
        """Remember a tool call for the triggers (called by the session loop)."""
        self.recent.append(call)
        if call.tool in ("Read", "Edit", "Write"):
            for f in call.files:
                self.state.touched.setdefault(f, None)

    @property
    def touched_files(self) -> list[str]:
        """Files the agent has read or edited so far this session, first touch first."""
        return list(self.state.touched)

    def _remember_dead_ends(self, mems: list[Memory]) -> None:
        for m in mems:
            if m.type == "dead_end":
                for f in m.related_files:
                    self.state.dead_end_files.setdefault(f, set()).add(m.id)

    def _emit(self, inj: Injection) -> Injection:
        self.state.injected.update(inj.memory_ids)
        self.state.log.append(inj)
        return inj

    # -- T3 ------------------------------------------------------------------------------
    def warn(self, tool: str, args: dict[str, Any], files: list[str], *, output: str | None = None,
             failed: bool = False, raw_tool: str = "") -> Injection | None:
        """Lessons whose trigger this call matches (issue 25), given with its result like a hook's
        warning is in Claude Code; each once a session. After a call that succeeded (``output``),
        also what a passing check adds, as the hooks say it: one stronger check, and the user's
        habit of asking for tests when code changed with no test since. ``failed``: the call failed,
        its exit status or its output says so (the caller decides, as the hooks do: the core's
        ``untested.failed_unseen``). ``raw_tool``: the tool's own name (an MCP tool's arguments are
        what its lessons look at)."""
        started = time.perf_counter()
        try:
            # After a failure, a checker's rule fits when its report is in the output, as the hooks say it.
            mems = self.memory.warnings_for(tool, args, files, exclude=self.state.injected,
                                            output=output if failed else None, raw_tool=raw_tool)
            if output is not None and not failed:
                mems += self._after_success(tool, args, files, output, {*self.state.injected, *(m.id for m in mems)})
            # No lesson yet, but a look that misses where an earlier session's look missed too
            guess = "" if mems else self.memory.guess_note(tool, args, files)
            if not mems and not guess:
                return None
            text = render([Section("Learned from earlier sessions, about this call", mems)], self.fmt,
                          heading="Engram memory", hint=False) if mems else guess
            return self._emit(Injection("t3", "tool_result", text, [m.id for m in mems], count_tokens(text)))
        finally:
            self.state.augment_ms.append((time.perf_counter() - started) * 1000)

    def _after_success(self, tool: str, args: dict[str, Any], files: list[str], output: str,
                       exclude: set[int]) -> list[Memory]:
        from desktop.memory.observer.tool_names import command_text
        from desktop.memory.triggers.model import EDIT_TOOLS
        from desktop.memory.triggers.untested import check_passed, untested_after

        if tool in EDIT_TOOLS:
            self.state.untested = untested_after(self.state.untested, files)
            return []
        gaps = self.memory.warnings_for(tool, args, files, exclude=exclude, output=output, passed=True)[:1]
        command = args.get("command")
        if not self.state.untested or command is None or not check_passed(command_text(command), output):
            return list(gaps)
        return [*gaps, *self.memory.tests_habit(exclude=exclude | {m.id for m in gaps})]

    def augment(self, tool: str, files: list[str], alloc: Allocation) -> Injection | None:
        """Gotchas and dead ends for the file a Read/Edit just touched, appended to its result."""
        if tool not in ("Read", "Edit", "Write") or not files:
            return None
        started = time.perf_counter()
        try:
            mems = self.memory.gotchas_for(files, exclude=self.state.injected, limit=3)
            self._remember_dead_ends(mems)
            mems = fit(mems, alloc.augment_each)
            if not mems:
                return None
            text = render([Section(f"Memory about {files[0]}", mems)], self.fmt, heading="Engram memory",
                          hint=False)
            return self._emit(Injection("t3", "tool_result", text, [m.id for m in mems], count_tokens(text)))
        finally:
            self.state.augment_ms.append((time.perf_counter() - started) * 1000)

    # -- T4 ------------------------------------------------------------------------------
    def decide(self, step: int, alloc: Allocation) -> Injection | None:
        """The injection to add before ``step``, or None."""
        started = time.perf_counter()
        try:
            return self._decide(step, alloc)
        finally:
            self.state.decide_ms.append((time.perf_counter() - started) * 1000)

    def _decide(self, step: int, alloc: Allocation) -> Injection | None:
        recent = [c for c in self.recent if c.step >= step - RECENT_STEPS]
        exhausted = self.state.step_tokens >= alloc.step_total
        # Trigger 1: unseen gotchas for files just read or edited (last step only).
        touched = [f for c in recent if c.step == step - 1 and c.tool in ("Read", "Edit", "Write")
                   for f in c.files]
        if touched:
            mems = self.memory.gotchas_for(touched, exclude=self.state.injected, limit=4)
            self._remember_dead_ends(mems)
            if exhausted:
                mems = [m for m in mems if m.type == "dead_end"]
            mems = fit(mems, alloc.step_each)
            if mems:
                return self._step(Section("Relevant to the files you just opened", mems),
                                  "gotcha_injection", [m.id for m in mems])
        if exhausted:
            return None
        # Trigger 2: new record_memory entries since the last step.
        if self.notes is not None:
            notes = self.notes.all()
            fresh = notes[self._notes_seen:]
            self._notes_seen = len(notes)
            if fresh:
                lines = [f"({n.type}) {n.content[:400]}" for n in fresh[:5]]
                return self._step(Section("You recorded this session (keep it in mind)", lines=lines),
                                  "scratchpad_reflection", [])
        # Trigger 3: a recent search for something memory already knows.
        for c in [c for c in recent if c.tool in ("Grep", "Glob")][-RECENT_STEPS:]:
            pattern = str(c.args.get("pattern") or c.args.get("glob") or "")
            known = self.memory.known_for_pattern(pattern, exclude=self.state.injected,
                                                  touched_files=self.touched_files,
                                                  phase=self.phase) if pattern else None
            if known is not None and fit([known], alloc.step_each):
                return self._step(Section(f"You may already have the answer to your search for {pattern!r}",
                                          [known]), "search_short_circuit", [known.id])
        return None

    def _step(self, section: Section, trigger: str, ids: list[int]) -> Injection:
        text = render([section], self.fmt, heading="Engram memory", hint=False)
        tokens = count_tokens(text)
        self.state.step_tokens += tokens
        return self._emit(Injection("t4", trigger, text, ids, tokens))
