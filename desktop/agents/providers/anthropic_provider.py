"""The Anthropic Messages API over httpx: streaming SSE with tool_use blocks."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx

from desktop.agents.errors import ProviderBadResponse, ProviderStreamBroken
from desktop.agents.messages import (
    AgentFormat,
    AssistantTurn,
    ChatMessage,
    ClosingProvider,
    TextSink,
    ToolCallRequest,
    ToolSpec,
)
from desktop.agents.providers.sse import get_json, is_json_body, iter_sse, not_a_stream, parse_json, streaming
from desktop.memory.privacy.boundary import redact_then_cut

log = logging.getLogger("engram.agents")

API_VERSION = "2023-06-01"


def to_anthropic(messages: list[ChatMessage]) -> tuple[str, list[dict[str, Any]]]:
    """System text and the messages list (tool results as user tool_result blocks)."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            system.append(m.content)
            continue
        if m.role == "tool":
            block = {"type": "tool_result", "tool_use_id": m.tool_call_id or "", "content": m.content}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)  # several results of one turn go in one message
            else:
                out.append({"role": "user", "content": [block]})
            continue
        if m.role == "assistant":
            blocks: list[dict[str, Any]] = []
            if m.content:
                blocks.append({"type": "text", "text": m.content})
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in m.tool_calls]
            out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": ""}]})
            continue
        out.append({"role": "user", "content": [{"type": "text", "text": m.content}]})
    return "\n\n".join(system), out


class AnthropicProvider(ClosingProvider):
    """Claude models through the Messages API."""

    name = "anthropic"
    agent_format: AgentFormat = "xml"

    def __init__(self, model: str, *, api_key: str, base_url: str = "https://api.anthropic.com",
                 max_tokens: int = 8192, timeout: float = 300.0, context_window: int = 200_000) -> None:
        """The key comes from the OS keyring (see providers.api_key_for)."""
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.max_tokens = max_tokens
        self.context_window = context_window
        self._headers = {"x-api-key": api_key, "anthropic-version": API_VERSION}
        self._client = httpx.Client(timeout=httpx.Timeout(timeout, connect=10.0))

    def chat(self, messages: list[ChatMessage], tools: list[ToolSpec], *,
             on_text: TextSink | None = None, cancel: Any | None = None) -> AssistantTurn:
        """Stream one turn."""
        system, msgs = to_anthropic(messages)
        payload: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens, "messages": msgs,
                                   "stream": True}
        if system:
            payload["system"] = system
        if tools:
            payload["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.json_schema()}
                                for t in tools]
        turn = AssistantTurn()
        blocks: dict[int, dict[str, Any]] = {}
        finished = False
        who = "The Anthropic API"
        junk: list[str] = []
        with streaming(self._client, f"{self.base_url}/v1/messages", payload, self._headers,
                       who, self.model) as response:
            if is_json_body(response):  # a proxy that ignores "stream": one complete message object
                finished = self._absorb_message(parse_json(response.read().decode("utf-8", "replace"), who),
                                                who, turn, blocks, on_text)
            else:
                for event, data in iter_sse(response, junk):
                    if cancel is not None and cancel.is_set():
                        finished = True
                        break
                    obj = parse_json(data, who)
                    kind = obj.get("type") or event
                    if kind == "error":
                        raise ProviderBadResponse(f"{who} reported an error.",
                                                  detail=redact_then_cut(str(obj.get("error")), 300))
                    if kind == "message_start":
                        usage = (obj.get("message") or {}).get("usage") or {}
                        turn.input_tokens = int(usage.get("input_tokens") or 0)
                    elif kind == "content_block_start":
                        blk = dict(obj.get("content_block") or {})
                        blk["_json"] = ""
                        blocks[int(obj.get("index", len(blocks)))] = blk
                    elif kind == "content_block_delta":
                        blk = blocks.setdefault(int(obj.get("index", 0)), {"type": "text", "text": "", "_json": ""})
                        delta = obj.get("delta") or {}
                        if delta.get("type") == "text_delta":
                            blk["text"] = blk.get("text", "") + delta.get("text", "")
                            if on_text:
                                on_text(delta.get("text", ""))
                        elif delta.get("type") == "input_json_delta":
                            blk["_json"] += delta.get("partial_json", "")
                        elif delta.get("type") == "thinking_delta":
                            blk["thinking"] = blk.get("thinking", "") + delta.get("thinking", "")
                    elif kind == "message_delta":
                        turn.stop_reason = (obj.get("delta") or {}).get("stop_reason") or turn.stop_reason
                        turn.output_tokens = int((obj.get("usage") or {}).get("output_tokens") or 0)
                    elif kind == "message_stop":
                        finished = True
        if not finished and not blocks and junk:
            raise not_a_stream(who, junk)
        if not finished:
            raise ProviderStreamBroken(f"{who} ended the stream before message_stop.")
        for idx in sorted(blocks):
            blk = blocks[idx]
            if blk.get("type") == "text":
                turn.text += blk.get("text", "")
            elif blk.get("type") == "thinking":
                turn.thinking += blk.get("thinking", "")
            elif blk.get("type") == "tool_use":
                try:
                    args = json.loads(blk["_json"]) if blk["_json"] else dict(blk.get("input") or {})
                except ValueError as exc:
                    raise ProviderBadResponse("Claude sent tool input that is not JSON.",
                                              detail=redact_then_cut(blk["_json"], 200)) from exc
                turn.tool_calls.append(ToolCallRequest(str(blk.get("id") or f"toolu_{idx}"),
                                                       str(blk.get("name") or ""), args))
        return turn

    @staticmethod
    def _absorb_message(obj: dict[str, Any], who: str, turn: AssistantTurn, blocks: dict[int, dict[str, Any]],
                        on_text: TextSink | None) -> bool:
        """Fold a complete (non-streamed) message object into the turn; True when it is one."""
        if obj.get("type") == "error" or "error" in obj:
            raise ProviderBadResponse(f"{who} reported an error.", detail=redact_then_cut(str(obj.get("error")), 300))
        if obj.get("type") != "message" or not isinstance(obj.get("content"), list):
            raise ProviderBadResponse(f"{who} answered JSON that is not a message.",
                                      detail=redact_then_cut(str(obj), 300))
        for idx, blk in enumerate(b for b in obj["content"] if isinstance(b, dict)):
            blocks[idx] = {**blk, "_json": ""}
            if blk.get("type") == "text" and on_text and blk.get("text"):
                on_text(blk["text"])
        usage = obj.get("usage") or {}
        turn.input_tokens = int(usage.get("input_tokens") or 0)
        turn.output_tokens = int(usage.get("output_tokens") or 0)
        turn.stop_reason = obj.get("stop_reason") or ""
        return True

    def list_models(self) -> list[str]:
        """Ids of the models the key can use (``GET /v1/models``, for the settings UI)."""
        obj = get_json(self._client, f"{self.base_url}/v1/models?limit=1000", self._headers, "The Anthropic API")
        return [str(m.get("id")) for m in obj.get("data") or [] if isinstance(m, dict) and m.get("id")]

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()
