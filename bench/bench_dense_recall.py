"""Recall of the dense path's sign-bit first pass against the exact product, on real code vectors.

A cold index of this Python's standard library, every 4th code chunk (up to 12,000) embedded by the
bundled model with its context prefix, as the app embeds chunks; 207 developer-style queries (the
latency bench's generator without its numbering, and a few plain ones). For each oversampling
factor: the share of the exact top 50 that the binary pass keeps (mean and 10th percentile), and
the time of one exact product and one binary search over the same vectors. The vectors are cached
in the temporary folder (embedding them takes ~4 minutes here).

    .venv/bin/python bench/bench_dense_recall.py
"""

from __future__ import annotations

import pathlib
import statistics
import sys
import sysconfig
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import table  # noqa: E402

from desktop.memory.embedding.local import LocalMiniLMProvider  # noqa: E402
from desktop.memory.embedding.vector_index import VectorIndex  # noqa: E402

CACHE = pathlib.Path(tempfile.gettempdir()) / "engram_dense_recall.npy"
K = 50
_PLAIN = ("how is the json decoder error raised", "parse command line options", "socket timeout handling",
          "thread pool shutdown", "read a zip file member", "http request headers", "date formatting strftime")


def chunk_vectors() -> np.ndarray:
    """The embedded sample of the standard library's code chunks (built once, then cached)."""
    if CACHE.exists():
        return np.load(CACHE)
    from desktop.memory.graph.indexer import ProjectIndexer
    from desktop.memory.store.database import Database

    with tempfile.TemporaryDirectory() as tmp:
        db = Database(pathlib.Path(tmp) / "stdlib.db").open()
        ProjectIndexer(db, pathlib.Path(sysconfig.get_paths()["stdlib"])).run()
        texts = [r[0] for r in db.reads.conn().execute(
            "SELECT coalesce(context_prefix, '') || ' ' || content FROM memories WHERE type = 'code' ORDER BY id")]
        db.close()
    vecs = LocalMiniLMProvider().embed(texts[::4][:12_000])
    np.save(CACHE, vecs)
    return vecs


def main() -> int:
    """Print the recall table."""
    from bench_retrieval import queries

    vecs = chunk_vectors()
    qv = LocalMiniLMProvider().embed([q.rsplit(" (", 1)[0] for q in queries(200)] + list(_PLAIN))
    ids = list(range(1, len(vecs) + 1))
    exact = VectorIndex(384, exact_limit=10**9)
    exact.upsert(ids, vecs)
    truth, exact_ms = [], []
    for q in qv:
        t = time.perf_counter()
        hits, _ = exact.search(q, K)
        exact_ms.append((time.perf_counter() - t) * 1000)
        truth.append({m for m, _ in hits})
    rows = []
    for oversample in (8, 16, 32):
        binary = VectorIndex(384, exact_limit=0, oversample=oversample)
        binary.upsert(ids, vecs)
        recall, ms = [], []
        for q, want in zip(qv, truth, strict=True):
            t = time.perf_counter()
            hits, _ = binary.search(q, K)
            ms.append((time.perf_counter() - t) * 1000)
            recall.append(len(want & {m for m, _ in hits}) / K)
        rows.append([oversample, f"{statistics.mean(recall):.3f}", f"{float(np.percentile(recall, 10)):.3f}",
                     f"{statistics.median(ms):.2f}", f"{statistics.median(exact_ms):.2f}"])
    print(f"**Dense first pass on {len(vecs):,} real code-chunk vectors, {len(qv)} queries, top {K}**\n")
    print(table(["oversample", "recall@50 mean", "recall@50 p10", "binary ms p50", "exact ms p50"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
