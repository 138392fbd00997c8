"""A local fake OpenAI-compatible server speaking the real chat-completions protocol.

``POST /v1/chat/completions`` with ``stream: true`` answers SSE ``data: {chunk}``
lines: ``choices[0].delta.content`` pieces, ``delta.tool_calls`` fragments keyed
by ``index`` (the first carries ``id``, ``type`` and ``function.name``, the
following ones ``function.arguments`` in pieces), a final chunk with
``finish_reason`` "tool_calls" or "stop", a usage chunk (``stream_options``),
then ``data: [DONE]``. Without ``stream`` (or with a :class:`NonStreaming` plan)
it answers one ``chat.completion`` object. ``GET /v1/models`` lists the model.
``Authorization: Bearer <key>`` is checked (401 with OpenAI's error body), and
the conversation is validated like the real API does (every ``tool`` message
answers a ``tool_calls`` id of the assistant message before it).
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.agents.fake_sse import (
    BadJSON,
    Close,
    Die,
    FakeSSEServer,
    Garbage,
    NonStreaming,
    Recorded,
    SSEEvent,
    Status,
    StreamError,
    Turn,
    args_json,
    split,
)

MODEL = "gpt-fake-mini"


def openai_error(message: str, kind: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    """OpenAI's error body."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def validate(body: dict[str, Any]) -> str | None:
    """What the real API would reject in ``body`` (None when it is well formed)."""
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        return "'messages' must be a non-empty array"
    open_ids: set[str] = set()
    for i, m in enumerate(msgs):
        role = m.get("role")
        if role not in ("system", "user", "assistant", "tool"):
            return f"messages[{i}].role {role!r} is not valid"
        if role == "tool":
            if m.get("tool_call_id") not in open_ids:
                return (f"messages[{i}]: messages with role 'tool' must be a response to a preceding "
                        "message with 'tool_calls'")
            if not isinstance(m.get("content"), str):
                return f"messages[{i}].content must be a string"
            continue
        if role == "assistant":
            open_ids = set()
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function") or {}
                if tc.get("type") != "function" or not tc.get("id") or not fn.get("name"):
                    return f"messages[{i}].tool_calls needs id, type=function and function.name"
                if not isinstance(fn.get("arguments"), str):
                    return f"messages[{i}].tool_calls[].function.arguments must be a JSON string"
                json.loads(fn["arguments"])
                open_ids.add(tc["id"])
        elif role != "tool":
            open_ids = set()
    for t in body.get("tools") or []:
        if t.get("type") != "function" or not (t.get("function") or {}).get("name"):
            return "tools[] must be {type: function, function: {name, parameters}}"
    return None


