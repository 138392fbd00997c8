"""JSON-RPC framing in front of the MCP SDK's stdio transport: every malformed line gets its answer.

The SDK drops a line it cannot validate (it logs and waits), so a client that
sent malformed JSON, a batch, a non-object, a wrong ``jsonrpc`` version or a
string with a lone surrogate never hears back. This module reads stdin itself,
one line at a time, and answers per JSON-RPC 2.0:

- not JSON (or too large or too deep to parse safely) -> ``-32700`` Parse error, id null;
- valid JSON that is not a request object (array/batch, number, wrong ``jsonrpc``,
  bad ``id``/``method``/``params`` types) -> ``-32600`` Invalid Request, with the id
  when one could be read;
- lone surrogates (``"\\ud800"``) are replaced by U+FFFD, so the request is answered
  normally instead of silently dropped.

Good lines are re-serialised and handed to the SDK's own ``stdio_server`` through
the ``stdin``/``stdout`` parameters it accepts, so sessions, tools and resources
are exactly the SDK's. Both writers share one lock, so a line is never torn.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import AsyncIterator
from typing import Any, BinaryIO, Protocol

import anyio

from desktop.memory import safe_json

log = logging.getLogger("engram.mcp")

class LineSource(Protocol):
    """What the framing reads: a binary stdin, or mcp_front's queue of passed-on lines."""

    def readline(self, limit: int = -1, /) -> bytes:
        """One line (b"" at the end)."""
        ...


class LineSink(Protocol):
    """What the framing writes: a binary stdout, or mcp_front's shared wire."""

    def write(self, data: bytes, /) -> Any:
        """Write bytes."""
        ...

    def flush(self) -> Any:
        """Push them out."""
        ...


PARSE_ERROR = -32700
INVALID_REQUEST = -32600
MAX_LINE_BYTES = 4 * 1024 * 1024  # a tool call's arguments, generously
MAX_DEPTH = 32


def _clean(value: Any) -> Any:
    """Replace lone surrogates in every string (keys included) with U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8") if _has_surrogate(value) else value
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    return value


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _error(code: int, message: str, msg_id: Any = None) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def check_line(line: bytes | str) -> tuple[str | None, str | None]:
    """(line to pass to the SDK, None) for a good message, or (None, error reply) for a bad one."""
    raw = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
    if len(raw) > MAX_LINE_BYTES:
        return None, _error(INVALID_REQUEST, f"Request too large (more than {MAX_LINE_BYTES} bytes)")
    text = raw.decode("utf-8", "replace")
    try:
        msg = safe_json.loads(text, max_chars=MAX_LINE_BYTES, max_depth=MAX_DEPTH)
    except ValueError as exc:
        return None, _error(PARSE_ERROR, f"Parse error: {str(exc)[:120]}")
    if isinstance(msg, list):
        return None, _error(INVALID_REQUEST, "Invalid Request: batches are not supported")
    if not isinstance(msg, dict):
        return None, _error(INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
    msg = _clean(msg)
    msg_id = msg.get("id")
    id_ok = msg_id is None or (isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool))
    reply_id = msg_id if id_ok else None
    if msg.get("jsonrpc") != "2.0":
        return None, _error(INVALID_REQUEST, "Invalid Request: jsonrpc must be \"2.0\"", reply_id)
    if not id_ok:
        return None, _error(INVALID_REQUEST, "Invalid Request: id must be a string, a number or null")
    if "method" in msg:
        if not isinstance(msg["method"], str) or not msg["method"]:
            return None, _error(INVALID_REQUEST, "Invalid Request: method must be a string", reply_id)
        if "params" in msg and not isinstance(msg["params"], (dict, list)):
            return None, _error(INVALID_REQUEST, "Invalid Request: params must be an object", reply_id)
    elif "result" not in msg and "error" not in msg:
        return None, _error(INVALID_REQUEST, "Invalid Request: no method", reply_id)
    try:  # what the SDK would otherwise drop without a word
        import mcp_types

        mcp_types.jsonrpc_message_adapter.validate_python(msg, by_name=False)
    except Exception as exc:  # pydantic's ValidationError; the message says which field
        first = str(exc).splitlines()[0][:120]
        return None, _error(INVALID_REQUEST, f"Invalid Request: {first}", reply_id)
    return json.dumps(msg, ensure_ascii=False), None


class _Out:
    """The one writer of stdout: SDK replies and framing errors, a whole line at a time."""

    def __init__(self, stream: LineSink) -> None:
        self.stream = stream
        self.lock = anyio.Lock()
        self._pending: list[str] = []

    async def write(self, text: str) -> None:
        """Buffer until flush (the SDK writes a line, then flushes)."""
        self._pending.append(text)

    async def flush(self) -> None:
        """Write the buffered text in one piece, under the lock."""
        data, self._pending = "".join(self._pending), []
        if data:
            await self.line(data)

    async def line(self, text: str) -> None:
        """Write one complete line (or several) atomically with respect to other writers."""
        payload = text.encode("utf-8", "replace") + (b"" if text.endswith("\n") else b"\n")
        async with self.lock:
            await anyio.to_thread.run_sync(self._write, payload)

    def _write(self, payload: bytes) -> None:
        self.stream.write(payload)
        self.stream.flush()


class _In:
    """Async iteration over stdin lines that yields only well-formed messages."""

    def __init__(self, stream: LineSource, out: _Out) -> None:
        self.stream = stream
        self.out = out

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        while True:
            raw = await anyio.to_thread.run_sync(self.stream.readline, MAX_LINE_BYTES + 1)
            if not raw:
                return
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while True:  # drop the rest of the oversized line
                    rest = await anyio.to_thread.run_sync(self.stream.readline, MAX_LINE_BYTES)
                    if not rest or rest.endswith(b"\n"):
                        break
            if not raw.strip():
                continue
            good, reply = check_line(raw)
            if reply is not None:
                log.info("answered a malformed MCP message: %s", reply[:200])
                await self.out.line(reply)
                continue
            if good is not None:
                yield good + "\n"


def _claim_std_streams() -> tuple[BinaryIO, BinaryIO, list[Any]]:
    """stdin/stdout buffers, diverted from fd 0/1 like the SDK does when it can (stray prints miss the wire)."""
    try:
        from mcp.server.stdio import _claim_fd, _open_stdin_diversion, _open_stdout_diversion  # private, optional

        stdin, r1 = _claim_fd(0, sys.stdin, "rb", _open_stdin_diversion)
        stdout, r2 = _claim_fd(1, sys.stdout, "wb", _open_stdout_diversion)
        return stdin, stdout, [r for r in (r2, r1) if r is not None]
    except (ImportError, RuntimeError, OSError):
        return sys.stdin.buffer, sys.stdout.buffer, []


async def serve_framed(server: Any, stdin: LineSource | None = None, stdout: LineSink | None = None) -> None:
    """Run an ``MCPServer`` over stdio with JSON-RPC framing checked first."""
    from mcp.server.stdio import stdio_server

    releases: list[Any] = []
    if stdin is None or stdout is None:
        stdin, stdout, releases = _claim_std_streams()
    out = _Out(stdout)
    try:
        async with stdio_server(stdin=_In(stdin, out), stdout=out) as (read, write):  # type: ignore[arg-type]
            low = server._lowlevel_server  # the SDK's own run loop, as MCPServer.run_stdio_async does
            await low.run(read, write, low.create_initialization_options())
    finally:
        for release in releases:
            release()


def run_framed(server: Any) -> None:
    """Blocking entry point for ``engram mcp``."""
    anyio.run(serve_framed, server)
