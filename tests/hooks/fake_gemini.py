"""A scripted model behind the Gemini API (``generativelanguage`` v1beta), as Gemini CLI calls it.

Gemini CLI 0.61 honours ``GOOGLE_GEMINI_BASE_URL``; with ``GEMINI_API_KEY`` set it posts
``/v1beta/models/{model}:streamGenerateContent?alt=sse`` (and ``:generateContent`` for
its own JSON side questions) and reads ``data: {candidates: [...]}`` events. This
server records every request and answers each model request with ``script(body, n)``:
a text, or one function call.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Self

from tests.support.loopback import LoopbackServer


@dataclass
class GeminiTurn:
    """One model answer: text, and optionally a function call (name, args)."""

    text: str = ""
    call: tuple[str, dict[str, Any]] | None = None


@dataclass
class Request:
    """One recorded request."""

    path: str
    body: dict[str, Any] = field(default_factory=dict)


def _response(turn: GeminiTurn) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if turn.text:
        parts.append({"text": turn.text})
    if turn.call:
        parts.append({"functionCall": {"name": turn.call[0], "args": turn.call[1]}})
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
            "modelVersion": "gemini-2.5-flash"}


class FakeGemini:
    """The Gemini API on 127.0.0.1; base URL for the CLI: ``server.url``."""

    def __init__(self, script: Callable[[dict[str, Any], int], GeminiTurn]) -> None:
        """``script`` answers the n-th conversation request (side questions are answered here)."""
        self.script = script
        self.requests: list[Request] = []
        self.model_requests: list[Request] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self._send(200, b'{"models": []}', "application/json")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                rec = Request(self.path, body)
                with outer.lock:
                    outer.requests.append(rec)
                if ":countTokens" in self.path:
                    self._send(200, b'{"totalTokens": 100}', "application/json")
                    return
                config = body.get("generationConfig") or {}
                if config.get("responseMimeType") == "application/json" or ":generateContent" in self.path:
                    # the CLI's own side questions (next speaker, loop check): the user speaks next
                    text = json.dumps({"reasoning": "done", "next_speaker": "user"})
                    self._send(200, json.dumps(_response(GeminiTurn(text))).encode(), "application/json")
                    return
                with outer.lock:
                    outer.model_requests.append(rec)
                    n = len(outer.model_requests) - 1
                data = json.dumps(_response(outer.script(body, n)))
                self._send(200, f"data: {data}\r\n\r\n".encode(), "text/event-stream")

        self._loop = LoopbackServer(Handler, name="fake-gemini")
        self.url = self._loop.url

    def __enter__(self) -> Self:
        self._loop.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.stop()

    def text_of(self, n: int) -> str:
        """Everything conversation request ``n`` carried, as one JSON string."""
        body = self.model_requests[n].body
        return json.dumps({"system": body.get("systemInstruction"), "contents": body.get("contents")},
                          ensure_ascii=False)
