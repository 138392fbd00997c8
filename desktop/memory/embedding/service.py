"""EmbeddingService: the provider, the embedding cache, the active vector space and dense search.

* Memories are embedded with their context (file, module, type prefixes: see
  :func:`contextual_text`), in batches, on a background thread or the caller's
  thread, never inside a write transaction; one :class:`WriteVectors` op per
  batch then stores vectors, cache entries and job progress together.
* The embedding cache (``embedding_cache``, keyed by :func:`cache_key`) is read
  in batches before the model runs, so re-adding a text, switching back to a
  model or re-indexing costs no inference.
* Only the active space (the current provider's model and width) is searched.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

from desktop.memory.embedding.base import EmbeddingError, EmbeddingProvider
from desktop.memory.embedding.contextual import cache_key, contextual_text
from desktop.memory.embedding.vector_index import VectorIndex
from desktop.memory.embedding.vectors import (
    EnsureSpace,
    FinishJob,
    Space,
    WriteVectors,
    active_space,
    cache_lookup,
    missing_ids,
    running_job,
)
from desktop.memory.store.connection import count_of
from desktop.memory.store.database import Database
from desktop.memory.store.live import LIVE_SQL

__all__ = ["EmbeddingService", "memory_embedding_text"]

log = logging.getLogger("engram.embedding")

DEFAULT_BATCH = 128
# Above this many vectors, search starts with a Hamming pass over sign bits and re-scores exactly.
BINARY_FIRST_PASS_ABOVE = 20_000
_QUERY_LRU = 512


def memory_embedding_text(row: dict[str, Any]) -> str:
    """The contextual text embedded for one ``memories`` row (dict with decoded JSON lists)."""
    modules = row.get("related_modules") or []
    return contextual_text(row["content"], memory_type=row.get("type"), files=row.get("related_files") or [],
                           module=modules[0] if modules else None, chunk_prefix=row.get("context_prefix"))


class EmbeddingService:
    """Embeds memories and queries with one provider and answers dense searches in its space."""

    def __init__(self, db: Database, provider: EmbeddingProvider, *, batch_size: int = DEFAULT_BATCH,
                 now_s: Callable[[], int] = lambda: int(time.time())) -> None:
        self.db = db
        self.provider = provider
        self.batch_size = max(1, batch_size)
        self._now_s = now_s
        self._space: Space | None = None
        self._index: VectorIndex | None = None
        self._keys: dict[int, str] = {}
        self._lock = threading.RLock()
        self._embed_lock = threading.Lock()
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()

    # -- space -------------------------------------------------------------------
    @property
    def space(self) -> Space | None:
        """The active space once :meth:`open_space` succeeded."""
        return self._space

    @property
    def model_id(self) -> str:
        """The provider's model id."""
        return self.provider.model_id

    def open_space(self) -> Space | None:
        """Make the provider's (model, dims) space active, creating it and a re-embed job if needed.

        Returns None (dense search off, logged) when a remote provider cannot tell its width now.
        """
        with self._lock:
            if self._space is not None:
                return self._space
            dims = self.provider.dims
            if not dims:
                discover = getattr(self.provider, "discover_dims", None)
                try:
                    dims = int(discover()) if callable(discover) else 0
                except EmbeddingError as exc:
                    log.warning("embedding provider %s unavailable (%s); dense search off", self.model_id, exc.code)
                    return None
            if not dims:
                return None
            known = active_space(self.db.reads.conn())
            if known is not None and (known.model_id, known.dims) == (self.model_id, dims):
                self._space = known
            else:
                self._space = self.db.writer.run(EnsureSpace(self.model_id, dims))
            return self._space

    @property
    def index_loaded(self) -> bool:
        """True once the in-memory mirror of the space is loaded."""
        return self._index is not None

    def load_index(self) -> VectorIndex | None:
        """Load the active space's vectors into the in-memory mirror (once)."""
        with self._lock:
            if self._index is not None:
                return self._index
            space = self.open_space()
            if space is None:
                return None
            started = time.perf_counter()
            index = VectorIndex(space.dims)
            conn = self.db.reads.conn()
            ids: list[int] = []
            blobs: list[bytes] = []
            for mid, blob, key in conn.execute(f"SELECT rowid, embedding, text_key FROM {space.table}"):
                ids.append(int(mid))
                blobs.append(blob)
                self._keys[int(mid)] = key or ""
                if len(ids) >= 8192:
                    index.upsert(ids, np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), -1))
                    ids, blobs = [], []
            if ids:
                index.upsert(ids, np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), -1))
            self._index = index
            log.info("loaded %d vectors of %s in %.0f ms", len(index), space.table,
                     (time.perf_counter() - started) * 1000)
            return index

    # -- embedding ---------------------------------------------------------------
    def embed_texts(self, texts: Sequence[str]) -> tuple[np.ndarray, list[tuple[str, np.ndarray]]]:
        """Vectors for ``texts`` (cache first, then the model) and the new cache entries to store."""
        space = self.open_space()
        if space is None:
            raise EmbeddingError("provider_unreachable", "no vector space (provider unavailable)")
        keys = [cache_key(t, self.model_id, space.dims) for t in texts]
        cached = cache_lookup(self.db.reads.conn(), keys, space.dims, self._now_s())
        todo = [i for i, k in enumerate(keys) if k not in cached]
        out = np.zeros((len(texts), space.dims), dtype=np.float32)
        fresh: list[tuple[str, np.ndarray]] = []
        if todo:
            with self._embed_lock:  # one inference at a time: the model already uses every core
                vecs = self.provider.embed([texts[i] for i in todo])
            for row, i in enumerate(todo):
                out[i] = vecs[row]
                fresh.append((keys[i], vecs[row]))
        for i, k in enumerate(keys):
            if k in cached:
                out[i] = cached[k]
        return out, fresh

    def embed_query(self, text: str) -> np.ndarray:
        """The query's vector (LRU-cached in memory; queries are not prefixed: they have no context)."""
        with self._lock:
            hit = self._queries.get(text)
            if hit is not None:
                self._queries.move_to_end(text)
                return hit
        # Not behind the bulk-embedding lock: a search must not wait for an indexer batch (seconds);
        # inference sessions are thread-safe, the query just shares the cores for a few ms.
        vec = self.provider.embed([text])[0]
        with self._lock:
            self._queries[text] = vec
            while len(self._queries) > _QUERY_LRU:
                self._queries.popitem(last=False)
        return vec

    def _rows(self, ids: Sequence[int]) -> list[dict[str, Any]]:
        import json

        out: list[dict[str, Any]] = []
        conn = self.db.reads.conn()
        for i in range(0, len(ids), 500):
            chunk = list(ids[i:i + 500])
            cur = conn.execute(
                "SELECT id, type, content, related_files, related_modules, context_prefix, deprecated "
                f"FROM memories WHERE id IN ({','.join('?' * len(chunk))})", chunk)
            for mid, typ, content, files, mods, prefix, deprecated in cur:
                out.append({"id": int(mid), "type": typ, "content": content, "related_files": json.loads(files),
                            "related_modules": json.loads(mods), "context_prefix": prefix,
                            "deprecated": bool(deprecated)})
        return out

    def embed_memories(self, ids: Sequence[int], *, job: dict[str, Any] | None = None) -> int:
        """Embed (if their text changed) and store the vectors of ``ids``; returns how many were written."""
        space = self.open_space()
        if space is None or not ids:
            return 0
        index = self.load_index()
        rows = [r for r in self._rows(sorted(set(ids))) if not r["deprecated"]]
        texts = [memory_embedding_text(r) for r in rows]
        keys = [cache_key(t, self.model_id, space.dims) for t in texts]
        pending = [(r["id"], t, k) for r, t, k in zip(rows, texts, keys, strict=True)
                   if self._keys.get(r["id"]) != k]
        # Batches of similar length pad little; a job's resume point is the highest id of ``ids``
        # and is written with the last batch only, so the order of batches does not matter.
        pending.sort(key=lambda p: len(p[1]))
        written = 0
        in_flight: tuple[Any, list[tuple[int, str, np.ndarray]], np.ndarray] | None = None
        for start in range(0, len(pending), self.batch_size):
            batch = pending[start:start + self.batch_size]
            vecs, fresh = self.embed_texts([t for _m, t, _k in batch])
            items = [(mid, key, vecs[i]) for i, (mid, _t, key) in enumerate(batch)]
            last = max(ids) if job is not None and start + self.batch_size >= len(pending) else 0
            op = WriteVectors(space, items, fresh, job_id=job["id"] if job else None, job_last_id=last,
                              now_s=self._now_s())
            # The writer commits this batch while the next one is embedded; the mirror follows
            # only committed vectors.
            future = self.db.writer.submit(op)
            if in_flight is not None:
                written += self._settle(index, *in_flight)
            in_flight = (future, items, vecs)
        if in_flight is not None:
            written += self._settle(index, *in_flight)
        if job is not None and not pending:
            self.db.writer.run(WriteVectors(space, [], job_id=job["id"], job_last_id=max(ids)))
        return written

    def _settle(self, index: VectorIndex | None, future: Any, items: list[tuple[int, str, np.ndarray]],
                vecs: np.ndarray) -> int:
        """Wait for one submitted batch's commit, then mirror it; returns how many were written."""
        written = int(future.result(timeout=60))
        if index is not None:
            index.upsert([m for m, _k, _v in items], vecs)
        self._keys.update({m: k for m, k, _v in items})
        return written

    def forget(self, ids: Sequence[int]) -> None:
        """Drop deleted memories from the mirror (the database trigger already removed their rows)."""
        if self._index is not None:
            self._index.remove(ids)
        for mid in ids:
            self._keys.pop(int(mid), None)

    def sync(self, *, deadline: float | None = None, progress: Callable[[int, int], None] | None = None,
             stop: threading.Event | None = None) -> int:
        """Embed every live memory that has no vector in the active space (resuming a model-switch job).

        Runs on the caller's thread in batches; stops early at ``deadline``
        (a ``time.monotonic()`` value) or when ``stop`` is set. Returns how many were embedded.
        """
        space = self.open_space()
        if space is None:
            return 0
        self.load_index()
        conn = self.db.reads.conn()
        job = running_job(conn, space.model_id, space.dims)
        total = count_of(conn.execute(f"SELECT count(*) FROM memories WHERE {LIVE_SQL} AND id NOT IN "
                                      f"(SELECT rowid FROM {space.table})"))
        done = 0
        after = job["last_memory_id"] if job else 0
        while True:
            if (stop is not None and stop.is_set()) or (deadline is not None and time.monotonic() > deadline):
                return done
            todo = missing_ids(conn, space, after=after, limit=self.batch_size * 4)
            if not todo and after > 0:
                after = 0  # a pass from the job's resume point is done; catch up anything older too
                todo = missing_ids(conn, space, after=0, limit=self.batch_size * 4)
            if not todo:
                break
            done += self.embed_memories(todo, job=job)
            after = todo[-1]
            if progress is not None:
                progress(done, int(total))
        if job is not None:
            self.db.writer.run(FinishJob(job["id"]))
            log.info("re-embedding job %d finished", job["id"])
        return done

    def coverage(self) -> tuple[int, int]:
        """(memories with a vector in the active space, live memories)."""
        conn = self.db.reads.conn()
        live = count_of(conn.execute(f"SELECT count(*) FROM memories WHERE {LIVE_SQL}"))
        space = self._space
        if space is None:
            return 0, live
        have = live - count_of(conn.execute(f"SELECT count(*) FROM memories WHERE {LIVE_SQL} AND id NOT IN "
                                            f"(SELECT rowid FROM {space.table})"))
        return have, live

    # -- search ------------------------------------------------------------------
    def search(self, query: np.ndarray, k: int) -> tuple[list[tuple[int, float]], str]:
        """Top-k (memory id, cosine) in the active space and the method used.

        Uses the in-memory mirror when loaded, else sqlite-vec KNN (``MATCH`` with ``k``; a
        binary first pass with exact re-scoring once the space is large).
        """
        if self._index is not None:
            return self._index.search(query, k)
        space = self._space
        if space is None:
            return [], "none"
        return self._sqlite_vec_search(space, query, k)

    def _sqlite_vec_search(self, space: Space, query: np.ndarray, k: int) -> tuple[list[tuple[int, float]], str]:
        conn = self.db.reads.conn()
        blob = np.ascontiguousarray(query, dtype=np.float32).tobytes()
        large = count_of(conn.execute(f"SELECT count(*) FROM {space.table}_rowids")) > BINARY_FIRST_PASS_ABOVE
        if not large:
            # (rowid INTEGER, distance REAL) rows; apsw types each column as any SQLite value.
            rows = cast(list[tuple[int, float]], conn.execute(
                f"SELECT rowid, distance FROM {space.table} WHERE embedding MATCH ? AND k = ? "
                f"ORDER BY distance", (blob, k)).fetchall())
            return [(int(r), 1.0 - float(d)) for r, d in rows], "sqlite-vec"
        coarse = cast(list[tuple[int]], conn.execute(  # rowids: INTEGER
            f"SELECT rowid FROM {space.table}_bin WHERE embedding MATCH vec_quantize_binary(?) "
            f"AND k = ?", (blob, k * 8)).fetchall())
        ids = ",".join(str(int(r[0])) for r in coarse) or "0"
        # vec_distance_cosine of two stored float vectors is a REAL.
        rows = cast(list[tuple[int, float]], conn.execute(
            f"SELECT rowid, vec_distance_cosine(embedding, ?) AS d FROM {space.table} "
            f"WHERE rowid IN ({ids}) ORDER BY d LIMIT ?", (blob, k)).fetchall())
        return [(int(r), 1.0 - float(d)) for r, d in rows], "sqlite-vec-binary"

    def vectors(self, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """Stored vectors of ``ids`` (from the mirror; empty before it is loaded)."""
        return self._index.vectors(ids) if self._index is not None else {}

    def similarities(self, query: np.ndarray, ids: Sequence[int]) -> dict[int, float]:
        """Exact cosine between ``query`` and the stored vectors of ``ids`` (absent when not embedded)."""
        if self._index is not None:
            return self._index.similarities(query, ids)
        return {}
