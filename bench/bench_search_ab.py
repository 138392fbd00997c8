"""Search cost of several checkouts, the same distinct queries sent to each in turn (A/B on a busy machine).

On a machine shared with other jobs a benchmark run's latency moves by 30 % from one minute to the
next, so two runs one after the other cannot show a 10 % difference. Here each checkout (a
``git worktree add`` directory) runs its own pipeline in its own process over the synthetic
project of ``bench_retrieval.py`` (built by that checkout's code, or reused), and the driver sends
query 1 to each, then query 2 to each (alternating the order), so every checkout sees the same load.
Each reports wall time, process CPU (every thread: query embedding included) and main-thread CPU.

    .venv/bin/python bench/bench_search_ab.py --size 10000 --queries 300 /tmp/old:/tmp/old.db .:/tmp/new.db
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import percentile, table  # imports nothing of the app: each worker loads its checkout's

WARM_UP = 30


def worker(size: int, db_path: Path) -> None:
    """Serve searches from the checkout in the current directory: one query per stdin line."""
    tree = Path.cwd()
    sys.path[:0] = [str(tree), str(tree / "bench")]
    import bench_retrieval as checkout_bench  # the checkout's own, for its build_scale

    from desktop.memory.embedding.local import LocalMiniLMProvider
    from desktop.memory.embedding.service import EmbeddingService
    from desktop.memory.retrieval.pipeline import RetrievalPipeline
    from desktop.memory.retrieval.slo import SloMonitor
    from desktop.memory.store.database import Database

    provider = LocalMiniLMProvider()
    provider.warm_up()
    if db_path.exists():
        db = Database(db_path).open()
        emb = EmbeddingService(db, provider)
    else:
        db, emb, _ingest = checkout_bench.build_scale(provider, db_path, size)
    emb.load_index()
    # Never degraded: a loaded minute must not switch one checkout to fewer candidates than another.
    pipe = RetrievalPipeline(db, emb, slo=SloMonitor(budget_ms=1e9))
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for line in sys.stdin:
        t, c, th = time.perf_counter(), time.process_time(), time.thread_time()
        pipe.search(line.rstrip("\n"), limit=10, pack_tokens=1500)
        sys.stdout.write(f"{(time.perf_counter() - t) * 1000:.3f} {(time.process_time() - c) * 1000:.3f} "
                         f"{(time.thread_time() - th) * 1000:.3f}\n")
        sys.stdout.flush()
    pipe.close()
    db.close()


def main() -> int:
    """Start one worker per checkout, interleave the queries, print one table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=10000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--worker", type=Path, default=None, help=argparse.SUPPRESS)
    ap.add_argument("checkouts", nargs="*", help="DIR:DB (the DB is built by DIR's code when missing)")
    args = ap.parse_args()
    if args.worker is not None:
        worker(args.size, args.worker)
        return 0
    from bench_retrieval import load, queries
    procs = []
    for spec in args.checkouts:
        tree, _, db = spec.partition(":")
        proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--size", str(args.size), "--worker", db],
            cwd=tree, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": tree})
        assert proc.stdin is not None and proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise SystemExit(f"{tree}: the worker did not start")
        procs.append(proc)
    start_load = load()
    samples: list[list[tuple[float, float, float]]] = [[] for _ in procs]
    for i, q in enumerate(queries(args.queries + WARM_UP)):
        order = list(range(len(procs)))
        for j in order if i % 2 == 0 else order[::-1]:
            stdin, stdout = procs[j].stdin, procs[j].stdout
            assert stdin is not None and stdout is not None
            stdin.write(q + "\n")
            stdin.flush()
            wall, cpu, main_cpu = map(float, stdout.readline().split())
            if i >= WARM_UP:
                samples[j].append((wall, cpu, main_cpu))
    rows = []
    for spec, got in zip(args.checkouts, samples, strict=True):
        wall, cpu, main_cpu = (list(x) for x in zip(*got, strict=True))
        rows.append([spec.partition(":")[0], len(got), percentile(wall, 50), percentile(wall, 95),
                     percentile(cpu, 50), percentile(cpu, 95), statistics.mean(cpu), percentile(main_cpu, 50),
                     statistics.mean(main_cpu)])
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
    print(f"{args.size:,} memories; load average {start_load} at the start, {load()} at the end (2 cores)\n")
    print(table(["checkout", "queries", "wall p50 ms", "wall p95", "process CPU p50", "CPU p95", "CPU mean",
                 "main-thread CPU p50", "main-thread mean"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