class FakeOpenAI(FakeSSEServer):
    """The OpenAI chat-completions API on 127.0.0.1; base URL for clients: ``server.base_url``."""

    model = MODEL

    @property
    def base_url(self) -> str:
        """What to pass as the provider's ``base_url``."""
        return f"{self.url}/v1"

    def _authorized(self, h: BaseHTTPRequestHandler, rec: Recorded) -> bool:
        if self.api_key is None or rec.headers.get("authorization") == f"Bearer {self.api_key}":
            return True
        self.send_json(h, 401, openai_error("Incorrect API key provided.", code="invalid_api_key"))
        return False

    def handle_get(self, h: BaseHTTPRequestHandler, rec: Recorded) -> None:
        """``GET /v1/models``."""
        if rec.path != "/v1/models":
            self.send_json(h, 404, openai_error(f"Unknown path {rec.path}"))
        elif self._authorized(h, rec):
            self.send_json(h, 200, {"object": "list", "data": [
                {"id": MODEL, "object": "model", "created": 1_700_000_000, "owned_by": "fake"}]})

    def handle_post(self, h: BaseHTTPRequestHandler, rec: Recorded) -> None:
        """``POST /v1/chat/completions``."""
        if rec.path != "/v1/chat/completions":
            self.send_json(h, 404, openai_error(f"Unknown path {rec.path}"))
            return
        if not self._authorized(h, rec):
            return
        body = rec.body
        if body.get("model") != MODEL:
            self.send_json(h, 404, openai_error(f"The model `{body.get('model')}` does not exist.",
                                                code="model_not_found"))
            return
        try:
            problem = validate(body)
        except (ValueError, AttributeError, TypeError) as exc:
            problem = f"malformed request: {exc}"
        if problem:
            self.send_json(h, 400, openai_error(problem))
            return
        plan = self.next_plan(rec)
        n = len(self.model_requests)
        if isinstance(plan, Status):
            self.send_json(h, plan.code, plan.body, plan.headers)
        elif isinstance(plan, Garbage):
            self.send_garbage(h)
        elif isinstance(plan, NonStreaming) or (isinstance(plan, Turn) and not body.get("stream")):
            turn = plan.turn if isinstance(plan, NonStreaming) else plan
            self.send_json(h, 200, completion(turn, n))
        elif isinstance(plan, BadJSON):
            self.send_stream(h, [(None, json.dumps(chunk({"role": "assistant", "content": ""}))),
                                 (None, "{'choices': [oops")])
        elif isinstance(plan, StreamError):
            self.send_stream(h, [(None, json.dumps(chunk({"role": "assistant", "content": "Hm"}))),
                                 (None, json.dumps(openai_error("The server had an error while processing "
                                                                "your request.", "server_error"))),
                                 (None, "[DONE]")])
        elif isinstance(plan, Die | Close):
            self.send_stream(h, stream_events(plan.turn, n, body), cut="die" if isinstance(plan, Die) else "close")
        else:
            self.send_stream(h, stream_events(plan, n, body))

    # -- what the test inspects ---------------------------------------------------------------
    def messages(self, n: int) -> list[dict[str, Any]]:
        """The conversation sent in model request ``n``."""
        return self.model_requests[n].body["messages"]

    def tools(self, n: int) -> list[str]:
        """Names of the tools offered in model request ``n``."""
        return [t["function"]["name"] for t in self.model_requests[n].body.get("tools") or []]


def call_id(n: int, i: int) -> str:
    """The id the fake gives tool call ``i`` of answer ``n``."""
    return f"call_{n}x{i}abc"


def chunk(delta: dict[str, Any], finish: str | None = None, n: int = 0) -> dict[str, Any]:
    """One ``chat.completion.chunk``."""
    return {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": MODEL,
            "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}


def stream_events(turn: Turn, n: int, body: dict[str, Any]) -> list[SSEEvent]:
    """The SSE data lines of ``turn``, fragmented like the real API fragments them."""
    chunks: list[dict[str, Any]] = [chunk({"role": "assistant", "content": "", "refusal": None}, n=n)]
    chunks += [chunk({"content": piece}, n=n) for piece in split(turn.text, 5)]
    for i, (name, args) in enumerate(turn.calls):
        chunks.append(chunk({"tool_calls": [{"index": i, "id": call_id(n, i), "type": "function",
                                             "function": {"name": name, "arguments": ""}}]}, n=n))
        chunks += [chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}, n=n)
                   for piece in split(args_json(args), 4)]
    chunks.append(chunk({}, "tool_calls" if turn.calls else "stop", n=n))
    if (body.get("stream_options") or {}).get("include_usage"):
        usage_chunk = chunk({}, n=n)
        usage_chunk["choices"] = []
        usage_chunk["usage"] = {"prompt_tokens": 321, "completion_tokens": 12, "total_tokens": 333}
        chunks.append(usage_chunk)
    events: list[SSEEvent] = [(None, json.dumps(c)) for c in chunks]
    return [*events, (None, "[DONE]")]


def completion(turn: Turn, n: int) -> dict[str, Any]:
    """The non-streaming ``chat.completion`` object of ``turn``."""
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None, "refusal": None}
    if turn.calls:
        message["tool_calls"] = [{"id": call_id(n, i), "type": "function",
                                  "function": {"name": name, "arguments": args_json(args)}}
                                 for i, (name, args) in enumerate(turn.calls)]
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1_700_000_000, "model": MODEL,
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if turn.calls else "stop"}],
            "usage": {"prompt_tokens": 321, "completion_tokens": 12, "total_tokens": 333}}
