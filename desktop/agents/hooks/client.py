"""The hook's side of the warm service: find it, check it is this user's, ask, answer fast.

An agent runs ``engram hook EVENT`` as a new process on every event, tool calls included,
so what that process imports is paid on every call. :func:`quick_hook` is its first path:
argv read by hand, the payload parsed, the service asked, the answer printed, with nothing
imported beyond this module, the payload protocol and the peer checks (no argparse, no
logging set-up, no threads). Whenever that path cannot answer (no service yet, a hung
one, a session start or end, an unusual command line) it hands the payload to the full
runner (:mod:`desktop.agents.hooks.runner`), which answers inline and starts the service.

The checks a client makes before it sends anything (the folder and socket are this
user's alone, the listener runs as this user, it says hello in time) live here, once, for
both paths.
"""

from __future__ import annotations

import os
import sys
import time

from desktop.agents.hooks import lean_json
from desktop.agents.hooks.peer import peer_pid, peer_uid, private_folder, private_socket
from desktop.agents.hooks.protocol import (
    BUDGETS,
    MAX_STDIN,
    SESSION_END,
    SESSION_START,
    BadPayload,
    parse,
    render_output,
)
from desktop.digests import sha256

# What this module imports is paid by every hook: typing and pathlib would add ~15 ms
# to a process that lives ~50 ms, so the names they give are for mypy only (it reads a
# module-level TYPE_CHECKING as true) and paths are strings here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import _socket
    import logging
    from pathlib import Path

    from desktop.agents.hooks.protocol import HookCall


#: Seconds a client waits for the service's hello before it calls the service hung.
PROBE_S = float(os.environ.get("ENGRAM_HOOK_PROBE") or 0.5)
HELLO = "engram-hooks"
#: The event the full runner answers: a session end hands its work to a process of its own.
FULL_PATH_EVENTS = frozenset({SESSION_END})
#: Set, hooks never ask the service (each answers inline: tests, and users who want no background process).
NO_SERVICE_ENV = "ENGRAM_HOOK_NO_SERVICE"
_OPTIONS = ("--agent", "--data-dir", "--budget", "--tokens")


def _log() -> logging.Logger:
    """The hooks' logger, imported only when there is something to say (rare on this path)."""
    import logging

    return logging.getLogger("engram.hooks")


#: A socket path must fit ``sockaddr_un.sun_path`` (108 bytes on Linux, 104 on macOS).
MAX_SOCKET_PATH = 100


def socket_path(data_dir: str | Path) -> Path:
    """The service socket for this data folder, in a folder only this user can enter.

    The user's runtime folder (``$XDG_RUNTIME_DIR``, private by definition) when there is one;
    else ``run/`` inside the data folder; the shared temp folder only when that path is too long
    for a socket (there another user could create the folder first: see :func:`ask`).
    """
    from pathlib import Path

    return Path(socket_file(data_dir))


