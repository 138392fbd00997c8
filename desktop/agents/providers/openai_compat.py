"""Any OpenAI-compatible chat-completions endpoint (OpenAI, LM Studio, vLLM, llama.cpp server).

Streaming SSE; tool-call arguments arrive as JSON string fragments keyed by index
and are assembled before the turn is returned.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx

from desktop.agents.errors import ProviderBadResponse, ProviderStreamBroken
from desktop.agents.messages import (
    AssistantTurn,
    ChatMessage,
    TextSink,
    ToolCallRequest,
    ToolSpec,
    format_for_model,
)
from desktop.agents.providers.sse import iter_sse, parse_json, streaming

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


class OpenAICompatProvider:
    """Chat completions with streaming and tool calls over plain httpx."""

    name = "openai"

    def __init__(self, model: str, *, base_url: str = "https://api.openai.com/v1", api_key: str | None = None,
                 timeout: float = 300.0, context_window: int = 128_000) -> None:
        """``api_key`` may be None for local servers that need none."""
        self.model = model
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
        who = f"The model server at {self.base_url}"
        with streaming(self._client, f"{self.base_url}/chat/completions", payload, self._headers,
                       who, self.model) as response:
            for _event, data in iter_sse(response):
                if cancel is not None and cancel.is_set():
                    finished = True
                    break
                if data.strip() == "[DONE]":
                    finished = True
                    break
                obj = parse_json(data, who)
                if "error" in obj:
                    raise ProviderBadResponse(f"{who} reported an error.", detail=str(obj["error"])[:300])
                usage = obj.get("usage") or {}
                turn.input_tokens = int(usage.get("prompt_tokens") or turn.input_tokens)
                turn.output_tokens = int(usage.get("completion_tokens") or turn.output_tokens)
                for choice in obj.get("choices") or []:
                    delta = choice.get("delta") or {}
                    if delta.get("content"):
                        text.append(delta["content"])
                        if on_text:
                            on_text(delta["content"])
                    for tc in delta.get("tool_calls") or []:
                        slot = calls.setdefault(int(tc.get("index", len(calls))), {"id": "", "name": "", "args": ""})
                        slot["id"] = tc.get("id") or slot["id"]
                        fn = tc.get("function") or {}
                        slot["name"] = fn.get("name") or slot["name"]
                        slot["args"] += fn.get("arguments") or ""
                    if choice.get("finish_reason"):
                        turn.stop_reason = choice["finish_reason"]
        if not finished and not turn.stop_reason:
            raise ProviderStreamBroken(f"{who} ended the stream before the answer was complete.")
        for idx in sorted(calls):
            slot = calls[idx]
            try:
                args = json.loads(slot["args"] or "{}")
            except ValueError as exc:
                raise ProviderBadResponse("The model sent tool arguments that are not JSON.",
                                          detail=slot["args"][:200]) from exc
            turn.tool_calls.append(ToolCallRequest(slot["id"] or f"call_{idx}", slot["name"], args))
        turn.text = "".join(text)
        return turn

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()
