"""Crafted event sequences for observer tests (a tiny session script builder)."""

from __future__ import annotations

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
)
from desktop.memory.observer.observer import Observer, SessionDigest


class Seq:
    """Builds one session's events step by step."""

    def __init__(self, sid: str = "s1", session_type: str = "interactive", *, parent: str | None = None,
                 t0: float = 1_700_000_000.0) -> None:
        self.sid = sid
        self.t = t0
        self.step = 0
        self.n = 0
        self.events: list[AgentEvent] = [SessionStart(sid, "claude-code", "/proj", None, session_type, t0, parent)]

    def _tick(self, dt: float = 1.0) -> float:
        self.t += dt
        return self.t

    def user(self, text: str, origin: str = "prompt") -> Seq:
        self.events.append(UserMessage(self.sid, self.step, text, self._tick(), origin=origin))
        return self

    def call(self, tool: str, files: tuple[str, ...] = (), output: str = "ok", error: bool = False,
             duration_ms: int | None = 100, raw: str | None = None, **args: Any) -> Seq:
        self.step += 1
        self.n += 1
        cid = f"c{self.n}"
        if files and "file_path" not in args:
            args["file_path"] = files[0]
        self.events.append(ToolCall(self.sid, self.step, cid, tool, raw or tool, args, files, self._tick()))
        self.events.append(ToolResult(self.sid, self.step, cid, tool, output, error, duration_ms, self._tick()))
        self.events.append(StepComplete(self.sid, self.step, self.t))
        return self

    def read(self, path: str, output: str = "content") -> Seq:
        return self.call("Read", (path,), output)

    def edit(self, path: str) -> Seq:
        return self.call("Edit", (path,))

    def write(self, path: str) -> Seq:
        return self.call("Write", (path,))

    def bash(self, command: str, output: str = "ok", error: bool = False, duration_ms: int = 100) -> Seq:
        return self.call("Bash", (), output, error, duration_ms, command=command)

    def think(self, text: str, kind: str = "thinking") -> Seq:
        self.step += 1
        self.events.append(Reasoning(self.sid, self.step, text, self._tick(), kind))
        self.events.append(StepComplete(self.sid, self.step, self.t))
        return self

    def idle(self, steps: int) -> Seq:
        """Steps that touch nothing (to move the step counter)."""
        for _ in range(steps):
            self.step += 1
            self.events.append(StepComplete(self.sid, self.step, self._tick()))
        return self

    def end(self, outcome: str = "unknown") -> list[AgentEvent]:
        self.events.append(SessionEnd(self.sid, outcome, self._tick()))
        return self.events


def digest_of(events: list[AgentEvent]) -> SessionDigest:
    """Observe every event and finalize."""
    obs = Observer(events[0].session_id)
    for ev in events:
        obs.observe(ev)
    return obs.finalize()


def kinds(digest: SessionDigest) -> dict[str, list[Any]]:
    """Signals by kind."""
    out: dict[str, list[Any]] = {}
    for s in digest.signals:
        out.setdefault(s.kind, []).append(s)
    return out
