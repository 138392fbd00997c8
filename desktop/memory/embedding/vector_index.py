"""In-memory mirror of the active vector space, for fast dense search.

sqlite-vec 0.1.x scans brute force inside SQLite: measured on this 2-core
machine, a float KNN over 100,000 384-d vectors takes ~75 ms and the binary
pass ~28 ms, and fetching vectors back by rowid for re-scoring ~0.25 ms each,
all over the search's whole latency budget. The database stays the source of
truth (the ``vec0`` tables); this mirror is loaded from it once, kept current
by the indexer (which knows what it wrote) and by change notices (deletes),
and answers queries with numpy:

* up to ``exact_limit`` vectors: one exact matrix-vector product (split over
  two threads from :data:`SPLIT_FROM` rows);
* above: a Hamming pass over sign bits (the same quantisation as
  ``vec_quantize_binary``) picks ``oversample * k`` candidates, then exact
  float cosine re-scores them.

Where the line lies is a recall question first. On 11,948 real code chunks of the
standard library embedded by the bundled model, with 207 queries, the sign-bit
pass keeps only 0.85 of the exact top 50 with 8x oversampling (p10 0.69), 0.94
with 16x and 0.98 with 32x; the exact product over 100,000 vectors costs ~6.3 ms
here (split), the binary pass ~2.5 ms. So the product stays exact up to
150,000 vectors (under 10 ms), and the pass beyond it oversamples 32x.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["EXACT_LIMIT", "VectorIndex"]

log = logging.getLogger("engram.embedding")

EXACT_LIMIT = 150_000
OVERSAMPLE = 32
_MIN_CAPACITY = 1024


def _dot(mat: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """``mat @ vec`` on the calling thread.

    ``@`` goes to OpenBLAS, which splits even a 10,000 x 384 product across its
    threads; on a busy 2-core machine one of them is often not scheduled and the
    product that takes 0.15 ms stalls for 10+ ms (p95). ``einsum``'s own SIMD loop
    never leaves the thread: 0.5 ms at 10,000 vectors, with no stalls.
    """
    return np.einsum("ij,j->i", mat, vec)


# From this many rows, the exact product is split in two halves run side by side: it reads the
# whole matrix (15 MB at 10,000 x 384), which comes from memory, not cache, right after the query
# was embedded; two cores fetch it in ~0.65 ms where one takes ~1.1 ms (measured here).
SPLIT_FROM = 4096
_splitter: ThreadPoolExecutor | None = None
_splitter_lock = threading.Lock()


def _split_dot(mat: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """``_dot`` with the second half of the rows on a helper thread (einsum releases the GIL).

    Never slower than :func:`_dot` by more than a hand-over: the caller takes the
    second half back if the helper has not started it by the time the first is done.
    """
    global _splitter
    if len(mat) < SPLIT_FROM:
        return _dot(mat, vec)
    with _splitter_lock:
        if _splitter is None:
            _splitter = ThreadPoolExecutor(1, thread_name_prefix="engram-dense")
    half = len(mat) // 2
    out = np.empty(len(mat), dtype=np.float32)
    second = _splitter.submit(np.einsum, "ij,j->i", mat[half:], vec, out=out[half:])
    np.einsum("ij,j->i", mat[:half], vec, out=out[:half])
    if second.cancel():
        # The helper was not scheduled in time (a busy machine) or is busy with another search:
        # waiting for it could stall; doing its half here costs at most the single-thread time.
        np.einsum("ij,j->i", mat[half:], vec, out=out[half:])
    else:
        second.result()
    return out


def _hamming(bits: np.ndarray, qbits: np.ndarray) -> np.ndarray:
    """Hamming distance of every row of ``bits`` to ``qbits`` (uint16), one 64-bit word column at a time.

    Summing the per-word popcounts column by column is ~4x faster than
    ``bitwise_count(bits ^ q).sum(axis=1)``, whose row-wise reduction over six
    words dominates (100,000 rows: 1.0 vs 3.8 ms).
    """
    dist = np.bitwise_count(bits[:, 0] ^ qbits[0]).astype(np.uint16)
    for j in range(1, bits.shape[1]):
        dist += np.bitwise_count(bits[:, j] ^ qbits[j])
    return dist


class VectorIndex:
    """Unit vectors by memory id with exact or binary-then-exact top-k search. Thread-safe."""

    def __init__(self, dims: int, *, exact_limit: int = EXACT_LIMIT, oversample: int = OVERSAMPLE) -> None:
        self.dims = dims
        self.exact_limit = exact_limit
        self.oversample = oversample
        self._words = (dims + 63) // 64
        self._lock = threading.RLock()
        self._vecs = np.zeros((_MIN_CAPACITY, dims), dtype=np.float32)
        self._bits = np.zeros((_MIN_CAPACITY, self._words), dtype=np.uint64)
        self._ids = np.zeros(_MIN_CAPACITY, dtype=np.int64)
        self._alive = np.zeros(_MIN_CAPACITY, dtype=bool)
        self._n = 0
        self._slot: dict[int, int] = {}
        # Every search's fusion then asks the cosine of the other paths' candidates with the same
        # query: after an exact search they are already in its product, kept per thread and valid
        # while no vector changed (``_version``).
        self._version = 0
        self._recent = threading.local()

    def __len__(self) -> int:
        """How many live vectors the mirror holds."""
        return len(self._slot)

    def _pack(self, vecs: np.ndarray) -> np.ndarray:
        """Sign bits packed into uint64 words (padding bits are zero for every row alike)."""
        bits = np.packbits(vecs > 0, axis=1)
        pad = self._words * 8 - bits.shape[1]
        if pad:
            bits = np.pad(bits, ((0, 0), (0, pad)))
        return np.ascontiguousarray(bits).view(np.uint64)

    def _grow(self, need: int) -> None:
        cap = self._vecs.shape[0]
        if need <= cap:
            return
        new = max(need, cap * 2)
        for name in ("_vecs", "_bits", "_ids", "_alive"):
            old = getattr(self, name)
            arr = np.zeros((new, *old.shape[1:]), dtype=old.dtype)
            arr[: self._n] = old[: self._n]
            setattr(self, name, arr)

    def upsert(self, ids: Sequence[int], vecs: np.ndarray) -> None:
        """Add or replace vectors (rows of ``vecs`` must be unit length)."""
        if not len(ids):
            return
        vecs = np.ascontiguousarray(vecs, dtype=np.float32).reshape(len(ids), self.dims)
        bits = self._pack(vecs)
        with self._lock:
            self._version += 1
            fresh = [i for i, mid in enumerate(ids) if int(mid) not in self._slot]
            self._grow(self._n + len(fresh))
            for row, mid in enumerate(ids):
                slot = self._slot.get(int(mid))
                if slot is None:
                    slot = self._n
                    self._n += 1
                    self._slot[int(mid)] = slot
                self._vecs[slot] = vecs[row]
                self._bits[slot] = bits[row]
                self._ids[slot] = int(mid)
                self._alive[slot] = True

    def remove(self, ids: Iterable[int]) -> None:
        """Forget vectors (their slots are reused only after a compaction)."""
        with self._lock:
            self._version += 1
            for mid in ids:
                slot = self._slot.pop(int(mid), None)
                if slot is not None:
                    self._alive[slot] = False
                    self._vecs[slot] = 0.0
            if self._n > 4 * _MIN_CAPACITY and len(self._slot) < self._n // 2:
                self._compact()

    def _compact(self) -> None:
        keep = np.flatnonzero(self._alive[: self._n])
        for name in ("_vecs", "_bits", "_ids", "_alive"):
            arr = getattr(self, name)
            arr[: len(keep)] = arr[keep]
            arr[len(keep): self._n] = 0
        self._n = len(keep)
        self._slot = {int(mid): i for i, mid in enumerate(self._ids[: self._n])}

    def has(self, memory_id: int) -> bool:
        """True when a vector for ``memory_id`` is held."""
        return int(memory_id) in self._slot

    def vectors(self, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The stored vectors of ``ids`` that exist (copies)."""
        with self._lock:
            return {int(m): self._vecs[self._slot[int(m)]].copy() for m in ids if int(m) in self._slot}

    def similarities(self, query: np.ndarray, ids: Sequence[int]) -> dict[int, float]:
        """Exact cosine of ``query`` with each known id (re-scoring of other paths' candidates)."""
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(self.dims)
        with self._lock:
            slots = self._slot
            pairs = [(m, slot) for m in map(int, ids) if (slot := slots.get(m)) is not None]
            if not pairs:
                return {}
            recent = getattr(self._recent, "exact", None)
            if recent is not None and recent[0] == self._version and recent[1] == q.tobytes():
                known = recent[2]
                return {m: float(known[s]) for m, s in pairs}
            sims = _dot(self._vecs[[s for _m, s in pairs]], q)
        return {m: float(v) for (m, _s), v in zip(pairs, sims, strict=True)}

    def search(self, query: np.ndarray, k: int) -> tuple[list[tuple[int, float]], str]:
        """Top-``k`` (memory id, cosine) pairs, best first, and the method used ("exact"/"binary")."""
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(self.dims)
        with self._lock:
            n = self._n
            if n == 0 or k <= 0:
                return [], "exact"
            live = len(self._slot)
            if live <= self.exact_limit:
                method = "exact"
                sims = _split_dot(self._vecs[:n], q)
                if live < n:  # removed vectors leave dead slots until a compaction
                    sims[~self._alive[:n]] = -2.0
                # Kept as is: the masked slots are dead, and similarities() only reads live ones.
                self._recent.exact = (self._version, q.tobytes(), sims)
                cand = np.arange(n)
            else:
                method = "binary"
                qbits = self._pack(q[None, :])[0]
                dist = _hamming(self._bits[:n], qbits)
                dist[~self._alive[:n]] = self.dims + 1
                m = min(n, max(k * self.oversample, 200))
                cand = np.argpartition(dist, m - 1)[:m] if m < n else np.arange(n)
                sims = _dot(self._vecs[cand], q)
                sims[~self._alive[cand]] = -2.0
            kk = min(k, len(cand))
            # The kk largest, without negating the whole array first.
            top = np.argpartition(sims, len(cand) - kk)[len(cand) - kk:] if kk < len(cand) else np.arange(len(cand))
            top = top[np.lexsort((self._ids[cand[top]], -sims[top]))]
            out = [(int(self._ids[cand[i]]), float(sims[i])) for i in top if sims[i] > -1.5]
        return out, method
