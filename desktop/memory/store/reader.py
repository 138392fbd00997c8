"""Per-thread read connections.

SQLite connections must not be shared between threads; WAL lets any number of
readers run beside the one writer without blocking it. Each thread lazily gets
its own `query_only` connection.

Python threads keep theirs in a threading.local, so it closes when the thread
ends. Threads Qt created (a QThread running an agent session) do not keep Python
thread-locals reliably, and an apsw connection lost that way crashed; those get
theirs from a dict keyed by thread id and should `release()` it before ending.
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
        self._foreign: dict[int, apsw.Connection] = {}
        self._all: weakref.WeakSet[apsw.Connection] = weakref.WeakSet()
        self._lock = threading.Lock()

    def conn(self) -> apsw.Connection:
        """The calling thread's read connection (opened on first use)."""
        if isinstance(threading.current_thread(), threading._DummyThread):
            return self._foreign_conn()
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = open_connection(self.path, readonly=True)
            self._local.conn = conn
            with self._lock:
                self._all.add(conn)
        return conn

    def _foreign_conn(self) -> apsw.Connection:
        ident = threading.get_ident()
        conn = self._foreign.get(ident)
        if conn is None:
            conn = open_connection(self.path, readonly=True)
            with self._lock:
                self._foreign[ident] = conn
                self._all.add(conn)
        return conn

    def release(self) -> None:
        """Close the calling thread's connection (a Qt thread about to end calls this)."""
        with self._lock:
            conn = self._foreign.pop(threading.get_ident(), None)
        if conn is None:
            conn = getattr(self._local, "conn", None)
            self._local.conn = None
        if conn is not None:
            try:
                conn.close()
            except apsw.Error:
                pass

    def close(self) -> None:
        """Close every connection this pool opened (call at shutdown)."""
        with self._lock:
            conns = list(self._all)
            self._foreign.clear()
        for conn in conns:
            try:
                conn.close()
            except apsw.Error:
                pass
        self._local = threading.local()
