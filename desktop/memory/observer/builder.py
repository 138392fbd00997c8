"""Turn importer observations into events with consistent steps, keys and timing.

Every importer has the same chores: open a session once, number model steps, close
the previous step when a new one begins, pair tool results with their calls (for the
tool name and the duration), cap big texts, and end the session. ``SessionTrack``
does them once so the importers only translate their format.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from desktop.memory.observer.events import (
    AgentEvent,
    Reasoning,
    SessionEnd,
    SessionStart,
    StepComplete,
    ToolCall,
    ToolResult,
    UserMessage,
    cap_args,
    cap_text,
)
from desktop.memory.observer.records import ImportResult
from desktop.memory.observer.tool_names import (
    BASH,
    canonical_tool,
    classify_shell,
    file_paths_of,
    normalize_args,
)

logger = logging.getLogger("engram.observer")


@dataclass(slots=True)
class _Pending:
    tool: str
    step: int
    timestamp: float


@dataclass(slots=True)
class SessionTrack:
    """Per-session state while one transcript is translated into events."""

    out: ImportResult
    session_id: str
    agent: str
    cwd: str = ""
    branch: str | None = None
    session_type: str = "interactive"
    parent_session_id: str | None = None
    step: int = 0
    step_open: bool = False
    step_marker: str | None = None
    last_ts: float = 0.0
    started: bool = False
    ended: bool = False
    outcome: str = "unknown"
    timed: bool = True  # False when the format has no real clock (durations unknown)
    pending: dict[str, _Pending] = field(default_factory=dict)

    # -- helpers ---------------------------------------------------------------
    def _key(self, rid: str, suffix: str) -> str:
        return f"{self.session_id}#{rid}#{suffix}"

    def _ts(self, ts: float | None) -> float:
        """Use the record's time; a record without one inherits the last known."""
        if ts is not None:
            # Clocks in transcripts can step backwards a little; the session's "now"
            # (used for records without a time and for StepComplete) never does.
            self.last_ts = max(self.last_ts, ts)
            return ts
        return self.last_ts

    def _emit(self, event: AgentEvent) -> None:
        self.out.events.append(event)

    # -- lifecycle ---------------------------------------------------------------
    def start(self, ts: float | None) -> None:
        """Emit SessionStart once, at the session's first timestamped record."""
        if self.started:
            return
        stamp = self._ts(ts)
        self.started = True
        if self.session_id not in self.out.sessions:
            self.out.sessions.append(self.session_id)
        self._emit(SessionStart(
            self.session_id, self.agent, self.cwd, self.branch, self.session_type, stamp,
            self.parent_session_id, event_key=f"{self.session_id}#start"))

    def begin_step(self, ts: float | None, marker: str | None = None) -> int:
        """Enter a model step. With a marker, the same marker continues the step.

        Without a marker, a step that is already open continues; callers close it
        with ``boundary()`` when a tool result or user message arrives.
        """
        self.start(ts)
        if self.step_open and (marker is None or marker == self.step_marker):
            return self.step
        self.close_step()
        self.step += 1
        self.step_open = True
        self.step_marker = marker
        return self.step

    def boundary(self) -> None:
        """Mark that the next agent output belongs to a new step (no marker formats)."""
        if self.step_marker is None and self.step_open:
            self.close_step()

    def close_step(self) -> None:
        """Emit StepComplete for the open step, if any."""
        if self.step_open:
            self.step_open = False
            self._emit(StepComplete(self.session_id, self.step, self.last_ts,
                                    event_key=f"{self.session_id}#step{self.step}#done"))

    def end(self, ts: float | None = None, outcome: str | None = None) -> None:
        """Close the open step and emit SessionEnd (once)."""
        if self.ended or not self.started:
            return
        stamp = self._ts(ts)
        self.close_step()
        self.ended = True
        self._emit(SessionEnd(self.session_id, outcome or self.outcome, stamp,
                              event_key=f"{self.session_id}#end"))

    # -- content -------------------------------------------------------------------
    def user_message(self, ts: float | None, rid: str, text: str, suffix: str = "user", *,
                     origin: str = "prompt") -> None:
        """A user prompt; it always ends the agent's current step (a queued message or a
        correction typed while the agent works does not: the turn goes on)."""
        self.start(ts)
        if origin == "prompt":
            self.close_step()
        self._emit(UserMessage(self.session_id, self.step, cap_text(text), self._ts(ts),
                               event_key=self._key(rid, suffix), origin=origin))

    def reasoning(self, ts: float | None, rid: str, text: str, kind: str, suffix: str,
                  marker: str | None = None) -> None:
        """Agent prose inside the current (or a new) step."""
        step = self.begin_step(ts, marker)
        self._emit(Reasoning(self.session_id, step, cap_text(text), self._ts(ts), kind,
                             event_key=self._key(rid, suffix)))

    def tool_call(self, ts: float | None, rid: str, call_id: str, raw_tool: str,
                  args: dict[str, Any], *, marker: str | None = None, tool: str | None = None,
                  workdir: str | None = None, suffix: str = "call") -> str:
        """Emit a ToolCall; returns the canonical tool name.

        Shell calls are run through the read-only classifier so ``cat x`` counts as
        a Read of ``x``.
        """
        step = self.begin_step(ts, marker)
        canonical = tool or canonical_tool(self.agent, raw_tool)
        if canonical == BASH:
            canonical, norm = classify_shell(args)
        else:
            norm = normalize_args(canonical, args)
        paths = file_paths_of(canonical, norm, self.cwd, workdir=workdir)
        stamp = self._ts(ts)
        self.pending[call_id] = _Pending(canonical, step, stamp)
        self._emit(ToolCall(self.session_id, step, call_id, canonical, raw_tool, cap_args(norm),
                            paths, stamp, event_key=self._key(rid, suffix)))
        self.out.stats["tool_calls"] += 1
        return canonical

    def tool_result(self, ts: float | None, rid: str, call_id: str, output: str, is_error: bool,
                    *, duration_ms: int | None = None, suffix: str = "result") -> None:
        """Emit a ToolResult paired with its call (for tool name, step and duration)."""
        self.start(ts)
        stamp = self._ts(ts)
        call = self.pending.pop(call_id, None)
        if call is None:
            # The call is in another file or before a compaction cut; keep the result.
            self.out.stats["orphan_results"] += 1
            tool, step = "Other", self.step
        else:
            tool, step = call.tool, call.step
            if duration_ms is None and self.timed and ts is not None and stamp >= call.timestamp:
                duration_ms = round((stamp - call.timestamp) * 1000)
        self._emit(ToolResult(self.session_id, step, call_id, tool, cap_text(output), bool(is_error),
                              duration_ms, stamp, event_key=self._key(rid, suffix)))
        self.out.stats["tool_results"] += 1
        if is_error:
            self.out.stats["tool_errors"] += 1
        self.boundary()
