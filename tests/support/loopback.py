"""Fake HTTP servers on 127.0.0.1: one lifecycle for every fake API the tests run.

The providers under test talk real HTTP; these helpers give each fake a free
loopback port, a daemon serving thread and a clean shutdown, and give the
"server down" tests a URL on which nothing listens.
"""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class LoopbackServer:
    """A ``ThreadingHTTPServer`` on a free 127.0.0.1 port, served from a daemon thread."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], *, name: str = "fake-api") -> None:
        """Bind now (so ``url`` is known); serve once :meth:`start` is called."""
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), name=name, daemon=True)
        self._stopped = threading.Event()

    def start(self) -> Self:
        """Serve on the background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port (idempotent)."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        if self._thread.is_alive():
            self.server.shutdown()
            self._thread.join(timeout=5)
        self.server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def dead_url() -> str:
    """A loopback URL on which nothing listens (connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
