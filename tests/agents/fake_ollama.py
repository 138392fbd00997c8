"""A local fake Ollama server speaking the real HTTP API (/api/chat NDJSON streaming with tool calls,
/api/embed, /api/tags, /api/version), driven by a responder function the test supplies."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.fake_embedding_api import fake_vector
from tests.support.loopback import LoopbackServer

Responder = Callable[[dict[str, Any], int], Any]
MODEL = "fake-coder:latest"


def text_turn(text: str) -> list[dict[str, Any]]:
    """Chunks of a plain answer, streamed in pieces, ending with done=true."""
    words = text.split(" ")
    chunks = [{"role": "assistant", "content": w + (" " if i < len(words) - 1 else "")} for i, w in enumerate(words)]
    return chunks


def tool_turn(*calls: tuple[str, dict[str, Any]], text: str = "") -> list[dict[str, Any]]:
    """One message chunk carrying tool calls (as Ollama sends them)."""
    msgs: list[dict[str, Any]] = text_turn(text) if text else []
    msgs.append({"role": "assistant", "content": "",
                 "tool_calls": [{"function": {"name": n, "arguments": a}} for n, a in calls]})
    return msgs


class FakeOllama:
    """Serve on 127.0.0.1 on a free port until stop()."""

    def __init__(self, responder: Responder) -> None:
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self.embeds: list[dict[str, Any]] = []  # /api/embed requests (any model: deterministic vectors)
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, obj: Any, status: int = 200) -> None:
                body = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path == "/api/version":
                    self._json({"version": "0.6.0"})
                elif self.path == "/api/tags":
                    self._json({"models": [{"name": MODEL, "model": MODEL, "modified_at": "2025-01-01T00:00:00Z",
                                            "size": 1, "digest": "abc", "details": {}}]})
                else:
                    self._json({"error": "not found"}, 404)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path == "/api/embed":
                    with outer.lock:
                        outer.embeds.append(body)
                    texts = [body["input"]] if isinstance(body.get("input"), str) else list(body.get("input") or [])
                    self._json({"model": body.get("model"), "embeddings": [fake_vector(t, 16) for t in texts]})
                    return
                if self.path != "/api/chat":
                    self._json({"error": "not found"}, 404)
                    return
                with outer.lock:
                    outer.requests.append(body)
                    n = len(outer.requests) - 1
                if body.get("model") != MODEL:
                    self._json({"error": f"model '{body.get('model')}' not found"}, 404)
                    return
                plan = outer.responder(body, n)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                if plan == "garbage":
                    self._chunk(b"<html>this is not ollama</html>\n")
                    self._chunk(b"")
                    return
                die = plan == "die" or (isinstance(plan, dict) and plan.get("die"))
                msgs = (plan.get("messages") if isinstance(plan, dict) else None) or \
                    (plan if isinstance(plan, list) else [{"role": "assistant", "content": "Half an ans"}])
                for m in msgs:
                    self._line({"model": MODEL, "created_at": "2025-01-01T00:00:00Z", "message": m, "done": False})
                if die:
                    # a chunk header promising more bytes than ever arrive, then a hard close
                    self.wfile.write(b"400\r\n{\"model\": \"fake")
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                self._line({"model": MODEL, "created_at": "2025-01-01T00:00:00Z",
                            "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop",
                            "total_duration": 1000, "prompt_eval_count": 100, "eval_count": 20})
                self._chunk(b"")

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            def _line(self, obj: dict[str, Any]) -> None:
                self._chunk(json.dumps(obj).encode() + b"\n")

        self._loop = LoopbackServer(Handler, name="fake-ollama")
        self.host = self._loop.url

    def start(self) -> FakeOllama:
        self._loop.start()
        return self

    def stop(self) -> None:
        self._loop.stop()

    def messages(self, n: int) -> list[dict[str, Any]]:
        """The conversation sent in request ``n``."""
        return self.requests[n]["messages"]

    def tools(self, n: int) -> list[str]:
        return [t["function"]["name"] for t in self.requests[n].get("tools") or []]
