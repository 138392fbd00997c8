"""Any OpenAI-compatible chat-completions endpoint (OpenAI, LM Studio, vLLM, llama.cpp server).

Streaming SSE; tool-call arguments arrive as JSON string fragments keyed by index
and are assembled before the turn is returned.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx

from desktop.agents.errors import (
    AgentError,
    MissingApiKey,
    ProviderAuthError,
    ProviderBadResponse,
    ProviderStreamBroken,
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
from desktop.agents.providers.sse import get_json, is_json_body, iter_sse, not_a_stream, parse_json, streaming
from desktop.memory.privacy.boundary import redact_then_cut

log = logging.getLogger("engram.agents")


def to_openai_messages(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    """Our messages in the chat-completions shape."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content})
            continue
        d: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            d["tool_calls"] = [{"id": c.id, "type": "function",
                                "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                               for c in m.tool_calls]
        out.append(d)
    return out


class OpenAICompatProvider(ClosingProvider):
    """Chat completions with streaming and tool calls over plain httpx."""

    name = "openai"

    def __init__(self, model: str, *, base_url: str = "https://api.openai.com/v1", api_key: str | None = None,
                 timeout: float = 300.0, context_window: int = 128_000, key_error: AgentError | None = None) -> None:
        """``api_key`` may be None for local servers that need none; ``key_error`` is why no key was
        found (no secure store, none stored), reported if the server then asks for one."""
        self.model = model
        self.key_error = key_error
        self.base_url = base_url.rstrip("/")
        self.context_window = context_window
        self.agent_format = format_for_model(model, "openai")
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=httpx.Timeout(timeout, connect=10.0))

    def chat(self, messages: list[ChatMessage], tools: list[ToolSpec], *,
             on_text: TextSink | None = None, cancel: Any | None = None) -> AssistantTurn:
        """Stream one turn."""
        payload: dict[str, Any] = {"model": self.model, "messages": to_openai_messages(messages), "stream": True,
                                   "stream_options": {"include_usage": True}}
        if tools:
            payload["tools"] = [{"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.json_schema()}} for t in tools]
        turn = AssistantTurn()
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        finished = False
        junk: list[str] = []
        who = f"The model server at {self.base_url}"
        try:
            with streaming(self._client, f"{self.base_url}/chat/completions", payload, self._headers,
                           who, self.model) as response:
                if is_json_body(response):  # a server that ignores "stream": one chat.completion object
                    self._absorb(parse_json(response.read().decode("utf-8", "replace"), who), who, turn,
                                 text, calls, on_text, streamed=False)
                    finished = True
                else:
                    for _event, data in iter_sse(response, junk):
                        if cancel is not None and cancel.is_set():
                            finished = True
                            break
                        if data.strip() == "[DONE]":
                            finished = True
                            break
                        self._absorb(parse_json(data, who), who, turn, text, calls, on_text, streamed=True)
        except ProviderAuthError as exc:
            if self._headers:
                raise
            raise self._no_key(who, exc) from exc
        if not finished and not turn.stop_reason and not calls and not text and junk:
            raise not_a_stream(who, junk)
        if not finished and not turn.stop_reason:
            raise ProviderStreamBroken(f"{who} ended the stream before the answer was complete.")
        for idx in sorted(calls):
            slot = calls[idx]
            try:
                args = json.loads(slot["args"] or "{}")
            except ValueError as exc:
                raise ProviderBadResponse("The model sent tool arguments that are not JSON.",
                                          detail=redact_then_cut(slot["args"], 200)) from exc
            turn.tool_calls.append(ToolCallRequest(slot["id"] or f"call_{idx}", slot["name"], args))
        turn.text = "".join(text)
        return turn

    @staticmethod
    def _absorb(obj: dict[str, Any], who: str, turn: AssistantTurn, text: list[str],
                calls: dict[int, dict[str, Any]], on_text: TextSink | None, *, streamed: bool) -> None:
        """Fold one chunk (or a whole non-streamed completion) into the turn being built."""
        if "error" in obj:
            raise ProviderBadResponse(f"{who} reported an error.", detail=redact_then_cut(str(obj["error"]), 300))
        usage = obj.get("usage") or {}
        turn.input_tokens = int(usage.get("prompt_tokens") or turn.input_tokens)
        turn.output_tokens = int(usage.get("completion_tokens") or turn.output_tokens)
        for choice in obj.get("choices") or []:
            delta = (choice.get("delta") if streamed else choice.get("message")) or {}
            if delta.get("content"):
                text.append(delta["content"])
                if on_text:
                    on_text(delta["content"])
            for tc in delta.get("tool_calls") or []:
                slot = calls.setdefault(int(tc.get("index", len(calls))), {"id": "", "name": "", "args": ""})
                slot["id"] = tc.get("id") or slot["id"]
                fn = tc.get("function") or {}
                slot["name"] = fn.get("name") or slot["name"]
                args = fn.get("arguments") or ""
                slot["args"] += args if isinstance(args, str) else json.dumps(args)
            if choice.get("finish_reason"):
                turn.stop_reason = choice["finish_reason"]

    def _no_key(self, who: str, exc: ProviderAuthError) -> AgentError:
        """The server wants a key and none was sent: say why there was none."""
        cause = self.key_error
        if cause is None:
            return MissingApiKey(f"{who} needs an API key and none is stored; add it in Settings.",
                                 detail=exc.detail)
        return type(cause)(f"{who} needs an API key, but none could be read: {cause}", detail=exc.detail)

    def list_models(self) -> list[str]:
        """Ids of the models the server offers (``GET /models``, for the settings UI)."""
        who = f"The model server at {self.base_url}"
        try:
            obj = get_json(self._client, f"{self.base_url}/models", self._headers, who)
        except ProviderAuthError as exc:
            if self._headers:
                raise
            raise self._no_key(who, exc) from exc
        return [str(m.get("id")) for m in obj.get("data") or [] if isinstance(m, dict) and m.get("id")]

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()
