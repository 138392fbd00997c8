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

AgentName: TypeAlias = Literal["claude-code", "codex", "gemini-cli", "engram"]
Outcome: TypeAlias = Literal["success", "failure", "abandoned", "unknown"]
ReasoningKind: TypeAlias = Literal["thinking", "text"]

AGENTS: Final[tuple[str, ...]] = ("claude-code", "codex", "gemini-cli", "engram")
OUTCOMES: Final[tuple[str, ...]] = ("success", "failure", "abandoned", "unknown")

#: Tool outputs, arguments and long texts are capped at this many characters. Some
#: agents log multi-megabyte command outputs; signal detectors need the gist (the
#: head) and the verdict (the tail, where errors and exit codes usually are).
OUTPUT_CAP: Final[int] = 20_000


#: How far past a cut the text is redacted before cutting: a secret that straddles the cut
#: (a database URL whose ``@`` lies past it, a PEM block) is still whole in this window.
CUT_MARGIN: Final[int] = 4096


def cap_text(text: str, limit: int = OUTPUT_CAP) -> str:
    """Return ``text`` unchanged if short, else its head and tail around a marker.

    The tail is kept because compilers, test runners and shells print their verdict
    last; a head-only cut would throw away exactly the error a detector looks for.
    Both parts are redacted before they are cut (with :data:`CUT_MARGIN` of the text
    beyond each cut), so a cut never leaves the half of a secret the scanner needs whole.
    """
    if len(text) <= limit:
        return text
    from desktop.memory.privacy.secrets import redact

    head = (limit * 3) // 4
    tail = limit - head
    dropped = len(text) - head - tail
    first = redact(text[:head + CUT_MARGIN])[0][:head]
    last = redact(text[-(tail + CUT_MARGIN):])[0][-tail:]
    return f"{first}\n[... {dropped} characters truncated by Engram ...]\n{last}"


def cap_args(args: dict[str, Any], limit: int = OUTPUT_CAP) -> dict[str, Any]:
    """Return a copy of tool arguments with every long string value capped.

    A ``Write`` call carries the whole file as an argument; keeping megabytes of it
    per event would blow the observer's memory budget for no detection value.
    """
    out: dict[str, Any] = {}
    for key, value in args.items():
        if isinstance(value, str):
            out[key] = cap_text(value, limit)
        elif isinstance(value, dict):
            out[key] = cap_args(value, limit)
        elif isinstance(value, list):
            out[key] = [cap_text(v, limit) if isinstance(v, str) else v for v in value]
        else:
            out[key] = value
    return out


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

