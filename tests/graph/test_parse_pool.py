"""The parse pool (issue 17): a pooled index stores exactly what the serial one stores.

Real worker processes (spawned), a real database per run; the small multi-language
fixture tree is indexed once serially (workers=1) and once through the pool with its
threshold lowered to one file, and every table the indexer writes is compared.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from store_helpers import FIXTURES, write

from desktop.memory.graph.code_memories import PreparedChunk
from desktop.memory.graph.indexer import ProjectIndexer
from desktop.memory.graph.model import GraphNode
from desktop.memory.graph.parse_pool import BACKGROUND_NICENESS, ParseJob, ParsePipeline, parse_job
from desktop.memory.store.database import Database

# Every table the indexer fills, with the columns that do not depend on when it ran.
_SNAPSHOT = {
    "graph_files": "SELECT file_path, content_hash, size, language, module, status, skip_reason, facts"
                   " FROM graph_files",
    "graph_nodes": "SELECT id, type, label, file_path, language, start_line, end_line, confidence, metadata,"
                   " stale_at FROM graph_nodes",
    "graph_edges": "SELECT from_id, to_id, type, confidence, weight, origin_file, stale_at, metadata FROM graph_edges",
    "graph_closure": "SELECT ancestor_id, descendant_id, depth, path, edge_types, round(total_weight, 9)"
                     " FROM graph_closure",
    "chunks": "SELECT content, related_files, related_modules, chunk_type, chunk_start_line, chunk_end_line,"
              " context_prefix, fingerprint, metadata FROM memories WHERE source='code_index'",
}
_FTS_TERMS = ("verify", "jwt", "token", "user", "service", "config", "parse", "main", "http", "error")


def _project(tmp: Path) -> Path:
    """Every fixture language in one tree, plus a file with a secret (redaction runs in the workers)."""
    root = tmp / "proj"
    for lang in sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()):
        shutil.copytree(FIXTURES / lang, root / lang)
    write(root, {"settings/keys.py": 'OPENAI_API_KEY = "sk-proj-' + "a1B2c3D4e5" * 5 + '"\n\n'
                                     "def load_keys():\n    return OPENAI_API_KEY\n"})
    return root


def _index(tmp: Path, root: Path, name: str, workers: int) -> tuple[dict[str, list[tuple[object, ...]]], int]:
    """Index ``root`` into a new database; return its snapshot and the number of pooled files."""
    db = Database(tmp / f"{name}.sqlite").open()
    try:
        indexer = ProjectIndexer(db, root, chunks=True, workers=workers, pool_min_files=1)
        report = indexer.run()
        conn = db.reads.conn()
        snap = {table: sorted(conn.execute(sql).fetchall(), key=repr) for table, sql in _SNAPSHOT.items()}
        # The FTS table is contentless: compare what each term finds instead of its text.
        snap["fts"] = [(term, sorted(r[0] for r in conn.execute(
            "SELECT m.fingerprint FROM memories_fts f JOIN memories m ON m.id = f.rowid WHERE memories_fts MATCH ?",
            (term,)))) for term in _FTS_TERMS]
        return snap, report.pooled
    finally:
        db.close()


@pytest.mark.slow
def test_pooled_index_stores_exactly_what_the_serial_index_stores(tmp_path: Path) -> None:
    root = _project(tmp_path)
    serial, serial_pooled = _index(tmp_path, root, "serial", workers=1)
    pooled, pooled_files = _index(tmp_path, root, "pooled", workers=2)
    assert serial_pooled == 0
    assert pooled_files == len(serial["graph_files"]) > 20  # every file went through the workers
    assert serial["chunks"] and any(hits for _, hits in serial["fts"])
    assert not any("sk-proj-" in str(row[0]) for row in pooled["chunks"])  # redacted in the workers too
    for table in serial:
        assert pooled[table] == serial[table], table


def test_pipeline_keeps_order_and_turns_a_parser_bug_into_one_lost_file() -> None:
    jobs = [ParseJob(f"m{i}.py", f"def f{i}():\n    return {i}\n".encode(), 0.0, None) for i in range(9)]
    bad = ParseJob("bad.py", b"x = 1\n", 0.0, None)
    object.__setattr__(bad, "data", None)  # not bytes: extraction raises inside the worker
    with ParsePipeline(chunks=True, workers=2, min_files=1) as pipeline:
        out = list(pipeline.run([*jobs[:4], bad, *jobs[4:]], expected=10))
    assert [job.path for job, _ in out] == [j.path for j in [*jobs[:4], bad, *jobs[4:]]]
    errors = [(job.path, result) for job, result in out if isinstance(result, str)]
    assert len(errors) == 1 and errors[0][0] == "bad.py" and "Traceback" in errors[0][1]
    assert pipeline.pooled == 10
    serial = [parse_job(j, True) for j in jobs]
    pooled = [result for job, result in out if job is not bad and not isinstance(result, str)]
    assert [p.extraction for p in pooled] == [p.extraction for p in serial]
    assert [p.chunks for p in pooled] == [p.chunks for p in serial]


def test_small_runs_stay_in_the_calling_thread() -> None:
    jobs = [ParseJob(f"s{i}.py", b"def g():\n    return 0\n", 0.0, None) for i in range(3)]
    with ParsePipeline(chunks=False, workers=2, min_files=48) as pipeline:
        out = list(pipeline.run(jobs))
    assert len(out) == 3 and pipeline.pooled == 0


def test_parsed_values_pickle_as_their_fields() -> None:
    import pickle

    node = GraphNode("sym:a.py:f", "function", "f", "a.py", "python", 1, 2, {"k": 1})
    chunk = PreparedChunk("def f(): pass", "function", 1, 1, "a.py", "0" * 32, "{}", "def f pass")
    assert pickle.loads(pickle.dumps(node)) == node and pickle.loads(pickle.dumps(node)).metadata == {"k": 1}
    assert pickle.loads(pickle.dumps(chunk)) == chunk


@pytest.mark.skipif(not hasattr(os, "nice"), reason="POSIX priorities")
def test_background_workers_yield_the_cpu_and_foreground_ones_do_not() -> None:
    base = os.nice(0)
    for niceness, expected in ((BACKGROUND_NICENESS, min(19, base + BACKGROUND_NICENESS)), (0, base)):
        with ParsePipeline(chunks=False, workers=2, niceness=niceness) as pipeline:
            pipeline._start()
            assert pipeline._executor is not None
            assert pipeline._executor.submit(os.nice, 0).result() == expected


def test_an_index_run_collects_garbage_less_often_and_restores_the_threshold(tmp_path: Path) -> None:
    import gc

    from desktop.memory.graph.parse_pool import GC_THRESHOLD0, fewer_collections

    before = gc.get_threshold()
    with fewer_collections():
        with fewer_collections():  # two projects indexing at once share the setting
            assert gc.get_threshold()[0] == max(before[0], GC_THRESHOLD0)
        assert gc.get_threshold()[0] == max(before[0], GC_THRESHOLD0)
    assert gc.get_threshold() == before
    root = tmp_path / "p"
    write(root, {"a.py": "def f():\n    return 1\n"})
    db = Database(tmp_path / "g.sqlite").open()
    try:
        assert ProjectIndexer(db, root).run().indexed == 1
    finally:
        db.close()
    assert gc.get_threshold() == before
