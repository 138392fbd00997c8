"""A local fake Anthropic server speaking the real Messages API.

``POST /v1/messages`` with ``stream: true`` answers the named SSE events of the
real API: ``message_start``, ``ping``, per content block ``content_block_start``
(``text`` / ``tool_use`` with ``id`` and ``name``), ``content_block_delta``
(``text_delta`` / ``input_json_delta`` with ``partial_json`` pieces) and
``content_block_stop``, then ``message_delta`` (``stop_reason`` tool_use /
end_turn, usage) and ``message_stop``. ``x-api-key`` and ``anthropic-version``
are checked (401 ``authentication_error`` / 400), the request is validated as
the real API does (alternating user/assistant turns, ``system`` top-level,
every ``tool_result`` answering a ``tool_use`` id of the assistant turn just
before, no empty text blocks), and ``GET /v1/models`` lists the model.
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

MODEL = "claude-fake-4"
VERSION = "2023-06-01"


def anthropic_error(kind: str, message: str) -> dict[str, Any]:
    """Anthropic's error body."""
    return {"type": "error", "error": {"type": kind, "message": message}}


def validate(body: dict[str, Any]) -> str | None:
    """What the real API would reject in ``body`` (None when it is well formed)."""
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: Field required"
    if "system" in body and not isinstance(body["system"], str | list):
        return "system: must be a string or a list of text blocks"
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        return "messages: at least one message is required"
    if msgs[0].get("role") != "user":
        return "messages: first message must use the \"user\" role"
    tool_ids: set[str] = set()
    prev = ""
    for i, m in enumerate(msgs):
        role = m.get("role")
        if role not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        if role == prev:
            # The API merges consecutive same-role turns; the fake is stricter to catch mistakes.
            return f"messages.{i}: roles must alternate between \"user\" and \"assistant\""
        prev = role
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list) or not blocks:
            return f"messages.{i}.content: must be a string or a non-empty list of blocks"
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if role == "user" and tool_ids and not results:
            return (f"messages.{i}: tool_use ids were found without tool_result blocks immediately after: "
                    f"{', '.join(sorted(tool_ids))}")
        if results and blocks[: len(results)] != results:
            return f"messages.{i}: tool_result blocks must come first in the user message"
        for b in results:
            if b.get("tool_use_id") not in tool_ids:
                return f"messages.{i}: unexpected `tool_use_id` found in `tool_result` blocks: {b.get('tool_use_id')}"
        tool_ids = set()
        for b in blocks:
            kind = b.get("type")
            if kind == "text" and not b.get("text"):
                return f"messages.{i}: text content blocks must be non-empty"
            if kind == "tool_use":
                if role != "assistant" or not b.get("id") or not b.get("name") or not isinstance(b.get("input"), dict):
                    return f"messages.{i}: tool_use blocks need id, name and an object input"
                tool_ids.add(b["id"])
            elif kind not in ("text", "tool_result", "image", "thinking"):
                return f"messages.{i}: unknown block type {kind!r}"
    for t in body.get("tools") or []:
        if not t.get("name") or not isinstance(t.get("input_schema"), dict):
            return "tools: each tool needs name and input_schema"
    return None


