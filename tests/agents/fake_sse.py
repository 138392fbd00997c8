"""Shared machinery of the fake SSE model servers (OpenAI-compatible and Anthropic).

A :class:`FakeSSEServer` runs a ``ThreadingHTTPServer`` on 127.0.0.1 on a free
port, records every request (method, path, headers, JSON body), and asks a
responder function ``(body, n) -> plan`` what to answer to the ``n``-th model
request. Plans are protocol-neutral (:class:`Turn`, :class:`Status`, :class:`Die`,
...); each subclass turns them into its vendor's real wire format. The server
stops itself after ``lifetime`` seconds so a test that forgets it cannot hang
the run. Also here: a RAM keyring backend for the key-store tests.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Self

from tests.support.loopback import LoopbackServer

MAX_BODY = 8 * 1024 * 1024


@dataclass
class Turn:
    """One model answer: visible text, then tool calls ``(name, arguments)``.

    Arguments given as a string are streamed verbatim (to send JSON that is broken).
    """

    text: str = ""
    calls: list[tuple[str, dict[str, Any] | str]] = field(default_factory=list)


@dataclass
class NonStreaming:
    """Ignore ``stream: true`` and answer the whole turn as one JSON document."""

    turn: Turn


@dataclass
class Status:
    """Answer an HTTP error status with a JSON body (and optional extra headers)."""

    code: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Die:
    """Stream the first half of ``turn``, then cut the connection inside a chunk."""

    turn: Turn


@dataclass
class Close:
    """Stream the first half of ``turn`` on a close-delimited body, then close it cleanly."""

    turn: Turn


@dataclass
class Garbage:
    """Answer 200 with an HTML page instead of an event stream."""


@dataclass
class BadJSON:
    """A well-formed event stream whose data is not JSON."""


@dataclass
class StreamError:
    """Start streaming, then send the vendor's in-stream error event."""


Plan = Turn | NonStreaming | Status | Die | Close | Garbage | BadJSON | StreamError
Responder = Callable[[dict[str, Any], int], Plan]
SSEEvent = tuple[str | None, str]  # (event name or None, data)


@dataclass
class Recorded:
    """One request the fake server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def args_json(args: dict[str, Any] | str) -> str:
    """The JSON text of tool arguments (a string is taken as already encoded)."""
    return args if isinstance(args, str) else json.dumps(args)


def split(text: str, parts: int) -> list[str]:
    """``text`` cut into about ``parts`` non-empty pieces (streamed fragments)."""
    if not text:
        return []
    size = max(1, -(-len(text) // parts))
    return [text[i:i + size] for i in range(0, len(text), size)]


class FakeSSEServer:
    """Serve a vendor's HTTP API on 127.0.0.1 until stop() or ``lifetime`` seconds."""

    model = "fake-model"

    def __init__(self, responder: Responder, *, api_key: str | None = "sk-test-key",
                 lifetime: float = 60.0) -> None:
        """``api_key``: the key requests must carry (None: no check)."""
        self.responder = responder
        self.api_key = api_key
        self.requests: list[Recorded] = []
        self.model_requests: list[Recorded] = []
        self.lock = threading.Lock()
        self._stopped = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _read(self, method: str) -> Recorded:
                length = min(int(self.headers.get("Content-Length") or 0), MAX_BODY)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                rec = Recorded(method, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with outer.lock:
                    outer.requests.append(rec)
                return rec

            def do_GET(self) -> None:
                outer.handle_get(self, self._read("GET"))

            def do_POST(self) -> None:
                outer.handle_post(self, self._read("POST"))

        self.handler_class = Handler
        self._loop = LoopbackServer(Handler, name="fake-sse")
        self.url = self._loop.url
        self._timer = threading.Timer(lifetime, self.stop)
        self._timer.daemon = True

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> Self:
        """Serve on a background thread; the server stops itself after its lifetime."""
        self._loop.start()
        self._timer.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port (idempotent)."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        self._timer.cancel()
        self._loop.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what subclasses implement -----------------------------------------------------------
    def handle_get(self, h: BaseHTTPRequestHandler, rec: Recorded) -> None:
        """Answer a GET request."""
        self.send_json(h, 404, {"error": "not found"})

    def handle_post(self, h: BaseHTTPRequestHandler, rec: Recorded) -> None:
        """Answer a POST request."""
        self.send_json(h, 404, {"error": "not found"})

    def next_plan(self, rec: Recorded) -> Plan:
        """Record a model request and ask the responder what to answer."""
        with self.lock:
            self.model_requests.append(rec)
            n = len(self.model_requests) - 1
        return self.responder(rec.body, n)

    # -- wire helpers ---------------------------------------------------------------------------
    @staticmethod
    def send_json(h: BaseHTTPRequestHandler, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        """A complete JSON answer with Content-Length."""
        body = json.dumps(obj).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body)
        h.wfile.flush()

    @staticmethod
    def send_garbage(h: BaseHTTPRequestHandler) -> None:
        """200 with an HTML page (a captive portal, a proxy's error page...)."""
        body = b"<html><body><h1>502 Bad Gateway</h1>\n<p>nginx</p></body></html>\n"
        h.send_response(200)
        h.send_header("Content-Type", "text/html")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)
        h.wfile.flush()

    @staticmethod
    def encode(event: SSEEvent) -> bytes:
        """One SSE block: an optional ``event:`` line, the ``data:`` line, a blank line."""
        name, data = event
        head = f"event: {name}\n" if name else ""
        return f"{head}data: {data}\n\n".encode()

    def send_stream(self, h: BaseHTTPRequestHandler, events: list[SSEEvent], *, cut: str | None = None) -> None:
        """Stream ``events`` as text/event-stream.

        ``cut``: None sends everything and ends the chunked body properly; "die"
        sends half then a chunk header promising bytes that never arrive and
        hard-closes; "close" uses a close-delimited body and closes after half.
        """
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        if cut == "close":
            h.send_header("Connection", "close")
        else:
            h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        if cut:
            events = events[: max(1, len(events) // 2)]
        for event in events:
            data = self.encode(event)
            if cut == "close":
                h.wfile.write(data)
            else:
                h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            h.wfile.flush()
        if cut == "die":
            h.wfile.write(b"200\r\ndata: {\"half")
            h.wfile.flush()
        if cut:
            h.close_connection = True
            h.connection.shutdown(2)
            return
        h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()


# Re-exported for the provider tests.
from tests.support.keyrings import (  # noqa: E402
    MemoryKeyring,
    fail_keyring,
    installed_keyring,
    memory_keyring,
)

__all__ = ["MemoryKeyring", "fail_keyring", "installed_keyring", "memory_keyring"]
