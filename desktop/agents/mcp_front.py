"""``engram mcp``: answer the MCP handshake at once, load the SDK and the project behind it.

Importing the MCP SDK and opening a project take seconds; an MCP client gives a
server little time to answer ``initialize`` (a fast ``claude -p`` turn starts
without a server still "connecting"). So this front, which imports only the
standard library and the catalog, reads stdin itself and answers the handshake and
the listings from ``mcp_catalog`` straight away, while a loader thread imports the
SDK, opens the project and starts the SDK server (``mcp_server``, behind the framing
checks of ``mcp_framing``). Every other message is queued for that server in the
order it came; the SDK also sees the ``initialize`` request (its session needs it)
and its own reply to it is dropped, since the client already has one.

Which project: ``--project DIR`` when given (made an Engram project if it is not one
yet: the user named it), else the Engram project of the folder the server was
started in (that folder or a parent), so one configuration entry serves every
project and no folder becomes a project by being visited. In a folder that is no Engram project,
and when loading fails, every tool call is answered with a tool error (``isError``)
that says what to do.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import queue
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from desktop.agents.mcp_catalog import static_result

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.mcp")

INTERNAL_ERROR = -32603
INVALID_REQUEST = -32600
PARSE_ERROR = -32700
SHUTDOWN_WAIT_S = 30.0
MAX_LINE_BYTES = 4 * 1024 * 1024  # as mcp_framing: longer lines are answered "too large" there


class NotAProject(Exception):
    """The server was started outside every Engram project (the message says what to do)."""


def add_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``engram mcp`` (shared with the full command-line parser)."""
    parser.add_argument("--project", type=Path, default=None,
                        help="the project (default: the Engram project the server is started in)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="where Engram keeps its databases (default: the user-data folder)")


class Wire:
    """stdout, shared by the front and the SDK server: whole messages only, and a reply the
    client already had dropped once."""

    def __init__(self, stream: BinaryIO) -> None:
        """``stream`` is the protocol's stdout."""
        self.stream = stream
        self.lock = threading.Lock()
        self.drop: set[str] = set()

    def send(self, message: dict[str, Any]) -> None:
        """Write one JSON-RPC message."""
        self.write((json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8"))

    def write(self, payload: bytes) -> None:
        """Write whole lines (what the SDK's writer calls); a reply to a dropped id is left out."""
        if self.drop:
            payload = b"".join(line for line in payload.splitlines(keepends=True) if not self._dropped(line))
        if payload:
            with self.lock:
                self.stream.write(payload)
                self.stream.flush()

    def flush(self) -> None:
        """Every write is already flushed."""

    def _dropped(self, line: bytes) -> bool:
        try:
            msg = json.loads(line)
        except ValueError:
            return False
        key = _id_key(msg.get("id")) if isinstance(msg, dict) and "method" not in msg else None
        if key is not None and key in self.drop:
            self.drop.discard(key)
            return True
        return False


class Inbox:
    """The SDK server's stdin: the lines the front passed on, then end of file.

    It counts the lines passed on that will be answered and that the server has not
    finished reading (a line counts until the server asks for the next one), so the
    front never answers a later ping or listing before them.
    """

    def __init__(self) -> None:
        self.lines: queue.Queue[tuple[bytes, bool] | None] = queue.Queue()
        self.lock = threading.Lock()
        self.waiting = 0
        self._last_answered = False

    def put(self, line: bytes | None, *, answered: bool = False) -> None:
        """Pass a line on (None: the client closed stdin); ``answered``: the client expects a reply to it."""
        if line is None:
            self.lines.put(None)
            return
        with self.lock:
            self.waiting += answered
        self.lines.put((line, answered))

    def readline(self, _limit: int = -1) -> bytes:
        """The next line, b"" at the end."""
        with self.lock:
            self.waiting -= self._last_answered
            self._last_answered = False
        item = self.lines.get()
        if item is None:
            self.lines.put(None)  # every later read sees the end too
            return b""
        self._last_answered = item[1]
        return item[0]

    def busy(self) -> bool:
        """True while a line that will be answered is queued or being read."""
        with self.lock:
            return self.waiting > 0

    def drain(self) -> list[bytes]:
        """The lines not read yet."""
        out: list[bytes] = []
        while True:
            try:
                item = self.lines.get_nowait()
            except queue.Empty:
                return out
            if item is None:
                self.lines.put(None)
                return out
            out.append(item[0])


def _loads(line: bytes) -> Any:
    """The JSON value of a line, or None (not JSON, too deep to parse, a bare null)."""
    if len(line) > MAX_LINE_BYTES:
        return None
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _id_key(value: Any) -> str | None:
    return json.dumps(value) if isinstance(value, str | int) and not isinstance(value, bool) else None


class Front:
    """Answers what the catalog knows, queues the rest for the SDK server, refuses it when that failed."""

    def __init__(self, wire: Wire) -> None:
        """``wire`` is the protocol's stdout."""
        self.wire = wire
        self.inbox = Inbox()
        self.lock = threading.Lock()
        self.failure = ""  # set when the server cannot start: what the user should do

    def handle(self, line: bytes) -> None:
        """One line the client sent."""
        if not line.strip():
            return
        msg = _loads(line)
        request = (isinstance(msg, dict) and msg.get("jsonrpc") == "2.0" and isinstance(msg.get("method"), str)
                   and _id_key(msg.get("id")) is not None)
        notification = isinstance(msg, dict) and "id" not in msg and isinstance(msg.get("method"), str)
        answered = not notification
        if request and (msg["method"] == "initialize" or not self.inbox.busy()):
            result = static_result(msg["method"], msg.get("params"))
            if result is not None:
                self.wire.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
                if msg["method"] != "initialize":
                    return
                key = _id_key(msg["id"])
                assert key is not None
                self.wire.drop.add(key)  # the SDK answers it too: the client has its answer already
                answered = False
        with self.lock:
            if self.failure:
                self._refuse(line)
            else:
                self.inbox.put(line, answered=answered)

    def fail(self, message: str) -> None:
        """The server cannot start: refuse what is queued and everything after it."""
        with self.lock:
            self.failure = message
            for line in self.inbox.drain():
                self._refuse(line)

    def _refuse(self, line: bytes) -> None:
        msg = _loads(line)
        if msg is None:
            self.wire.send({"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "Parse error"}})
            return
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            reply_id = msg.get("id") if isinstance(msg, dict) and _id_key(msg.get("id")) else None
            self.wire.send({"jsonrpc": "2.0", "id": reply_id,
                            "error": {"code": INVALID_REQUEST, "message": "Invalid Request"}})
            return
        if _id_key(msg.get("id")) is None or "method" not in msg:
            return  # a notification (or a reply): nothing to answer
        if msg["method"] == "tools/call":
            reply: dict[str, Any] = {"result": {"content": [{"type": "text", "text": self.failure}], "isError": True}}
        else:
            reply = {"error": {"code": INTERNAL_ERROR, "message": self.failure}}
        self.wire.send({"jsonrpc": "2.0", "id": msg["id"], **reply})


def open_project(project: Path | None, data_dir: Path | None, cwd: Path) -> Project:
    """``project`` when given, else the Engram project ``cwd`` is in (the folder or a parent)."""
    from desktop.agents.hooks.runner import find_project_root
    from desktop.composition import Engram

    app = Engram.for_data_dir(data_dir)  # the user's settings, read once for this server
    root = project.expanduser().resolve() if project else find_project_root(app.settings.data_dir, str(cwd))
    if root is None:
        raise NotAProject(f"{cwd} is not an Engram project yet: run `engram setup` in it (or open it in "
                          "Engram), then start a new session.")
    return app.open_project(root, remember=False)


def load_and_serve(front: Front, opener: Callable[[], Project]) -> None:
    """The loader thread: import the SDK, open the project, serve what the front queued."""
    try:
        from desktop.agents.mcp_framing import serve_framed
        from desktop.agents.mcp_server import EngramMCP, build_server

        project = opener()
    except NotAProject as exc:
        front.fail(str(exc))
        return
    except Exception as exc:  # a damaged database, a broken install: the client hears why
        log.exception("the MCP server could not start")
        front.fail(f"Engram's MCP server could not start: {exc}. Run `engram doctor` for details.")
        return
    impl = EngramMCP(project)
    log.info("MCP server for %s (%s)", project.info.root, project.info.db_path)
    threading.Thread(target=_graph_upkeep, args=(project,), name="engram-mcp-graph", daemon=True).start()
    try:
        import anyio

        anyio.run(serve_framed, build_server(impl), front.inbox, front.wire)
    except Exception as exc:
        log.exception("the MCP server stopped")
        front.fail(f"Engram's MCP server stopped: {exc}.")
    finally:
        impl.close()
        project.close()


def _graph_upkeep(project: Project) -> None:
    """analyze_impact needs a current code graph; bringing it up to date never delays serving."""
    try:
        project.keep_graph_live()
    except Exception:
        log.exception("could not bring the code graph up to date")


def _claim_stdout() -> BinaryIO:
    """The protocol's stdout, with fd 1 pointed at stderr so a stray print cannot corrupt the wire."""
    try:
        fd = os.dup(1)
        os.dup2(2, 1)
        return os.fdopen(fd, "wb", buffering=0)
    except OSError:
        return sys.stdout.buffer


def main(argv: list[str]) -> int:
    """``engram mcp [--project DIR] [--data-dir DIR]``: serve until the client closes stdin."""
    parser = argparse.ArgumentParser(prog="engram mcp", description="Serve a project's memory over MCP (stdio).")
    add_options(parser)
    args, _unknown = parser.parse_known_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    front = Front(Wire(_claim_stdout()))
    cwd = Path.cwd()
    loader = threading.Thread(target=load_and_serve, name="engram-mcp",
                              args=(front, lambda: open_project(args.project, args.data_dir, cwd)))
    loader.daemon = True
    loader.start()
    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline(MAX_LINE_BYTES + 1)
        if not line:
            break
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            rest = line
            while rest and not rest.endswith(b"\n"):  # the rest of an oversized line is not a message
                rest = stdin.readline(MAX_LINE_BYTES)
            line += b"\n"  # whole, so the framing answers it "too large" and reads on
        front.handle(line)
    front.inbox.put(None)
    loader.join(SHUTDOWN_WAIT_S)  # the queued calls are answered and the project closed
    return 0
