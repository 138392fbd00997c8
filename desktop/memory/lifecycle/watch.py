"""Lifecycle work that follows writes: conflict detection on every new memory.

The writer publishes a ChangeSet after each commit; this watcher takes the ids
of added memories from it (in the writer thread, so it only queues them) and a
worker thread detects conflicts and records the links as an ordinary WriteOp.
Detection never runs inside a transaction and never slows the write it follows.
Bulk sources (imports, code chunks) are skipped: they are not claims an agent
or a person just made.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from desktop.memory.lifecycle.conflict_store import RecordConflicts, find_conflicts
from desktop.memory.lifecycle.conflicts import Conflict, Embed
from desktop.memory.store.errors import EngramError
from desktop.memory.store.writer import ChangeSet, FnOp

log = logging.getLogger("engram.lifecycle")

SKIP_SOURCES = ("imported", "code_index")
_STOP = object()


class ConflictWatcher:
    """Detect conflicts of newly added memories in the background."""

    def __init__(self, db: Any, *, embed: Embed | None = None,
                 on_conflicts: Callable[[list[Conflict]], None] | None = None) -> None:
        self.db = db
        self.embed = embed
        self.on_conflicts = on_conflicts
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._unsubscribe: Callable[[], None] | None = None
        self._thread = threading.Thread(target=self._run, name="engram-conflicts", daemon=True)
        self._idle = threading.Event()
        self._idle.set()

    def start(self) -> ConflictWatcher:
        """Subscribe to the writer and start the worker."""
        self._unsubscribe = self.db.writer.subscribe(self._on_change)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop listening and let the worker finish what it has."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join(10)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Block until queued ids are processed (tests, CLI)."""
        # A no-op write: once it ran, every earlier commit has been published to us.
        self.db.writer.run(FnOp("conflict_watch_sync", lambda tx: None), timeout)
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
            try:
                self._check(item)
            except Exception:  # the watcher must outlive any one bad batch
                log.exception("conflict check failed for %d memories", len(item))
            if self._queue.empty():
                self._idle.set()

    def _check(self, ids: list[int]) -> None:
        conn = self.db.reads.conn()
        marks = ",".join("?" * len(ids))
        wanted = [int(r[0]) for r in conn.execute(
            f"SELECT id FROM memories WHERE id IN ({marks}) AND deprecated = 0 AND type <> 'code' "
            f"AND source NOT IN ({','.join('?' * len(SKIP_SOURCES))})", [*ids, *SKIP_SOURCES])]
        found: list[Conflict] = []
        for mid in wanted:
            try:
                found += find_conflicts(self.db, mid, embed=self.embed)
            except EngramError:
                continue
        if found:
            self.db.writer.run(RecordConflicts(found))
            log.info("conflicts detected on write: %s", [(c.a, c.b) for c in found])
            if self.on_conflicts is not None:
                self.on_conflicts(found)


def lifecycle_for(project: Any, *, embed: Embed | None = None) -> ConflictWatcher:
    """The project's conflict watcher, started once and kept in ``project.extras['lifecycle']``."""
    known = project.extras.get("lifecycle")
    if known is not None:
        return known
    watcher = ConflictWatcher(project.db, embed=embed).start()
    project.extras["lifecycle"] = watcher
    return watcher
