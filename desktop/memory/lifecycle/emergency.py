"""Emergency hard delete: for a secret stored by mistake, leave no trace anywhere.

The row goes, and so do its FTS tokens (contentless_delete, then 'optimize'
rewrites the index segments), its vectors (every vec0 table in
``vector_spaces``), the reason and detail text of its audit entries, the freed
pages (VACUUM with secure_delete) and the WAL (TRUNCATE checkpoint), because a
deleted row's bytes otherwise linger in free pages and old WAL frames.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, ClassVar, TypeVar

from desktop.memory.store.connection import count_of
from desktop.memory.store.sources import drop_sources
from desktop.memory.store.writer import MaintenanceOp, Tx, WriteOp

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.lifecycle")
T = TypeVar("T")

# -- set-based hard delete, shared by pruning, emergency delete and "delete all" --------
# The ids go into a temp table, then a handful of statements remove the text of their
# audit entries, their vectors (every vec0 table registered in ``vector_spaces``) and
# their rows (the FTS delete trigger and the foreign-key cascades follow). Few
# statements over a temp table keep a 100,000-row pass inside one short op.

# Code chunks are owned by the graph indexer, which replaces them when files change;
# lifecycle rules (TTL, soft limit, staleness) never apply to them.
CODE_TYPE = "code"


def fill_temp(tx: Tx, table: str, ids: Iterable[int]) -> int:
    """(Re)create ``temp.<table>(id)`` holding `ids`; returns how many."""
    tx.execute(f"CREATE TEMP TABLE IF NOT EXISTS {table}(id INTEGER PRIMARY KEY)")
    tx.execute(f"DELETE FROM temp.{table}")
    rows = [(int(i),) for i in ids]
    if rows:
        tx.conn.executemany(f"INSERT OR IGNORE INTO temp.{table}(id) VALUES (?)", rows)
    return len(rows)


def vector_tables(tx: Tx) -> list[str]:
    """Names of the vec0 tables registered in ``vector_spaces`` that really exist."""
    names = [str(r[0]) for r in tx.execute("SELECT table_name FROM vector_spaces")]
    existing = {str(r[0]) for r in tx.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return [n for n in names if n in existing]


def _vector_key(tx: Tx, table: str) -> str:
    # vec0 tables key vectors by rowid unless they declare a memory_id primary key.
    cols = {str(r[1]) for r in tx.execute(f'PRAGMA table_info("{table}")')}
    return "memory_id" if "memory_id" in cols else "rowid"


def purge_temp(tx: Tx, table: str, *, scrub_audit: bool = True, scrub_reason: bool = False) -> int:
    """Hard-delete every memory whose id is in ``temp.<table>``; returns how many rows went.

    The caller writes the audit entry of the deletion after this scrub, so the
    explanation survives while the text of the earlier entries does not.
    """
    sets = "detail = '{\"scrubbed\": true}'" + (", reason = NULL" if scrub_reason else "")
    if scrub_audit:
        tx.execute(f"UPDATE audit_log SET {sets} WHERE memory_id IN (SELECT id FROM temp.{table})")
    ids = [int(r[0]) for r in tx.execute(f"SELECT id FROM temp.{table}")]
    for vt in vector_tables(tx):
        key = _vector_key(tx, vt)
        # vec0 answers point deletes by key; an IN (subquery) would scan the whole table.
        tx.conn.executemany(f'DELETE FROM "{vt}" WHERE {key} = ?', [(i,) for i in ids])
    tx.execute(f"DELETE FROM memories WHERE id IN (SELECT id FROM temp.{table})")
    return tx.conn.changes()


def in_own_transaction(tx: Tx, fn: Callable[[Tx], T]) -> T:
    """Run `fn` in one BEGIN IMMEDIATE ... COMMIT of its own (for MaintenanceOps doing bulk writes).

    The writer wraps ordinary ops in a savepoint, which makes SQLite copy every page
    first touched inside it to a sub-journal; bulk passes touching pages all over the
    FTS index and the memories indexes run about twice as fast without it. Any error
    rolls the whole pass back, so it is still all or nothing.
    """
    tx.conn.execute("BEGIN IMMEDIATE")
    try:
        result = fn(tx)
    except BaseException:
        if not tx.conn.getautocommit():
            tx.conn.execute("ROLLBACK")
        tx.changes.clear()
        raise
    tx.conn.execute("COMMIT")
    return result


def live_count(tx: Tx) -> int:
    """Live (not deprecated) memories other than code chunks: what the soft limit counts."""
    return count_of(tx.execute("SELECT count(*) FROM memories WHERE deprecated = 0 AND type <> ?",
                               (CODE_TYPE,)))



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
        drop_sources(tx, "SELECT id FROM temp._emergency", [])
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


def emergency_delete(project: Project, memory_ids: list[int], *, reason: str, actor: str = "user") -> int:
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
