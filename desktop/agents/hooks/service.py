"""``engram serve``: the warm local service hooks ask first.

A hook is a new process per event; opening the database, importing the core and
(for search by meaning) loading a model every time would cost the agent seconds.
The service keeps each project it has been asked about open, with its writer and
its hybrid search warm, and answers hook clients over a Unix domain socket in the
user's runtime folder (folder 0700, socket 0600, no TCP port). One JSON request
per connection, one JSON answer. It exits after ``idle`` seconds without a request.
The first hook that finds no service starts one in the background and answers
inline from FTS5 itself; later hooks get the warm answer.

A service can hang (stopped, deadlocked, starved): the kernel still accepts
connections on its socket, so a client that simply waited would spend its whole
budget and lose what the hook would have learned. So the service greets every
connection at once with a hello line (from the connection's own thread, before any
work), which also says when a request has been running far longer than any hook
may (:data:`STUCK_S`). A client that gets no hello within :data:`PROBE_S`, or a
"stuck" one, answers inline and replaces the service: the listener's pid comes from
the kernel (``SO_PEERCRED``), it is killed after checking it is this user's
``engram serve``, and the next service takes the socket over.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.agents.hooks.client import HELLO, PROBE_S, healthy, pid_path, replace_stuck, socket_path
from desktop.agents.hooks.peer import peer_pid, peer_uid
from desktop.agents.hooks.protocol import BadPayload, from_dict

if TYPE_CHECKING:  # the hook client (a new process per agent event) never serves
    import socketserver

    from desktop.agents.hooks.handlers import Handlers
    from desktop.memory.project import Project

log = logging.getLogger("engram.hooks")

IDLE_S = 900.0
IDLE_ENV = "ENGRAM_SERVE_IDLE"  # seconds an on-demand service waits for the next hook before exiting
MAX_REQUEST = 4 * 1024 * 1024
#: A request running this long is stuck (the longest hook budget is 40 s, so every client that
#: asked has given up on it): the hello says so and the next client replaces the service.
STUCK_S = 60.0
#: Projects opened with settings since replaced are closed this long after (the longest hook budget).
RETIRE_AFTER_S = 45.0


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

    def __init__(self, data_dir: Path, *, idle: float = IDLE_S, warm_search: bool = True,
                 stuck_after: float = STUCK_S) -> None:
        """``warm_search`` builds each project's hybrid search in the background; a request running
        longer than ``stuck_after`` seconds makes the hello say the service is stuck."""
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
        self.stuck_after = stuck_after
        self._busy: dict[int, float] = {}  # thread ident -> when its request started
        self._busy_lock = threading.Lock()
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

    def hello(self) -> bytes:
        """The line every connection gets first: alive, and whether a request has been stuck."""
        now = time.monotonic()
        with self._busy_lock:
            stuck = any(now - started > self.stuck_after for started in self._busy.values())
        return json.dumps({"hello": HELLO, "stuck": stuck}).encode() + b"\n"

    def answer(self, request: dict[str, Any]) -> str:
        """The context text for one request ('' for nothing)."""
        me = threading.get_ident()
        with self._busy_lock:
            self._busy[me] = time.monotonic()
        try:
            return self._answer(request)
        finally:
            with self._busy_lock:
                self._busy.pop(me, None)

    def _answer(self, request: dict[str, Any]) -> str:
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
        if path.exists() and not self._take_over(path):
            return
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
                self.wfile.write(service.hello())  # before any work: the client's proof of life
                self.wfile.flush()
                line = self.rfile.readline(MAX_REQUEST)
                if not line.strip():
                    return  # a probe (another service, or a client that gave up): nothing asked
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
        try:  # for a client that cannot learn the listener's pid from the kernel (a full backlog)
            pid_path(path).write_text(str(os.getpid()), encoding="ascii")
        except OSError:
            pass
        self._server.daemon_threads = True
        threading.Thread(target=self._idle_watch, daemon=True).start()
        log.info("hook service listening on %s", path)
        try:
            self._server.serve_forever(poll_interval=0.2)
        finally:
            self._server.server_close()
            path.unlink(missing_ok=True)
            pid_path(path).unlink(missing_ok=True)
            self.close()

    def _take_over(self, path: Path) -> bool:
        """Whether this service may listen on ``path``: nobody answers there, or a hung service did
        (it is replaced). False when a healthy service already listens."""
        for _ in range(40):  # a service just killed needs a moment to let go of its socket
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            probe.settimeout(0.5)
            try:
                probe.connect(str(path))
                if healthy(probe, PROBE_S):
                    log.info("a hook service already listens on %s", path)
                    return False
                replace_stuck(path, peer_pid(probe))
            except TimeoutError:
                replace_stuck(path, None)
            except OSError:
                path.unlink(missing_ok=True)  # left by a service that died
                return True
            finally:
                probe.close()
            time.sleep(0.05)
        log.warning("the hook service on %s could not be replaced", path)
        return False

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
