"""Emergency hard delete: for a secret stored by mistake, leave no trace anywhere.

The row goes, and so do its FTS tokens (contentless_delete, then 'optimize'
rewrites the index segments), its vectors (every vec0 table in
``vector_spaces``), the reason and detail text of its audit entries, the freed
pages (VACUUM with secure_delete) and the WAL (TRUNCATE checkpoint), because a
deleted row's bytes otherwise linger in free pages and old WAL frames.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from desktop.memory.lifecycle.purge import fill_temp, purge_temp
from desktop.memory.store.writer import MaintenanceOp, Tx, WriteOp

log = logging.getLogger("engram.lifecycle")


class EmergencyDelete(WriteOp[int]):
    """Delete memories with their vectors and every word their audit entries held."""

    name: ClassVar[str] = "emergency_delete"

    def __init__(self, memory_ids: list[int], *, actor: str = "user", reason: str | None = None) -> None:
        self.memory_ids = sorted(set(int(i) for i in memory_ids))
        self.actor = actor
        self.reason = reason

    def apply(self, tx: Tx) -> int:
        """Scrub audit text, delete vectors and rows, then write a content-free audit entry."""
        existing = [int(r[0]) for r in tx.execute(
            f"SELECT id FROM memories WHERE id IN ({','.join('?' * len(self.memory_ids))})", self.memory_ids)
        ] if self.memory_ids else []
        if not existing:
            return 0
        fill_temp(tx, "_emergency", existing)
        n = purge_temp(tx, "_emergency", scrub_reason=True)
        for mid in existing:
            # The explanation names the memory, never its text (the reason is the user's own words).
            tx.audit("hard_delete", mid, actor=self.actor, reason=self.reason or "emergency delete",
                     detail={"emergency": True})
        tx.changed("memory", "deleted", existing)
        return n


class ScrubDatabase(MaintenanceOp[None]):
    """Rewrite the FTS index, vacuum and truncate the WAL (runs outside any transaction)."""

    name: ClassVar[str] = "scrub_database"

    def apply(self, tx: Tx) -> None:
        """Optimize FTS, VACUUM with secure_delete, checkpoint(TRUNCATE)."""
        conn = tx.conn
        conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")
        conn.execute("PRAGMA secure_delete = ON")
        try:
            conn.execute("VACUUM")
            # A reader holding an old snapshot would keep WAL frames alive; retry once
            # after the busy handler so the WAL really ends up empty.
            for _ in range(2):
                busy, _log, _done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()[0]
                if not busy:
                    break
            else:
                log.warning("WAL could not be truncated: a reader is still open")
        finally:
            conn.execute("PRAGMA secure_delete = FAST")
        tx.changed("memory", "scrubbed")


def emergency_delete(project: Any, memory_ids: list[int], *, reason: str, actor: str = "user") -> int:
    """Delete memories for good and scrub every place their text could survive. Returns how many.

    Raises NotFoundError when none of the ids exists.
    """
    from desktop.memory.store.errors import NotFoundError

    db = project.db
    deleted = int(db.writer.run(EmergencyDelete(memory_ids, actor=actor, reason=reason)))
    if not deleted:
        raise NotFoundError(f"Memory #{', #'.join(str(i) for i in memory_ids)} does not exist.")
    # Our own read connection may hold the WAL open; close it before the checkpoint.
    db.reads.close()
    db.writer.run(ScrubDatabase(), 600)
    log.info("emergency delete of %s: %d removed, database scrubbed", memory_ids, deleted)
    return deleted