class FakeAnthropic(FakeSSEServer):
    """The Anthropic Messages API on 127.0.0.1; base URL for clients: ``server.url``."""

    model = MODEL

    def _authorized(self, h: BaseHTTPRequestHandler, rec: Recorded) -> bool:
        if self.api_key is not None and rec.headers.get("x-api-key") != self.api_key:
            self.send_json(h, 401, anthropic_error("authentication_error", "invalid x-api-key"))
            return False
        if rec.headers.get("anthropic-version") != VERSION:
            self.send_json(h, 400, anthropic_error("invalid_request_error",
                                                   "anthropic-version: header is required"))
            return False
        return True

    def handle_get(self, h: BaseHTTPRequestHandler, rec: Recorded) -> None:
        """``GET /v1/models``."""
        if rec.path.split("?")[0] != "/v1/models":
            self.send_json(h, 404, anthropic_error("not_found_error", "Not found"))
        elif self._authorized(h, rec):
            self.send_json(h, 200, {"data": [{"type": "model", "id": MODEL, "display_name": "Claude Fake 4",
                                              "created_at": "2025-01-01T00:00:00Z"}],
                                    "has_more": False, "first_id": MODEL, "last_id": MODEL})

    def handle_post(self, h: BaseHTTPRequestHandler, rec: Recorded) -> None:
        """``POST /v1/messages``."""
        if rec.path != "/v1/messages":
            self.send_json(h, 404, anthropic_error("not_found_error", "Not found"))
            return
        if not self._authorized(h, rec):
            return
        body = rec.body
        if body.get("model") != MODEL:
            self.send_json(h, 404, anthropic_error("not_found_error", f"model: {body.get('model')}"))
            return
        try:
            problem = validate(body)
        except (AttributeError, TypeError) as exc:
            problem = f"malformed request: {exc}"
        if problem:
            self.send_json(h, 400, anthropic_error("invalid_request_error", problem))
            return
        plan = self.next_plan(rec)
        n = len(self.model_requests)
        if isinstance(plan, Status):
            self.send_json(h, plan.code, plan.body, plan.headers)
        elif isinstance(plan, Garbage):
            self.send_garbage(h)
        elif isinstance(plan, NonStreaming) or (isinstance(plan, Turn) and not body.get("stream")):
            turn = plan.turn if isinstance(plan, NonStreaming) else plan
            self.send_json(h, 200, message(turn, n))
        elif isinstance(plan, BadJSON):
            self.send_stream(h, [ev({"type": "message_start", "message": message(Turn(), n, start=True)}),
                                 ("content_block_start", "{type: text, oops")])
        elif isinstance(plan, StreamError):
            self.send_stream(h, [ev({"type": "message_start", "message": message(Turn(), n, start=True)}),
                                 ev(anthropic_error("overloaded_error", "Overloaded"))])
        elif isinstance(plan, Die | Close):
            self.send_stream(h, stream_events(plan.turn, n), cut="die" if isinstance(plan, Die) else "close")
        else:
            self.send_stream(h, stream_events(plan, n))

    # -- what the test inspects ---------------------------------------------------------------
    def messages(self, n: int) -> list[dict[str, Any]]:
        """The conversation sent in model request ``n``."""
        return self.model_requests[n].body["messages"]

    def tools(self, n: int) -> list[str]:
        """Names of the tools offered in model request ``n``."""
        return [t["name"] for t in self.model_requests[n].body.get("tools") or []]


def tool_id(n: int, i: int) -> str:
    """The id the fake gives tool_use block ``i`` of answer ``n``."""
    return f"toolu_0{n}{i}FakeAbc"


def ev(obj: dict[str, Any]) -> SSEEvent:
    """A named SSE event whose name is the object's ``type``."""
    return obj["type"], json.dumps(obj)


def message(turn: Turn, n: int, *, start: bool = False) -> dict[str, Any]:
    """The message object: empty for ``message_start``, complete for a non-streamed answer."""
    content: list[dict[str, Any]] = []
    if not start:
        if turn.text:
            content.append({"type": "text", "text": turn.text})
        content += [{"type": "tool_use", "id": tool_id(n, i), "name": name, "input": args}
                    for i, (name, args) in enumerate(turn.calls)]
    return {"id": f"msg_fake{n}", "type": "message", "role": "assistant", "model": MODEL, "content": content,
            "stop_reason": None if start else ("tool_use" if turn.calls else "end_turn"), "stop_sequence": None,
            "usage": {"input_tokens": 321, "output_tokens": 1 if start else 12}}


def stream_events(turn: Turn, n: int) -> list[SSEEvent]:
    """The named SSE events of ``turn``, fragmented like the real API fragments them."""
    events = [ev({"type": "message_start", "message": message(turn, n, start=True)}), ev({"type": "ping"})]
    index = 0
    if turn.text:
        events.append(ev({"type": "content_block_start", "index": index, "content_block": {"type": "text",
                                                                                           "text": ""}}))
        events += [ev({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}})
                   for p in split(turn.text, 5)]
        events.append(ev({"type": "content_block_stop", "index": index}))
        index += 1
    for i, (name, args) in enumerate(turn.calls):
        events.append(ev({"type": "content_block_start", "index": index,
                          "content_block": {"type": "tool_use", "id": tool_id(n, i), "name": name, "input": {}}}))
        pieces = ["", *split(args_json(args), 4)]  # the real API opens with an empty partial_json
        events += [ev({"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta", "partial_json": p}}) for p in pieces]
        events.append(ev({"type": "content_block_stop", "index": index}))
        index += 1
    events.append(ev({"type": "message_delta", "delta": {"stop_reason": "tool_use" if turn.calls else "end_turn",
                                                         "stop_sequence": None}, "usage": {"output_tokens": 12}}))
    events.append(ev({"type": "message_stop"}))
    return events
