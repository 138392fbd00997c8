"""The provider-neutral conversation vocabulary of Engram's own agent.

Every provider translates to and from these dataclasses, so the session loop,
the injection tiers and the tests never see a vendor's wire format.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, Self

Role = Literal["system", "user", "assistant", "tool"]
#: How injected memory is formatted for the model family (design 001 section 15).
AgentFormat = Literal["xml", "markdown", "plain"]


@dataclass
class ToolCallRequest:
    """One tool call the model asked for."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class ChatMessage:
    """One message of the conversation."""

    role: Role
    content: str = ""
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None  # the tool's name on role="tool" messages


@dataclass
class ToolSpec:
    """A tool offered to the model: name, description and a JSON-schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]

    def json_schema(self) -> dict[str, Any]:
        """The parameters schema with the object wrapper every API expects."""
        return {"type": "object", **self.parameters} if "type" not in self.parameters else self.parameters


@dataclass
class AssistantTurn:
    """One complete model answer: visible text, hidden thinking, and tool calls."""

    text: str = ""
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    thinking: str = ""
    stop_reason: str = ""
    input_tokens: int = 0
    output_tokens: int = 0


TextSink = Callable[[str], None]


class ClosingProvider:
    """``with make_provider(...) as provider:``: the provider's HTTP connections close on leaving.

    Providers hold an HTTP client with pooled sockets; whoever builds one closes it when
    the session or service that used it ends (an unclosed socket is a ResourceWarning).
    """

    def close(self) -> None:
        """Release HTTP connections (nothing to release here)."""

    def __enter__(self) -> Self:
        """The provider itself."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the provider."""
        self.close()


class Provider(Protocol):
    """A chat model with tool calling. Implementations must be usable from any one thread."""

    name: str
    model: str
    agent_format: AgentFormat
    context_window: int

    def chat(self, messages: list[ChatMessage], tools: list[ToolSpec], *,
             on_text: TextSink | None = None, cancel: Any | None = None) -> AssistantTurn:
        """Send the conversation, stream text to ``on_text``, return the whole turn.

        Raises an ``AgentError`` subclass (stable code) when the provider is down,
        refuses the key, or answers something that is not its protocol.
        """
        ...

    def close(self) -> None:
        """Release HTTP connections."""
        ...


def format_for_model(model: str, provider: str) -> AgentFormat:
    """XML for Claude models, Markdown for Gemini, plain text for everything else."""
    low = f"{provider}:{model}".lower()
    if "claude" in low or provider == "anthropic":
        return "xml"
    if "gemini" in low:
        return "markdown"
    return "plain"
