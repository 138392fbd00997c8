"""Emergency hard delete: for a secret stored by mistake, leave no trace anywhere.

The row goes, and so do its FTS tokens (contentless_delete + optimize rewrites
the index segments), its vectors (vec0 delete triggers), the text of its audit
entries, the freed pages (VACUUM) and the WAL (TRUNCATE checkpoint), because a
deleted row's bytes otherwise linger in free pages and old WAL frames.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from desktop.memory.store.writer import MaintenanceOp, Tx

log = logging.getLogger("engram.lifecycle")


class ScrubDatabase(MaintenanceOp[None]):
    """Rewrite the FTS index, vacuum and truncate the WAL (runs outside any transaction)."""

    name: ClassVar[str] = "scrub_database"

    def apply(self, tx: Tx) -> None:
        """Optimize FTS, VACUUM, checkpoint(TRUNCATE)."""
        conn = tx.conn
        conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        tx.changed("memory", "scrubbed")


def emergency_delete(project: Any, memory_ids: list[int], *, reason: str, actor: str = "user") -> int:
    """Delete memories for good and scrub every place their text could survive. Returns how many."""
    deleted = project.memories.hard_delete(memory_ids, reason=reason, actor=actor).result()
    project.db.writer.run(ScrubDatabase())
    log.info("emergency delete of %s: %d removed, database scrubbed", memory_ids, deleted)
    return int(deleted)
