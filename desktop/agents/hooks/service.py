"""``engram serve``: the warm local service hooks ask first.

A hook is a new process per event; opening the database, importing the core and
(for search by meaning) loading a model every time would cost the agent seconds.
The service keeps each project it has been asked about open, with its writer and
its hybrid search warm, and answers hook clients over a Unix domain socket in the
user's runtime folder (folder 0700, socket 0600, no TCP port). One JSON request
per connection, one JSON answer. It exits after ``idle`` seconds without a request.
The first hook that finds no service starts one in the background and answers
inline from FTS5 itself; later hooks get the warm answer.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.agents.hooks.peer import peer_uid, private_folder, private_socket
from desktop.agents.hooks.protocol import BadPayload, HookCall, from_dict

if TYPE_CHECKING:  # the hook client (a new process per agent event) never serves
    import socketserver

    from desktop.agents.hooks.handlers import Handlers
    from desktop.memory.project import Project

log = logging.getLogger("engram.hooks")

IDLE_S = 900.0
IDLE_ENV = "ENGRAM_SERVE_IDLE"  # seconds an on-demand service waits for the next hook before exiting
MAX_REQUEST = 4 * 1024 * 1024
#: Projects opened with settings since replaced are closed this long after (the longest hook budget).
RETIRE_AFTER_S = 45.0


#: A socket path must fit ``sockaddr_un.sun_path`` (108 bytes on Linux, 104 on macOS).
MAX_SOCKET_PATH = 100


def socket_path(data_dir: Path) -> Path:
    """The service socket for this data folder, in a folder only this user can enter.

    The user's runtime folder (``$XDG_RUNTIME_DIR``, private by definition) when there is one;
    else ``run/`` inside the data folder; the shared temp folder only when that path is too long
    for a socket (there another user could create the folder first: see :func:`ask`).
    """
    digest = hashlib.sha256(str(Path(data_dir).resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = f"hooks-{digest}.sock"
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isabs(base) and Path(base).is_dir():
        return Path(base) / "engram" / name
    own = Path(data_dir).resolve() / "run" / name
    if len(os.fsencode(own)) <= MAX_SOCKET_PATH:
        return own
    return Path(tempfile.gettempdir()) / f"engram-{os.getuid() if hasattr(os, 'getuid') else 'user'}" / name


def trusted(path: Path) -> bool:
    """True when the socket and its folder are this user's alone (never talk to another's)."""
    if private_folder(path.parent) and private_socket(path):
        return True
    log.warning("refusing the hook service socket %s: its folder or socket is not this user's alone", path)
    return False


def ask(data_dir: Path, call: HookCall, token_budget: int | None, *, timeout: float) -> str | None:
    """The service's answer; None when no trusted service listens (the caller answers inline).

    The folder and socket must be this user's with no access for others, and the process that
    listens must run as this user (its credentials from the kernel): otherwise nothing is sent.
    """
    path = socket_path(data_dir)
    if not path.exists() or not trusted(path):
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(min(0.2, timeout))
    try:
        sock.connect(str(path))
        if peer_uid(sock) != os.getuid():
            log.warning("refusing the hook service on %s: it runs as another user", path)
            sock.close()
            return None
    except OSError:
        sock.close()
        return None
    try:
        sock.settimeout(timeout)
        sock.sendall(json.dumps({**call.as_json(), "token_budget": token_budget}).encode() + b"\n")
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
        reply = json.loads(b"".join(chunks) or b"{}")
        return str(reply.get("output") or "")
    except (OSError, ValueError) as exc:
        # Connected but no usable answer: do not repeat the work inline over the budget.
        log.warning("service did not answer %s: %s", call.event, exc)
        return ""
    finally:
        sock.close()


def start_in_background(data_dir: Path) -> None:
    """Launch ``engram serve`` detached (for the next hook); never waits for it.

    By Engram's absolute entry point, in the data folder: the agent's working folder is a
    repository, and nothing in it may decide what code runs (see desktop/agents/launch.py).
    """
    import subprocess

    from desktop.agents.launch import engram_argv, spawn_environment

    try:
        idle = os.environ.get(IDLE_ENV) or str(IDLE_S)
        home = Path(data_dir).resolve()
        home.mkdir(parents=True, exist_ok=True)
        subprocess.Popen([*engram_argv(), "serve", "--data-dir", str(home), "--idle", idle],
                         cwd=str(home), env=spawn_environment(),
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, close_fds=True)
    except OSError as exc:
        log.warning("could not start the hook service: %s", exc)


class HookService:
    """Projects kept open and warm, answering hook requests."""

    def __init__(self, data_dir: Path, *, idle: float = IDLE_S, warm_search: bool = True) -> None:
        """``warm_search`` builds each project's hybrid search in the background."""
        from desktop.composition import Engram, settings_stamp

        self.data_dir = Path(data_dir)
        # The user's settings, read once for this service: every project it opens uses them
        # (until they are saved again: see follow_settings).
        self._settings_stamp = settings_stamp(self.data_dir)
        self.engram = Engram.for_data_dir(self.data_dir)
        self.idle = idle
        self.warm_search = warm_search
        self.last_request = time.monotonic()
        self._projects: dict[Path, Project] = {}
        self._handlers: dict[Path, Handlers] = {}
        self._lock = threading.Lock()
        self._server: socketserver.ThreadingUnixStreamServer | None = None
        from desktop.agents.hooks.live import keep_observers_warm

        keep_observers_warm()

    def handlers_for(self, cwd: str, token_budget: int) -> Handlers | None:
        """The warm handlers of the project containing ``cwd`` (opened on first use)."""
        from desktop.agents.hooks.handlers import Handlers
        from desktop.agents.hooks.runner import find_project_root

        root = find_project_root(self.data_dir, cwd)
        if root is None:
            return None
        with self._lock:
            handlers = self._handlers.get(root)
            if handlers is None:
                project = self.engram.open_project(root, remember=False)
                self._projects[root] = project
                handlers = self._handlers[root] = Handlers(project, token_budget=token_budget)
                if self.warm_search:
                    threading.Thread(target=self._warm, args=(project,), daemon=True).start()
        handlers.token_budget = token_budget
        return handlers

    def follow_settings(self) -> None:
        """Take up settings saved since they were read (the app saved a new model or provider).

        The projects opened with the old settings answer no new request; each is closed once
        the longest hook budget has passed, so a request still running on it finishes first.
        """
        from desktop.composition import Engram, settings_stamp

        stamp = settings_stamp(self.data_dir)
        if stamp == self._settings_stamp:
            return
        with self._lock:
            if stamp == self._settings_stamp:
                return
            self._settings_stamp = stamp
            self.engram = Engram.for_data_dir(self.data_dir)
            retired = list(self._projects.values())
            self._projects.clear()
            self._handlers.clear()
        if retired:
            log.info("settings changed: %d project(s) reopen with them", len(retired))
            timer = threading.Timer(RETIRE_AFTER_S, self._close_all, args=(retired,))
            timer.daemon = True
            timer.start()

    @staticmethod
    def _close_all(projects: list[Project]) -> None:
        for project in projects:
            try:
                project.close()
            except Exception:
                log.exception("closing %s failed", project.info.root)

    @staticmethod
    def _warm(project: Project) -> None:
        try:
            _ = project.search
        except Exception:  # keyword search still answers
            log.exception("could not warm the search service")
        try:  # the graph path and T3 need a current graph, as for `engram mcp` and the app
            project.keep_graph_live()
        except Exception:
            log.exception("could not bring the code graph up to date")

    def answer(self, request: dict[str, Any]) -> str:
        """The context text for one request ('' for nothing)."""
        self.last_request = time.monotonic()
        call = from_dict(str(request.get("agent")), str(request.get("event")), request.get("payload"))
        self.follow_settings()
        budget = request.get("token_budget")
        if not budget:
            from desktop.agents.hooks.runner import hooks_token_budget

            budget = hooks_token_budget(self.engram.settings)
        handlers = self.handlers_for(call.cwd, int(budget))
        return handlers.handle(call) if handlers is not None else ""

    def serve(self) -> None:
        """Listen until idle for ``idle`` seconds (or another service owns the socket)."""
        import socketserver

        path = socket_path(self.data_dir)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder = os.lstat(path.parent)
        if folder.st_uid != os.getuid() or not os.path.isdir(path.parent) or os.path.islink(path.parent):
            log.warning("not serving: %s belongs to another user (hooks answer inline)", path.parent)
            return
        os.chmod(path.parent, 0o700)
        if path.exists():
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(str(path))
                log.info("a hook service already listens on %s", path)
                return
            except OSError:
                path.unlink(missing_ok=True)  # left by a service that died
            finally:
                probe.close()
        service = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                try:
                    uid = peer_uid(self.connection)
                except OSError:
                    uid = None
                if uid != os.getuid():  # the folder is private; this is the second lock
                    log.warning("service refused a connection from uid %s", uid)
                    return
                line = self.rfile.readline(MAX_REQUEST)
                try:
                    output = service.answer(json.loads(line))
                except (BadPayload, ValueError, TypeError) as exc:
                    log.warning("service ignored a request: %s", exc)
                    output = ""
                except Exception:
                    log.exception("service failed on a request")
                    output = ""
                self.wfile.write(json.dumps({"output": output}).encode())

        old = os.umask(0o177)
        try:
            self._server = socketserver.ThreadingUnixStreamServer(str(path), Handler)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        self._server.daemon_threads = True
        threading.Thread(target=self._idle_watch, daemon=True).start()
        log.info("hook service listening on %s", path)
        try:
            self._server.serve_forever(poll_interval=0.2)
        finally:
            self._server.server_close()
            path.unlink(missing_ok=True)
            self.close()

    def _idle_watch(self) -> None:
        while self._server is not None:
            time.sleep(min(5.0, self.idle / 4))
            if time.monotonic() - self.last_request > self.idle:
                log.info("hook service idle for %.0f s; stopping", self.idle)
                self._server.shutdown()
                return

    def stop(self) -> None:
        """Stop serving (from another thread)."""
        if self._server is not None:
            self._server.shutdown()

    def close(self) -> None:
        """Close every project (queued writes are flushed)."""
        with self._lock:
            for project in self._projects.values():
                try:
                    project.close()
                except Exception:
                    log.exception("closing %s failed", project.info.root)
            self._projects.clear()
            self._handlers.clear()
