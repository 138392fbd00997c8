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
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from desktop.memory.lifecycle.staleness import compute_anchors, head_commit
from desktop.memory.lifecycle.watching import AddedMemoryWatcher
from desktop.memory.store.writer import Tx, WriteOp

log = logging.getLogger("engram.lifecycle")


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


class AnchorWatcher(AddedMemoryWatcher):
    """Background thread: new memories with related files get their code anchors."""

    thread_name = "engram-anchors"

    def __init__(self, db: Any, root: Path, *, on_anchored: Callable[[int], None] | None = None) -> None:
        super().__init__(db)
        self.root = Path(root)
        self.on_anchored = on_anchored

    def handle(self, ids: list[int]) -> None:
        """Anchor the added memories that name files."""
        self._anchor(ids)

    def _anchor(self, ids: list[int]) -> None:
        marks = ",".join("?" * len(ids))
        rows = self.db.reads.conn().execute(
            f"SELECT id, related_files FROM memories WHERE id IN ({marks}) AND type <> 'code' "
            f"AND source <> 'code_index' AND code_anchors = '{{}}' AND related_files <> '[]'", ids).fetchall()
        anchors = {}
        for mid, files in rows:
            if self.stopping:
                return  # closing: `engram check-stale` / idle work anchors the rest later
            found = compute_anchors(self.root, json.loads(files))
            if found:
                anchors[int(mid)] = found
        if anchors:
            done = self.db.writer.submit(SetAnchors(anchors, head_commit(self.root))).result(30)
            if self.on_anchored:
                self.on_anchored(done)
