"""Shared set-based helpers: hard-delete a set of memories and count the live set.

Pruning, emergency delete and "delete all" remove memories the same way: the
ids go into a temp table, then a handful of statements remove the text of their
audit entries, their vectors (every vec0 table registered in ``vector_spaces``),
their rows (the FTS delete trigger and the foreign-key cascades follow). Few
statements over a temp table keep a 100,000-row pass inside one short op.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from desktop.memory.store.writer import Tx

log = logging.getLogger("engram.lifecycle")

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


def live_count(tx: Tx) -> int:
    """Live (not deprecated) memories other than code chunks: what the soft limit counts."""
    return int(tx.execute("SELECT count(*) FROM memories WHERE deprecated = 0 AND type <> ?",
                          (CODE_TYPE,)).fetchall()[0][0])
