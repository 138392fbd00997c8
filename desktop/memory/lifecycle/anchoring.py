"""Anchor new memories to the code they are about, as they are written.

Staleness checks compare a memory's recorded content hashes with the working
tree; a memory only has hashes if something recorded them. This watcher does it
for every new memory that names related files (not for code chunks, which the
indexer replaces whenever their file changes), in the background, one batch op
per commit it sees.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from desktop.memory.lifecycle.staleness import compute_anchors, head_commit
from desktop.memory.store.writer import ChangeSet, FnOp, Tx, WriteOp

log = logging.getLogger("engram.lifecycle")

_STOP = object()


class SetAnchors(WriteOp[int]):
    """Record anchors and HEAD on memories that have none yet (audited once per batch)."""

    name: ClassVar[str] = "set_anchors"

    def __init__(self, anchors: dict[int, dict[str, str]], commit: str | None) -> None:
        self.anchors = anchors
        self.commit = commit

    def apply(self, tx: Tx) -> int:
        """Write anchors only where none exist (a user may have anchored meanwhile)."""
        done = []
        for mid, anchors in self.anchors.items():
            cur = tx.execute("UPDATE memories SET code_anchors = ?, commit_sha = COALESCE(commit_sha, ?) "
                             "WHERE id = ? AND code_anchors = '{}'", (json.dumps(anchors), self.commit, mid))
            if tx.conn.changes():
                done.append(mid)
            del cur
        if done:
            tx.audit("anchor", None, actor="engram", reason="anchored to the code it is about",
                     detail={"memories": done[:200], "count": len(done)})
            tx.changed("memory", "anchored", done)
        return len(done)


class AnchorWatcher:
    """Background thread: new memories with related files get their code anchors."""

    def __init__(self, db: Any, root: Path, *, on_anchored: Callable[[int], None] | None = None) -> None:
        self.db = db
        self.root = Path(root)
        self.on_anchored = on_anchored
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._unsubscribe: Callable[[], None] | None = None
        self._thread = threading.Thread(target=self._run, name="engram-anchors", daemon=True)
        self._idle = threading.Event()
        self._idle.set()

    def start(self) -> AnchorWatcher:
        """Subscribe to the writer and start the worker."""
        self._unsubscribe = self.db.writer.subscribe(self._on_change)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop listening and let the worker finish."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join(10)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Block until everything committed so far is anchored (tests)."""
        self.db.writer.run(FnOp("anchor_watch_sync", lambda tx: None), timeout)
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
                self._anchor(item)
            except Exception:  # the watcher must outlive any one bad batch
                log.exception("anchoring failed for %d memories", len(item))
            if self._queue.empty():
                self._idle.set()

    def _anchor(self, ids: list[int]) -> None:
        marks = ",".join("?" * len(ids))
        rows = self.db.reads.conn().execute(
            f"SELECT id, related_files FROM memories WHERE id IN ({marks}) AND type <> 'code' "
            f"AND source <> 'code_index' AND code_anchors = '{{}}' AND related_files <> '[]'", ids).fetchall()
        anchors = {}
        for mid, files in rows:
            found = compute_anchors(self.root, json.loads(files))
            if found:
                anchors[int(mid)] = found
        if anchors:
            done = self.db.writer.submit(SetAnchors(anchors, head_commit(self.root))).result(30)
            if self.on_anchored:
                self.on_anchored(done)
