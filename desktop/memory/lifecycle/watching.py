"""A background worker that reacts to newly added memories.

The writer publishes a ChangeSet after each commit, in the writer thread; a
watcher only queues the added ids there, and a worker thread of its own does the
work (reads on its own connection, writes as ordinary ops), so a watcher never
runs inside a transaction and never slows the write it follows.
"""

from __future__ import annotations

import abc
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any, Self

from desktop.memory.store.changes import ChangeSet
from desktop.memory.store.writer import FnOp

log = logging.getLogger("engram.lifecycle")

_STOP = object()


class AddedMemoryWatcher(abc.ABC):
    """Subclasses implement `handle(ids)`; start/close/wait_idle are shared."""

    thread_name = "engram-watcher"

    def __init__(self, db: Any) -> None:
        self.db = db
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._unsubscribe: Callable[[], None] | None = None
        self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
        self._idle = threading.Event()
        self._idle.set()
        self._stopping = threading.Event()

    @property
    def stopping(self) -> bool:
        """True once close() gave up waiting: ``handle`` should return between items (the
        database is about to close under it; what is left is checked on a later run)."""
        return self._stopping.is_set()

    @abc.abstractmethod
    def handle(self, ids: list[int]) -> None:
        """Process the ids of memories added by one commit (in the worker thread)."""

    def start(self) -> Self:
        """Subscribe to the writer and start the worker."""
        self._unsubscribe = self.db.writer.subscribe(self._on_change)
        self._thread.start()
        return self

    def close(self, drain: float = 5.0) -> None:
        """Handle what was committed so far (up to `drain` seconds), then stop.

        Draining first is what makes a short-lived process (one CLI command, an MCP
        call followed by exit) get the same upkeep as the long-running app.
        """
        if self._unsubscribe is not None and drain > 0 and self.db.writer.running:
            try:
                self.wait_idle(drain)
            except Exception:  # closing must not fail because the writer is gone
                log.warning("%s: could not drain before close", self.thread_name)
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._stopping.set()
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join(10)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Block until everything committed so far is handled (tests, CLI)."""
        # A no-op write: once it ran, every earlier commit has been published to us.
        self.db.writer.run(FnOp(f"{self.thread_name}_sync", lambda tx: None), timeout)
        return self._idle.wait(timeout)

    def _on_change(self, changes: ChangeSet) -> None:
        ids = changes.ids("memory", "added")
        if ids:
            self._idle.clear()
            self._queue.put(sorted(ids))

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            if self.stopping:
                continue  # closing: leave the rest (the STOP behind it ends the loop)
            try:
                self.handle(item)
            except Exception:  # the watcher must outlive any one bad batch
                if self.stopping:  # the database closed under a batch we were told to drop
                    log.debug("%s stopped during a batch of %d memories", self.thread_name, len(item))
                else:
                    log.exception("%s failed for %d memories", self.thread_name, len(item))
            if self._queue.empty():
                self._idle.set()
