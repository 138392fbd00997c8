"""Code-graph benchmark: cold index, live-update latency, impact query latency.

Usage: .venv/bin/python bench/bench_graph.py [--quick]
Codebases (none written here): Django and mypy from the virtualenv's site-packages
(Django is copied under /tmp so its own ``django.*`` imports resolve), and rxjs's
TypeScript sources from npm (``cd /tmp/jsbench && npm install rxjs@7``). Each cold
index runs in a fresh subprocess so peak RSS belongs to that run alone.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SITE = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
WORK = Path("/tmp/bench")


def codebases() -> list[tuple[str, Path]]:
    """(label, root) of each available codebase."""
    out = []
    django = SITE / "django"
    if django.is_dir():
        dest = WORK / "django_src"
        if not (dest / "django").is_dir():
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copytree(django, dest / "django", ignore=shutil.ignore_patterns("__pycache__"))
        import django as dj
        out.append((f"Django {dj.get_version()} (Python)", dest))
    mypy = SITE / "mypy"
    if mypy.is_dir():
        dest = WORK / "mypy_src"
        if not (dest / "mypy").is_dir():
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copytree(mypy, dest / "mypy", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        out.append(("mypy + typeshed (Python/.pyi)", dest))
    rx = Path("/tmp/jsbench/node_modules/rxjs/src")
    if rx.is_dir():
        out.append(("rxjs 7 src (TypeScript)", rx))
    return out


def one(root: Path, chunks: bool) -> dict[str, object]:
    """Cold-index ``root`` into a new database (runs inside the child process)."""
    from desktop.memory.graph.service import GraphService
    from desktop.memory.store.database import Database

    tmp = Path(tempfile.mkdtemp(prefix="engram-bench-"))
    db = Database(tmp / "g.sqlite").open()
    svc = GraphService(db, root, chunks=chunks)
    t0 = time.perf_counter()
    report = svc.index()
    seconds = time.perf_counter() - t0
    stats = svc.stats()
    db.close()
    size = sum(p.stat().st_size for p in tmp.iterdir())
    shutil.rmtree(tmp, ignore_errors=True)
    return {"files": report.indexed, "skipped": sum(report.skipped.values()), "seconds": seconds,
            "files_per_s": report.indexed / seconds, "db_mb": size / 1e6,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "nodes": stats["nodes"], "edges": stats["edges"], "closure": stats["closure_rows"],
            "chunks": stats["code_chunks"], "modules": stats["modules"]}


def live_and_queries(root: Path, edits: int, queries: int, chunks: bool) -> dict[str, object]:
    """Index a copy, then time watcher updates after the debounce and impact queries."""
    from desktop.memory.graph.service import GraphService
    from desktop.memory.store.database import Database

    tmp = Path(tempfile.mkdtemp(prefix="engram-live-"))
    proj = tmp / "proj"
    shutil.copytree(root, proj, ignore=shutil.ignore_patterns("__pycache__"))
    db = Database(tmp / "g.sqlite").open()
    svc = GraphService(db, proj, chunks=chunks)
    svc.index()
    conn = db.reads.conn()
    files = [r[0] for r in conn.execute("SELECT file_path FROM graph_files WHERE status='ok'"
                                        " AND language='python' ORDER BY file_path")]
    syms = [r[0] for r in conn.execute("SELECT file_path || ':' || label FROM graph_nodes"
                                       " WHERE type IN ('function','method','class')")]
    # The files most others depend on (most closure rows point at them): the worst case of a
    # live edit, because every closure row through the file's edges is recomputed.
    hot = [r[0] for r in conn.execute(
        "SELECT n.file_path, count(*) c FROM graph_closure g JOIN graph_nodes n ON n.id = g.descendant_id"
        " JOIN graph_files f ON f.file_path = n.file_path WHERE f.language='python'"
        " GROUP BY n.file_path ORDER BY c DESC LIMIT 5")]
    rng = random.Random(7)
    latencies: list[float] = []
    hot_lat: list[float] = []
    sink = [latencies]  # where the listener records: random edits first, then the hot files
    visible: list[bool] = []
    hot_visible: list[bool] = []
    seen = [visible]
    got = threading.Event()
    svc.subscribe(lambda batch, report, secs: (sink[0].append(secs), got.set()))
    svc.watcher.start()
    svc._initial_done.set()
    plan = [rng.choice(files) for _ in range(edits)] + hot * 2
    try:
        for i, rel in enumerate(plan):
            if i == edits:
                sink[0], seen[0] = hot_lat, hot_visible
            path = proj / rel
            got.clear()
            with path.open("a", encoding="utf-8") as fh:
                fh.write(f"\n\ndef _bench_probe_{i}():\n    return len([])\n")
            if not got.wait(15):
                continue
            seen[0].append(bool(db.reads.conn().execute(
                "SELECT 1 FROM graph_nodes WHERE id=?", (f"sym:{rel}:_bench_probe_{i}",)).fetchall())
                and not db.reads.conn().execute(
                    "SELECT 1 FROM graph_edges WHERE origin_file=? AND stale_at IS NOT NULL", (rel,)).fetchall())
            time.sleep(0.05)
    finally:
        svc.close()
    q_times: list[float] = []
    targets = [rng.choice(files) if k % 2 else rng.choice(syms) for k in range(queries)]
    for t in targets:
        t0 = time.perf_counter()
        svc.queries.impact(t, 3)
        q_times.append((time.perf_counter() - t0) * 1000)
    db.close()
    shutil.rmtree(tmp, ignore_errors=True)
    lat_ms = sorted(x * 1000 for x in latencies)
    hot_ms = sorted(x * 1000 for x in hot_lat) or [float("nan")]
    q_times.sort()
    return {"edits": len(lat_ms), "visible": sum(visible), "p50": statistics.median(lat_ms),
            "p95": lat_ms[int(0.95 * (len(lat_ms) - 1))], "max": lat_ms[-1],
            "hot_files": hot, "hot_n": len(hot_lat), "hot_visible": sum(hot_visible),
            "hot_p50": statistics.median(hot_ms), "hot_max": hot_ms[-1],
            "q_n": len(q_times), "q_p50": statistics.median(q_times),
            "q_p99": q_times[int(0.99 * (len(q_times) - 1))], "q_max": q_times[-1]}


def main() -> None:
    """Run everything and print Markdown tables."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", type=Path)
    ap.add_argument("--no-chunks", action="store_true")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    chunks = not args.no_chunks and importlib.util.find_spec("desktop.memory.text.tokens") is not None
    if args.one:
        sys.stdout.write(json.dumps(one(args.one, chunks)) + "\n")
        return
    print(f"Machine: {subprocess.run(['nproc'], capture_output=True, text=True).stdout.strip()} cores;"
          f" load average at start {os.getloadavg()[0]:.2f};"
          f" code chunks stored as memories: {'yes' if chunks else 'no'}\n")
    print("| Codebase | Files indexed | Skipped | Total s | Files/s | Nodes | Edges | Closure rows |"
          " Chunks | Modules | DB MB | Peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    bases = codebases()
    for label, root in bases:
        cmd = [sys.executable, __file__, "--one", str(root)] + (["--no-chunks"] if not chunks else [])
        res = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
        print(f"| {label} | {res['files']} | {res['skipped']} | {res['seconds']:.2f} | {res['files_per_s']:.0f} |"
              f" {res['nodes']} | {res['edges']} | {res['closure']} | {res['chunks']} | {res['modules']} |"
              f" {res['db_mb']:.1f} | {res['rss_mb']:.0f} |")
    label, root = bases[0]
    live = live_and_queries(root, 10 if args.quick else 40, 200 if args.quick else 2000, chunks)
    print(f"\nLive update on {label} (watcher, 500 ms debounce; time from debounce expiry to fresh edges"
          " committed)\n")
    print("| Edits | Fresh & visible | p50 ms | p95 ms | max ms |")
    print("|---|---|---|---|---|")
    print(f"| {live['edits']} | {live['visible']} | {live['p50']:.1f} | {live['p95']:.1f} | {live['max']:.1f} |")
    print(f"\nLive update of the 5 most depended-on files ({', '.join(live['hot_files'])}), each edited twice"
          " (worst case; not in the p95 above)\n")
    print("| Edits | Fresh & visible | p50 ms | max ms |")
    print("|---|---|---|---|")
    print(f"| {live['hot_n']} | {live['hot_visible']} | {live['hot_p50']:.1f} | {live['hot_max']:.1f} |")
    print(f"\nImpact query (depth 3) on {label}, random files and symbols\n")
    print("| Queries | p50 ms | p99 ms | max ms |")
    print("|---|---|---|---|")
    print(f"| {live['q_n']} | {live['q_p50']:.2f} | {live['q_p99']:.2f} | {live['q_max']:.2f} |")


if __name__ == "__main__":
    main()
