"""EmbeddingService and the indexer: cache, vector spaces, delete trigger, edits, model switch + resume."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from desktop.memory.embedding.base import l2_normalize
from desktop.memory.embedding.indexer import EmbeddingIndexer
from desktop.memory.embedding.local import LocalMiniLMProvider
from desktop.memory.embedding.service import EmbeddingService
from desktop.memory.embedding.vector_index import VectorIndex
from desktop.memory.embedding.vectors import active_space
from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database
from desktop.memory.store.memory_ops import NewMemory

_WORD = re.compile(r"[a-z0-9]+")


class Tiny:
    """Deterministic 16-dim bag-of-words provider (another model, another width)."""

    model_id = "test:tiny16"
    dims = 16

    def __init__(self) -> None:
        self.embedded = 0

    def available(self) -> bool:
        return True

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded += len(texts)
        out = np.zeros((len(texts), 16), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in _WORD.findall(t.lower()):
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % 16] += 1
            out[i, 0] += 0.01
        return l2_normalize(out)


@pytest.fixture(scope="module")
def minilm() -> LocalMiniLMProvider:
    p = LocalMiniLMProvider()
    p.warm_up()
    return p


def _db(path: Path) -> Database:
    return Database(path / "e.db").open()


def test_vectors_cache_and_delete_trigger(tmp_path):
    db = _db(tmp_path)
    ms = MemoryService(db)
    ids = [r.id for r in ms.add_many([NewMemory(content=f"memory about topic {i}") for i in range(5)]).result()]
    tiny = Tiny()
    emb = EmbeddingService(db, tiny)
    assert emb.sync() == 5 and emb.coverage() == (5, 5)
    space = emb.space
    conn = db.reads.conn()
    assert conn.execute(f"SELECT count(*) FROM {space.table}").fetchall()[0][0] == 5
    assert conn.execute("SELECT count(*) FROM embedding_cache WHERE model_id=?", (tiny.model_id,)).fetchall()[0][0] == 5
    # Nothing left to do: no model calls.
    assert emb.sync() == 0 and tiny.embedded == 5
    # Hard delete removes the vector through the trigger, and the mirror forgets it.
    ms.hard_delete(ids[0]).result()
    emb.forget([ids[0]])
    assert conn.execute(f"SELECT count(*) FROM {space.table} WHERE rowid=?", (ids[0],)).fetchall()[0][0] == 0
    assert conn.execute(f"SELECT count(*) FROM {space.table}_bin").fetchall()[0][0] == 4
    hits, _ = emb.search(emb.embed_query("topic 3"), 10)
    assert ids[0] not in {m for m, _ in hits}
    # Re-adding the same text is served from the cache.
    calls = tiny.embedded
    new = ms.add(NewMemory(content="memory about topic 0")).result().id
    assert emb.embed_memories([new]) == 1
    assert tiny.embedded == calls
    db.close()


def test_indexer_embeds_new_and_edited_memories(tmp_path, minilm):
    db = _db(tmp_path)
    ms = MemoryService(db)
    emb = EmbeddingService(db, minilm)
    indexer = EmbeddingIndexer(emb).start()
    mid = ms.add(NewMemory(content="The invoice PDF renderer needs fonts installed")).result().id
    assert indexer.wait_idle(60) and emb.coverage() == (1, 1)
    before = emb.vectors([mid])[mid]
    ms.edit(mid, {"content": "Kubernetes pods restart when memory exceeds the limit"}).result()
    assert indexer.wait_idle(60)
    after = emb.vectors([mid])[mid]
    assert float(before @ after) < 0.9
    hits, _ = emb.search(emb.embed_query("pods restarting out of memory"), 1)
    assert hits[0][0] == mid
    indexer.close()
    db.close()


def test_model_switch_reembeds_in_background_and_resumes_after_restart(tmp_path, minilm):
    db = _db(tmp_path)
    ms = MemoryService(db)
    ms.add_many([NewMemory(content=f"note {i} about the deploy pipeline stage {i}") for i in range(40)]).result()
    first = EmbeddingService(db, minilm, batch_size=8)
    first.sync()
    assert active_space(db.reads.conn()).model_id == minilm.model_id
    # Switch to another model of another width: a job starts; stop it half way (a "crash").
    tiny = Tiny()
    second = EmbeddingService(db, tiny, batch_size=8)
    space = second.open_space()
    assert space.dims == 16 and active_space(db.reads.conn()).id == space.id
    job = db.reads.conn().execute("SELECT state, total_count FROM embedding_jobs").fetchall()
    assert job == [("running", 40)]
    calls = {"n": 0}

    def progress(done: int, total: int) -> None:
        calls["n"] += 1

    second.sync(deadline=time.monotonic() - 1, progress=progress)  # deadline passed: does nothing
    assert second.coverage()[0] == 0
    orig = second.embed_memories

    def one_batch_then_stop(ids, job=None):
        orig(ids[:8], job=job)
        raise KeyboardInterrupt  # simulated crash after one committed batch

    second.embed_memories = one_batch_then_stop  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        second.sync()
    row = db.reads.conn().execute("SELECT last_memory_id, done_count, state FROM embedding_jobs").fetchall()[0]
    assert row[1] == 8 and row[2] == "running" and row[0] >= 8
    db.close()
    # Restart: the job resumes from last_memory_id and finishes; the old space is untouched.
    db = _db(tmp_path)
    tiny2 = Tiny()
    third = EmbeddingService(db, tiny2, batch_size=8)
    third.sync()
    assert tiny2.embedded == 32  # only what the first run had not done
    assert db.reads.conn().execute("SELECT done_count, state FROM embedding_jobs").fetchall() == [(40, "done")]
    assert third.coverage() == (40, 40)
    # Queries touch only the active (16-d) space; the 384-d space still holds its vectors.
    hits, _ = third.search(third.embed_query("deploy pipeline stage 3"), 5)
    assert len(hits) == 5
    tables = [r[0] for r in db.reads.conn().execute("SELECT table_name FROM vector_spaces ORDER BY id")]
    assert db.reads.conn().execute(f"SELECT count(*) FROM {tables[0]}").fetchall()[0][0] == 40
    db.close()


def test_vector_index_binary_pass_matches_exact_search():
    # Clustered 384-d data, like sentence embeddings (topics plus individual variation).
    rng = np.random.default_rng(1)
    centres = rng.normal(size=(60, 384))
    base = l2_normalize(centres[rng.integers(0, 60, 5000)] + 0.8 * rng.normal(size=(5000, 384)))
    exact = VectorIndex(384, exact_limit=10_000)
    coarse = VectorIndex(384, exact_limit=100)
    ids = list(range(1, 5001))
    exact.upsert(ids, base)
    coarse.upsert(ids, base)
    recall = []
    for q in base[:50] + 0.5 * l2_normalize(rng.normal(size=(50, 384))):
        q = q / np.linalg.norm(q)
        a, ma = exact.search(q, 10)
        b, mb = coarse.search(q, 10)
        recall.append(len({m for m, _ in a} & {m for m, _ in b}) / 10)
        assert ma == "exact" and mb == "binary"
    assert np.mean(recall) > 0.9
    exact.remove(ids[:10])
    assert len(exact) == 4990 and not exact.has(1)


def test_sqlite_vec_knn_before_the_mirror_is_loaded(tmp_path, monkeypatch):
    import desktop.memory.embedding.service as service_module

    db = _db(tmp_path)
    ms = MemoryService(db)
    ms.add_many([NewMemory(content=f"alpha beta {w}") for w in ("gamma", "delta", "omega", "kappa")]).result()
    EmbeddingService(db, Tiny()).sync()
    cold = EmbeddingService(db, Tiny())
    cold.open_space()
    assert not cold.index_loaded
    q = cold.embed_query("alpha beta omega")
    hits, method = cold.search(q, 2)
    assert method == "sqlite-vec" and len(hits) == 2
    monkeypatch.setattr(service_module, "BINARY_FIRST_PASS_ABOVE", 1)
    coarse, method2 = cold.search(q, 2)
    assert method2 == "sqlite-vec-binary" and coarse[0][0] == hits[0][0]
    cold.load_index()
    warm, method3 = cold.search(q, 2)
    assert method3 == "exact" and [m for m, _ in warm] == [m for m, _ in hits]
    assert warm[0][1] == pytest.approx(hits[0][1], abs=1e-5)
    db.close()


def test_exact_search_split_over_two_threads_gives_the_single_thread_scores():
    # From SPLIT_FROM rows the exact product runs in two halves side by side: same numbers, same order.
    from desktop.memory.embedding import vector_index

    rng = np.random.default_rng(5)
    n = vector_index.SPLIT_FROM * 2 + 7  # odd: the halves differ in size
    base = l2_normalize(rng.normal(size=(n, 384))).astype(np.float32)
    q = l2_normalize(rng.normal(size=(1, 384)))[0].astype(np.float32)
    assert np.array_equal(vector_index._split_dot(base, q), vector_index._dot(base, q))
    index = VectorIndex(384)
    index.upsert(list(range(1, n + 1)), base)
    index.remove([3, 4000])
    hits, method = index.search(q, 50)
    expected = sorted(((i + 1, float(s)) for i, s in enumerate(base @ q) if i + 1 not in (3, 4000)),
                      key=lambda x: (-x[1], x[0]))[:50]
    assert method == "exact" and [m for m, _ in hits] == [m for m, _ in expected]
    assert np.allclose([s for _, s in hits], [s for _, s in expected], atol=1e-5)


def test_split_product_is_complete_when_the_helper_thread_is_busy():
    # A second search's half queued behind a slow one is taken back by its caller, not waited for.
    import threading

    from desktop.memory.embedding import vector_index

    rng = np.random.default_rng(6)
    base = l2_normalize(rng.normal(size=(vector_index.SPLIT_FROM + 100, 384))).astype(np.float32)
    q = base[0]
    vector_index._split_dot(base, q)  # the helper thread exists from here on
    assert vector_index._splitter is not None
    release = threading.Event()
    blocker = vector_index._splitter.submit(release.wait, 10)
    try:
        assert np.array_equal(vector_index._split_dot(base, q), vector_index._dot(base, q))
    finally:
        release.set()
        blocker.result()


def test_similarities_after_a_search_reuse_its_product_until_a_vector_changes():
    rng = np.random.default_rng(7)
    base = l2_normalize(rng.normal(size=(300, 384))).astype(np.float32)
    index = VectorIndex(384)
    ids = list(range(1, 301))
    index.upsert(ids, base)
    q = base[0]
    index.search(q, 10)
    cached = index.similarities(q, [5, 6, 299, 1000])
    assert set(cached) == {5, 6, 299}
    assert cached == {m: float(v) for m, v in zip((5, 6, 299), vector_index_dot(base[[4, 5, 298]], q), strict=True)}
    # Another query on this thread, or a changed vector, is never answered from the old product.
    index.upsert([6], base[[7]])
    assert index.similarities(q, [6])[6] == float(vector_index_dot(base[[7]], q)[0])
    other = base[1]
    assert index.similarities(other, [5])[5] == float(vector_index_dot(base[[4]], other)[0])


def vector_index_dot(mat: np.ndarray, vec: np.ndarray) -> np.ndarray:
    from desktop.memory.embedding import vector_index

    return vector_index._dot(np.ascontiguousarray(mat), vec)
