"""Ollama chat with tool calls and streaming, through the official ``ollama`` client."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import ollama

from desktop.agents.errors import (
    ModelNotFound,
    ProviderBadResponse,
    ProviderHTTPError,
    ProviderStreamBroken,
    ProviderUnavailable,
)
from desktop.agents.messages import (
    AssistantTurn,
    ChatMessage,
    ClosingProvider,
    TextSink,
    ToolCallRequest,
    ToolSpec,
    format_for_model,
)

log = logging.getLogger("engram.agents")


def to_ollama_messages(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    """Our messages in Ollama's /api/chat shape (tool results as role=tool)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        d: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            d["tool_calls"] = [{"function": {"name": c.name, "arguments": c.arguments}} for c in m.tool_calls]
        if m.role == "tool" and m.name:
            d["tool_name"] = m.name
        out.append(d)
    return out


class OllamaProvider(ClosingProvider):
    """A model served by Ollama (local or remote)."""

    name = "ollama"

    def __init__(self, model: str, *, host: str = "http://127.0.0.1:11434", timeout: float = 300.0,
                 context_window: int = 32_768, options: dict[str, Any] | None = None) -> None:
        """Connect lazily to ``host``; nothing is sent until the first chat."""
        self.model = model
        self.host = host
        self.context_window = context_window
        self.agent_format = format_for_model(model, "ollama")
        self.options = options or {}
        self._client = ollama.Client(host=host, timeout=timeout)
        self._calls = 0

    def chat(self, messages: list[ChatMessage], tools: list[ToolSpec], *,
             on_text: TextSink | None = None, cancel: Any | None = None) -> AssistantTurn:
        """Stream one turn; tool calls arrive in the chunks (usually the last one)."""
        specs = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                   "parameters": t.json_schema()}} for t in tools]
        turn = AssistantTurn()
        text: list[str] = []
        thinking: list[str] = []
        got_done = False
        try:
            stream = self._client.chat(model=self.model, messages=to_ollama_messages(messages),
                                       tools=specs or None, stream=True, options=self.options or None)
            for chunk in stream:
                if cancel is not None and cancel.is_set():
                    break
                msg = chunk.message
                if msg.content:
                    text.append(msg.content)
                    if on_text:
                        on_text(msg.content)
                if getattr(msg, "thinking", None):
                    thinking.append(msg.thinking or "")
                for call in msg.tool_calls or []:
                    self._calls += 1
                    args = call.function.arguments
                    if isinstance(args, str):  # some models send a JSON string
                        args = json.loads(args or "{}")
                    turn.tool_calls.append(ToolCallRequest(f"call_{self._calls}", call.function.name,
                                                           dict(args or {})))
                if chunk.done:
                    got_done = True
                    turn.stop_reason = chunk.done_reason or "stop"
                    turn.input_tokens = int(chunk.prompt_eval_count or 0)
                    turn.output_tokens = int(chunk.eval_count or 0)
        except ConnectionError as exc:
            raise ProviderUnavailable(f"Ollama is not reachable at {self.host}.", detail=str(exc)) from exc
        except httpx.ConnectError as exc:
            raise ProviderUnavailable(f"Ollama is not reachable at {self.host}.", detail=str(exc)) from exc
        except httpx.TimeoutException as exc:
            raise ProviderUnavailable(f"Ollama at {self.host} did not answer in time.", detail=str(exc)) from exc
        except ollama.ResponseError as exc:
            if exc.status_code == 404:
                raise ModelNotFound(f"Ollama has no model {self.model!r}; pull it first.",
                                    detail=str(exc)) from exc
            if exc.status_code == -1:  # an error object inside the stream
                raise ProviderBadResponse(f"Ollama reported an error: {exc.error}", detail=str(exc)) from exc
            raise ProviderHTTPError(f"Ollama answered HTTP {exc.status_code}.", status=exc.status_code,
                                    detail=str(exc)) from exc
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.StreamError) as exc:
            raise ProviderStreamBroken("Ollama closed the connection mid-answer.", detail=str(exc)) from exc
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            # json.JSONDecodeError is a ValueError; pydantic validation errors are ValueErrors too.
            raise ProviderBadResponse("Ollama answered something that is not its chat protocol.",
                                      detail=str(exc)) from exc
        if not got_done and not (cancel is not None and cancel.is_set()):
            raise ProviderStreamBroken("Ollama's answer ended before it was complete.")
        turn.text, turn.thinking = "".join(text), "".join(thinking)
        return turn

    def list_models(self) -> list[str]:
        """Names of the models the server has (for the settings UI)."""
        try:
            return [m.model or "" for m in self._client.list().models]
        except (ConnectionError, httpx.HTTPError) as exc:
            raise ProviderUnavailable(f"Ollama is not reachable at {self.host}.", detail=str(exc)) from exc

    def close(self) -> None:
        """Close the HTTP client."""
        inner = getattr(self._client, "_client", None)
        if inner is not None:
            inner.close()
