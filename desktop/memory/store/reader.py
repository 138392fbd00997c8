"""Per-thread read connections.

SQLite connections must not be shared between threads; WAL lets any number of
readers run beside the one writer without blocking it. Each thread lazily gets
its own `query_only` connection.
"""

from __future__ import annotations

import threading
import weakref
from pathlib import Path

import apsw

from desktop.memory.store.connection import open_connection


class ReadPool:
    """Hands each thread its own read-only connection to one database."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        self._local = threading.local()
        self._all: weakref.WeakSet[apsw.Connection] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._closed = False

    def conn(self) -> apsw.Connection:
        """The calling thread's read connection (opened on first use)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = open_connection(self.path, readonly=True)
            self._local.conn = conn
            with self._lock:
                self._all.add(conn)
        return conn

    def close(self) -> None:
        """Close every connection this pool opened (call at shutdown)."""
        with self._lock:
            conns = list(self._all)
            self._closed = True
        for conn in conns:
            try:
                conn.close()
            except apsw.Error:
                pass
        self._local = threading.local()
