"""A scripted model behind the OpenAI Responses API, as Codex 0.169 calls it.

Codex reaches it through a custom model provider (``model_providers.<id>.base_url``,
``wire_api = "responses"``): ``POST /v1/responses`` with ``stream: true``, read as
named SSE events. Each answer is ``response.created``, one
``response.output_item.done`` per item (an assistant message or a function call)
and ``response.completed`` with usage.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any, Self

from tests.support.loopback import LoopbackServer


@dataclass
class CodexTurn:
    """One answer: a text message, or a function call (name, arguments)."""

    text: str = ""
    call: tuple[str, dict[str, Any]] | None = None
    namespace: str = ""  # a tool inside a namespace tool (Codex offers an MCP server's tools as mcp__<server>)


def _events(turn: CodexTurn, n: int) -> list[dict[str, Any]]:
    rid = f"resp_{n}"
    item: dict[str, Any]
    if turn.call:
        item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": turn.call[0],
                "arguments": json.dumps(turn.call[1])}
        if turn.namespace:
            item["namespace"] = turn.namespace
    else:
        item = {"type": "message", "role": "assistant", "id": f"msg_{n}",
                "content": [{"type": "output_text", "text": turn.text}]}
    return [{"type": "response.created", "response": {"id": rid}},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {"id": rid, "usage": {
                "input_tokens": 100, "input_tokens_details": None, "output_tokens": 10,
                "output_tokens_details": None, "total_tokens": 110}}}]


class FakeResponses:
    """The Responses API on 127.0.0.1; base URL for a Codex provider: ``server.url + "/v1"``."""

    def __init__(self, script: Callable[[dict[str, Any], int], CodexTurn]) -> None:
        """``script`` answers the n-th ``POST /v1/responses``."""
        self.script = script
        self.model_requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, body: bytes, kind: str, status: int = 200) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self._send(b'{"object": "list", "data": []}', "application/json")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.split("?")[0] != "/v1/responses":
                    self._send(b'{"error": {"message": "not found"}}', "application/json", 404)
                    return
                body = json.loads(raw or b"{}")
                with outer.lock:
                    outer.model_requests.append(body)
                    n = len(outer.model_requests) - 1
                events = _events(outer.script(body, n), n)
                self._send("".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode(),
                           "text/event-stream")

        self._loop = LoopbackServer(Handler, name="fake-responses")
        self.url = self._loop.url

    def __enter__(self) -> Self:
        self._loop.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.stop()

    def text_of(self, n: int) -> str:
        """Everything request ``n`` carried (instructions and input), as one JSON string."""
        body = self.model_requests[n]
        return json.dumps({"instructions": body.get("instructions"), "input": body.get("input")},
                          ensure_ascii=False)