def socket_file(data_dir: str | Path) -> str:
    """:func:`socket_path` as a string (the hook client's: no pathlib)."""
    home = os.path.realpath(data_dir)
    digest = sha256(home.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = f"hooks-{digest}.sock"
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isabs(base) and os.path.isdir(base):
        return os.path.join(base, "engram", name)
    own = os.path.join(home, "run", name)
    if len(os.fsencode(own)) <= MAX_SOCKET_PATH:
        return own
    import tempfile  # only for a data folder too deep for a socket path

    return os.path.join(tempfile.gettempdir(), f"engram-{os.getuid() if hasattr(os, 'getuid') else 'user'}", name)


def trusted(path: str | Path) -> bool:
    """True when the socket and its folder are this user's alone (never talk to another's)."""
    if private_folder(os.path.dirname(path)) and private_socket(path):
        return True
    _log().warning("refusing the hook service socket %s: its folder or socket is not this user's alone", path)
    return False


def ask(data_dir: str | Path, call: HookCall, token_budget: int | None, *, timeout: float) -> str | None:
    """The service's answer; None when no trusted, healthy service listens (the caller answers inline).

    The folder and socket must be this user's with no access for others, and the process that
    listens must run as this user (its credentials from the kernel): otherwise nothing is sent.
    A service that does not say hello within :data:`PROBE_S` (or says it is stuck) is replaced.
    """
    path = socket_file(data_dir)
    if not os.path.exists(path) or not trusted(path):
        return None
    sock = _connect(path, min(0.2, timeout), min(PROBE_S, timeout))
    if sock is None:
        return None
    try:
        sock.settimeout(timeout)
        sock.sendall(lean_json.dumps({**call.as_json(), "token_budget": token_budget}).encode() + b"\n")
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
        reply = lean_json.loads(b"".join(chunks) or b"{}")
        return str(reply.get("output") or "")
    except (OSError, ValueError) as exc:
        # It said hello but gave no usable answer: do not repeat the work inline over the budget.
        _log().warning("service did not answer %s: %s", call.event, exc)
        return ""
    finally:
        sock.close()


def _connect(path: str | Path, connect_s: float, probe_s: float) -> _socket.socket | None:
    """A connection to a healthy service of this user on ``path``, its hello read; None otherwise.

    A listener that does not accept (its backlog full), says no hello in time or says it is stuck
    is replaced (:func:`replace_stuck`).
    """
    # The C module, not ``socket``: that one builds its enums and loads ``selectors`` (~20 ms of a
    # hook process); only a hook that finds a service's socket file connects.
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(connect_s)
    try:
        sock.connect(str(path))
        if peer_uid(sock) != os.getuid():
            _log().warning("refusing the hook service on %s: it runs as another user", path)
        elif healthy(sock, probe_s):
            return sock
        else:
            replace_stuck(path, peer_pid(sock))
    except TimeoutError:  # the listener stopped accepting: its backlog is full
        replace_stuck(path, None)
    except OSError:
        pass
    sock.close()
    return None


def healthy(sock: _socket.socket, probe: float) -> bool:
    """Whether the service on ``sock`` says hello within ``probe`` seconds and is not stuck."""
    sock.settimeout(max(0.01, probe))
    line = b""
    try:
        while not line.endswith(b"\n") and len(line) < 256:
            chunk = sock.recv(256 - len(line))
            if not chunk:
                break
            line += chunk
        hello = lean_json.loads(line or b"{}")
    except (OSError, ValueError):
        return False
    return isinstance(hello, dict) and hello.get("hello") == HELLO and not hello.get("stuck")


def replace_stuck(path: str | Path, pid: int | None) -> None:
    """Kill the hung service of ``path`` (this user's ``engram serve`` only; never this process).

    ``pid`` is the listener's from the kernel (``SO_PEERCRED``), else the one the service wrote
    beside its socket. The next service started takes the socket over (:meth:`HookService.serve`);
    where neither names it (not Linux) the hook still answers inline, every time.
    """
    if pid is None:
        try:
            pid = int(pid_path(path).read_text(encoding="ascii").strip())
        except (OSError, ValueError):
            pid = None
    if pid is None or pid <= 1 or pid == os.getpid() or not _is_our_service(pid):
        _log().warning("the hook service on %s does not answer; answering inline", path)
        return
    try:
        import signal

        os.kill(pid, signal.SIGKILL)
        _log().warning("the hook service %d on %s did not answer in time: replaced", pid, path)
    except OSError as exc:
        _log().warning("could not stop the hung hook service %d: %s", pid, exc)


def pid_path(path: str | Path) -> Path:
    """Where the service listening on socket ``path`` writes its process id (its private folder)."""
    from pathlib import Path

    return Path(path).with_suffix(".pid")


def _is_our_service(pid: int) -> bool:
    """A process of this user running ``engram serve`` (read from /proc; False where there is none)."""
    try:
        st = os.stat(f"/proc/{pid}")
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return False
    return st.st_uid == os.getuid() and b"serve" in argv


def silence_stderr() -> None:
    """Point fd 2 at /dev/null: the agent shows a hook's stderr to the user, and nothing a
    library, a thread's uncaught exception or the interpreter prints there is for them."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.close(null)
    except OSError:
        pass


def read_stdin() -> bytes:
    """The hook's payload (at most one byte more than a payload may be, so too large is known)."""
    return sys.stdin.buffer.read(MAX_STDIN + 1) if sys.stdin is not None else b""


def hook_options(argv: list[str]) -> dict[str, str] | None:
    """``EVENT --agent A --data-dir D --budget S --tokens N`` read by hand; None for anything else
    (help, an unknown option: the full runner's parser deals with those)."""
    found: dict[str, str] = {}
    rest = list(argv)
    while rest:
        word = rest.pop(0)
        name, eq, value = word.partition("=")
        if name in _OPTIONS:
            if not eq:
                if not rest:
                    return None
                value = rest.pop(0)
            found[name[2:]] = value
        elif word.startswith("-") or "event" in found:
            return None
        else:
            found["event"] = word
    return found if "event" in found else None


def quick_hook(argv: list[str], stdin: bytes) -> bool:
    """Answer one hook through a running service and print it; False when the full runner must.

    True means the hook is done (its answer, maybe nothing, is printed). Never raises.
    """
    started = time.monotonic()
    if os.environ.get(NO_SERVICE_ENV):
        return False
    try:
        opts = hook_options(argv)
        if opts is None:
            return False
        call = parse(opts.get("agent", "claude-code"), opts["event"], stdin)
        if call.event in FULL_PATH_EVENTS:
            return False
        budget = float(opts["budget"]) if "budget" in opts else BUDGETS.get(call.event, 3.0)
        tokens = int(opts["tokens"]) if "tokens" in opts else None
        if "data-dir" in opts:
            data_dir = os.path.expanduser(opts["data-dir"])
        else:
            from desktop.data_location import default_data_folder

            data_dir = default_data_folder()
        if call.event == SESSION_START:  # what the last session showed should be learned by now
            if not os.path.exists(socket_file(data_dir)):
                return False  # the full runner waits, answers inline and starts the service
            from desktop.agents.hooks.finalising import WAIT_FOR_LEARNING_S, wait_for_pending

            wait_for_pending(data_dir, min(WAIT_FOR_LEARNING_S, budget / 2))
        reply = ask(data_dir, call, tokens, timeout=max(0.05, started + budget - time.monotonic()))
    except (BadPayload, ValueError, OSError):
        return False  # the full runner logs why and answers what it can
    if reply is None:
        return False
    out = render_output(call, reply)
    if out:
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    return True
