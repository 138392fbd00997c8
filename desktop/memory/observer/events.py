"""One event model for every agent Engram watches.

Claude Code, Codex, Gemini CLI and Engram's own agent all speak different
transcript dialects; the importers translate each into these frozen dataclasses so
the signal detectors downstream only ever see one vocabulary.

Every event carries an ``event_key``: a string that is identical every time the same
transcript record is imported (it is built from the session id and the record's
uuid or line number, never from a counter that depends on import order). The store
uses it to make re-importing a file idempotent. Events built by live code (Engram's
own agent) may leave it empty; ``__post_init__`` then derives one from the fields
that identify the event.

Timestamps are float seconds since the Unix epoch (UTC).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

# Re-exported: the importers and the agent cap their events' texts through this module.
from desktop.memory.observer.capping import CUT_MARGIN as CUT_MARGIN
from desktop.memory.observer.capping import OUTPUT_CAP as OUTPUT_CAP
from desktop.memory.observer.capping import cap_args as cap_args
from desktop.memory.observer.capping import cap_text as cap_text

AgentName: TypeAlias = Literal["claude-code", "codex", "gemini-cli", "engram"]
Outcome: TypeAlias = Literal["success", "failure", "abandoned", "unknown"]
ReasoningKind: TypeAlias = Literal["thinking", "text"]

AGENTS: Final[tuple[str, ...]] = ("claude-code", "codex", "gemini-cli", "engram")
OUTCOMES: Final[tuple[str, ...]] = ("success", "failure", "abandoned", "unknown")


def _fill_key(event: Any, *parts: object) -> None:
    """Derive an event_key from identifying fields when the producer gave none."""
    if not event.event_key:
        key = "#".join(str(p) for p in parts)
        object.__setattr__(event, "event_key", key)


@dataclass(frozen=True, slots=True)
class SessionStart:
    """A session (or a subagent's child session) began."""

    session_id: str
    agent: str
    cwd: str
    branch: str | None
    session_type: str
    started_at: float
    parent_session_id: str | None = None
    event_key: str = ""

    def __post_init__(self) -> None:
        _fill_key(self, self.session_id, "start")


@dataclass(frozen=True, slots=True)
class UserMessage:
    """A prompt typed by the user (or handed to a subagent by its parent).

    ``origin`` says how it reached the agent: ``prompt`` (typed at the prompt), ``queued``
    (typed while the agent worked and handed to the running turn), ``memory_note`` (a ``#``
    note or ``/memory add``) or ``correction`` (typed when declining a tool call).
    """

    session_id: str
    step: int
    text: str
    timestamp: float
    event_key: str = ""
    origin: str = "prompt"

    def __post_init__(self) -> None:
        _fill_key(self, self.session_id, "user", self.step, self.timestamp)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """The agent asked for a tool. ``tool`` is canonical, ``raw_tool`` the agent's name.

    ``args`` holds the agent's own arguments plus, where the importer could derive
    them, canonical keys (``file_path``, ``pattern``, ``path``, ``command``, ``url``,
    ``query``) so detectors need not know each agent's argument names.
    """

    session_id: str
    step: int
    call_id: str
    tool: str
    raw_tool: str
    args: dict[str, Any]
    file_paths: tuple[str, ...]
    timestamp: float
    event_key: str = ""

    def __post_init__(self) -> None:
        _fill_key(self, self.session_id, "call", self.call_id)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool finished. ``output`` is capped at OUTPUT_CAP characters."""

    session_id: str
    step: int
    call_id: str
    tool: str
    output: str
    is_error: bool
    duration_ms: int | None
    timestamp: float
    event_key: str = ""

    def __post_init__(self) -> None:
        _fill_key(self, self.session_id, "result", self.call_id)


@dataclass(frozen=True, slots=True)
class Reasoning:
    """Agent prose: hidden thinking (``kind="thinking"``) or visible text (``"text"``).

    Both matter: self-correction and dead-end phrases show up in either.
    """

    session_id: str
    step: int
    text: str
    timestamp: float
    kind: str = "text"
    event_key: str = ""

    def __post_init__(self) -> None:
        _fill_key(self, self.session_id, "reasoning", self.step, self.timestamp)


@dataclass(frozen=True, slots=True)
class StepComplete:
    """One model turn (one model response and the tools it ran) finished."""

    session_id: str
    step: int
    timestamp: float
    event_key: str = ""

    def __post_init__(self) -> None:
        _fill_key(self, self.session_id, "step", self.step)


@dataclass(frozen=True, slots=True)
class SessionEnd:
    """The transcript ended. Outcome is ``unknown`` unless the format states it."""

    session_id: str
    outcome: str
    ended_at: float
    event_key: str = ""

    def __post_init__(self) -> None:
        _fill_key(self, self.session_id, "end")


AgentEvent: TypeAlias = (
    SessionStart | UserMessage | ToolCall | ToolResult | Reasoning | StepComplete | SessionEnd
)

#: Event classes in the order detectors usually dispatch on them (handy for tests).
EVENT_TYPES: Final[tuple[type, ...]] = (
    SessionStart, UserMessage, ToolCall, ToolResult, Reasoning, StepComplete, SessionEnd,
)

