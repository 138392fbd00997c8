"""Vector spaces in the database: one sqlite-vec table per (model, dims), and the writes on them.

A space is a ``vec0`` table holding one float vector per memory (rowid = memory
id) plus the cache key of the text it was computed from (so an edit is noticed),
and a companion ``bit[N]`` table with the sign-quantised vector for the coarse
first pass on large projects. Queries only ever touch the *active* space's
tables, so vectors of two models are never compared.

Every write here is a :class:`WriteOp` run by the writer thread; the vectors
are computed beforehand, outside any transaction.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from desktop.memory.store.live import LIVE_SQL
from desktop.memory.store.writer import Tx, WriteOp

__all__ = [
    "CACHE_TTL_S",
    "ActivateSpace",
    "EnsureSpace",
    "FinishJob",
    "PurgeCache",
    "Space",
    "WriteVectors",
    "active_space",
    "cache_lookup",
    "missing_ids",
    "running_job",
]

log = logging.getLogger("engram.embedding")

# Cached vectors outlive a model switch and back; a month keeps the table bounded.
CACHE_TTL_S = 30 * 86400
_SAFE = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class Space:
    """One vector space: the model that made its vectors and the tables holding them."""

    id: int
    model_id: str
    dims: int
    table: str
    active: bool

    @property
    def bin_table(self) -> str:
        """Companion table of sign-quantised vectors (``bit[dims]``) for the coarse pass."""
        return f"{self.table}_bin"


def _row_to_space(row: Sequence[Any]) -> Space:
    return Space(int(row[0]), str(row[1]), int(row[2]), str(row[3]), bool(row[4]))


def active_space(conn: Any) -> Space | None:
    """The active space, or None before anything was embedded."""
    rows = conn.execute(
        "SELECT id, model_id, dims, table_name, active FROM vector_spaces WHERE active = 1 "
        "ORDER BY id DESC LIMIT 1").fetchall()
    return _row_to_space(rows[0]) if rows else None


def find_space(conn: Any, model_id: str, dims: int) -> Space | None:
    """The space of (model_id, dims), active or not."""
    rows = conn.execute(
        "SELECT id, model_id, dims, table_name, active FROM vector_spaces WHERE model_id = ? AND dims = ?",
        (model_id, dims)).fetchall()
    return _row_to_space(rows[0]) if rows else None


def running_job(conn: Any, model_id: str, dims: int) -> dict[str, Any] | None:
    """The unfinished re-embedding job of (model_id, dims), if any."""
    rows = conn.execute(
        "SELECT id, last_memory_id, done_count, total_count FROM embedding_jobs "
        "WHERE model_id = ? AND dims = ? AND state = 'running' ORDER BY id DESC LIMIT 1",
        (model_id, dims)).fetchall()
    if not rows:
        return None
    jid, last, done, total = rows[0]
    return {"id": int(jid), "last_memory_id": int(last), "done_count": int(done), "total_count": int(total)}


def missing_ids(conn: Any, space: Space, *, after: int = 0, limit: int = 10_000) -> list[int]:
    """Live memories of id > ``after`` that have no vector in ``space`` yet, in id order."""
    rows = conn.execute(
        f"SELECT id FROM memories WHERE {LIVE_SQL} AND id > ? "
        f"AND id NOT IN (SELECT rowid FROM {space.table}) ORDER BY id LIMIT ?",
        (after, limit)).fetchall()
    return [int(r[0]) for r in rows]


def cache_lookup(conn: Any, keys: Sequence[str], dims: int, now_s: int) -> dict[str, np.ndarray]:
    """Cached vectors for ``keys`` (batched lookups), skipping expired entries."""
    out: dict[str, np.ndarray] = {}
    unique = list(dict.fromkeys(keys))
    for i in range(0, len(unique), 500):
        chunk = unique[i:i + 500]
        rows = conn.execute(
            f"SELECT key, embedding FROM embedding_cache WHERE key IN ({','.join('?' * len(chunk))}) "
            f"AND expires_at > ? AND dims = ?", [*chunk, now_s, dims]).fetchall()
        for key, blob in rows:
            vec = np.frombuffer(blob, dtype=np.float32)
            if vec.shape[0] == dims:
                out[str(key)] = vec
    return out


class EnsureSpace(WriteOp[Space]):
    """Create (if needed) the space of (model, dims) and make it the active one.

    Creating a space also installs the trigger that removes a memory's vector
    when the memory row is deleted, and starts a re-embedding job (its
    progress lives in ``embedding_jobs`` and survives a restart) whenever
    memories exist that this space has no vectors for.
    """

    name: ClassVar[str] = "ensure_vector_space"

    def __init__(self, model_id: str, dims: int) -> None:
        if dims <= 0:
            raise ValueError("a vector space needs a known, positive width")
        self.model_id = model_id
        self.dims = int(dims)

    def apply(self, tx: Tx) -> Space:
        """Create the tables, trigger and job on first use; switch the active flag."""
        space = find_space(tx.conn, self.model_id, self.dims)
        if space is None:
            slug = _SAFE.sub("_", self.model_id.lower()).strip("_")[:40]
            tx.execute("INSERT INTO vector_spaces(model_id, dims, table_name, created_at, active) "
                       "VALUES (?, ?, ?, ?, 0)", (self.model_id, self.dims, f"pending_{slug}", tx.now))
            sid = tx.conn.last_insert_rowid()
            table = f"vec_{sid}_{slug}_{self.dims}"
            tx.execute("UPDATE vector_spaces SET table_name = ? WHERE id = ?", (table, sid))
            tx.execute(f"CREATE VIRTUAL TABLE {table} USING vec0("
                       f"embedding float[{self.dims}] distance_metric=cosine, +text_key text)")
            tx.execute(f"CREATE VIRTUAL TABLE {table}_bin USING vec0(embedding bit[{self.dims}])")
            # A hard delete must not leave an orphan vector behind (privacy: forget means gone).
            tx.execute(f"CREATE TRIGGER {table}_ad AFTER DELETE ON memories BEGIN "
                       f"DELETE FROM {table} WHERE rowid = old.id; "
                       f"DELETE FROM {table}_bin WHERE rowid = old.id; END")
            space = Space(int(sid), self.model_id, self.dims, table, False)
            log.info("created vector space %s", table)
        was_active = active_space(tx.conn)
        if not space.active:
            tx.execute("UPDATE vector_spaces SET active = (id = ?)", (space.id,))
            space = Space(space.id, space.model_id, space.dims, space.table, True)
            tx.changed("vector_space", "updated", [space.id])
        todo = tx.execute(f"SELECT count(*) FROM memories WHERE {LIVE_SQL} AND id NOT IN "
                          f"(SELECT rowid FROM {space.table})").fetchall()[0][0]
        if todo and running_job(tx.conn, self.model_id, self.dims) is None and was_active is not None \
                and was_active.id != space.id:
            tx.execute("INSERT INTO embedding_jobs(model_id, dims, started_at, total_count) VALUES (?,?,?,?)",
                       (self.model_id, self.dims, tx.now, int(todo)))
            log.info("model switch to %s: re-embedding %d memories in the background", self.model_id, todo)
        return space


class WriteVectors(WriteOp[int]):
    """Store one batch of vectors (and new cache entries, and the job's progress) in one transaction."""

    name: ClassVar[str] = "write_vectors"

    def __init__(self, space: Space, items: Sequence[tuple[int, str, np.ndarray]],
                 cache: Sequence[tuple[str, np.ndarray]] = (), *, job_id: int | None = None,
                 job_last_id: int = 0, now_s: int = 0) -> None:
        self.space = space
        self.items = list(items)
        self.cache = list(cache)
        self.job_id = job_id
        self.job_last_id = job_last_id
        self.now_s = now_s

    def apply(self, tx: Tx) -> int:
        """Replace each memory's vector; skip memories deleted meanwhile."""
        table = self.space.table
        ids = [mid for mid, _key, _vec in self.items]
        live: set[int] = set()
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            live.update(int(r[0]) for r in tx.execute(
                f"SELECT id FROM memories WHERE id IN ({','.join('?' * len(chunk))})", chunk))
        written: list[int] = []
        for mid, key, vec in self.items:
            if mid not in live:  # hard-deleted while we were embedding
                continue
            blob = np.ascontiguousarray(vec, dtype=np.float32).tobytes()
            # vec0 has no upsert: delete then insert.
            tx.execute(f"DELETE FROM {table} WHERE rowid = ?", (mid,))
            tx.execute(f"DELETE FROM {table}_bin WHERE rowid = ?", (mid,))
            tx.execute(f"INSERT INTO {table}(rowid, embedding, text_key) VALUES (?, ?, ?)", (mid, blob, key))
            tx.execute(f"INSERT INTO {table}_bin(rowid, embedding) VALUES (?, vec_quantize_binary(?))",
                       (mid, blob))
            written.append(mid)
        expires = self.now_s + CACHE_TTL_S
        for key, vec in self.cache:
            tx.execute("INSERT OR REPLACE INTO embedding_cache(key, embedding, model_id, dims, expires_at) "
                       "VALUES (?, ?, ?, ?, ?)",
                       (key, np.ascontiguousarray(vec, dtype=np.float32).tobytes(), self.space.model_id,
                        self.space.dims, expires))
        if self.job_id is not None:
            tx.execute("UPDATE embedding_jobs SET last_memory_id = max(last_memory_id, ?), "
                       "done_count = done_count + ? WHERE id = ?", (self.job_last_id, len(written), self.job_id))
        if written:
            tx.changed("vector", "updated", written)
        return len(written)


class FinishJob(WriteOp[None]):
    """Mark a re-embedding job done."""

    name: ClassVar[str] = "finish_embedding_job"

    def __init__(self, job_id: int, state: str = "done") -> None:
        self.job_id = job_id
        self.state = state

    def apply(self, tx: Tx) -> None:
        """Set the state and finish time."""
        tx.execute("UPDATE embedding_jobs SET state = ?, finished_at = ? WHERE id = ?",
                   (self.state, tx.now, self.job_id))
        tx.changed("embedding_job", "updated", [self.job_id])


class ActivateSpace(WriteOp[None]):
    """Make an existing space the active one (used by tests and a manual switch back)."""

    name: ClassVar[str] = "activate_vector_space"

    def __init__(self, space_id: int) -> None:
        self.space_id = space_id

    def apply(self, tx: Tx) -> None:
        """Flip the active flag."""
        tx.execute("UPDATE vector_spaces SET active = (id = ?)", (self.space_id,))
        tx.changed("vector_space", "updated", [self.space_id])


class PurgeCache(WriteOp[int]):
    """Drop expired embedding-cache entries."""

    name: ClassVar[str] = "purge_embedding_cache"

    def __init__(self, now_s: int) -> None:
        self.now_s = now_s

    def apply(self, tx: Tx) -> int:
        """Delete what expired."""
        tx.execute("DELETE FROM embedding_cache WHERE expires_at <= ?", (self.now_s,))
        return int(tx.conn.changes())
