"""Team memory on PostgreSQL (issue 18): push throughput, propagation latency, search overhead, 20 clients.

One command, run by hand (starts its own PostgreSQL in a temp folder, loopback only):

    .venv/bin/python bench/bench_team.py [--n 10000] [--samples 40] [--clients 20] [--json out.json]

Prints a Markdown table for bench/RESULTS.md, with the machine's load (`uptime`).
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import ROOT, percentile, table

from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.team import service as team
from tests.support.keyrings import memory_keyring
from tests.support.postgres import PostgresServer

WORDS = ("cache", "parser", "billing", "worker", "token", "refresh", "schema", "migration", "queue", "retry",
         "timeout", "index", "vector", "session", "import", "export", "hook", "watcher", "graph", "module",
         "config", "deploy", "staging", "lint", "flag")


def lesson(i: int, tag: str) -> NewMemory:
    """A distinct, realistic-length memory."""
    w = [WORDS[(i * k + k) % len(WORDS)] for k in range(1, 9)]
    return NewMemory(content=f"{tag} #{i}: the {w[0]} {w[1]} breaks when {w[2]} {w[3]} runs before {w[4]}; "
                             f"set {w[5]}_{i % 97} and restart the {w[6]} {w[7]}.",
                     type=("gotcha", "decision", "pattern", "dead_end")[i % 4], tags=[w[0], w[1]],
                     related_files=[f"src/{w[2]}/{w[3]}_{i % 50}.py"])


def open_db(folder: Path, name: str) -> Database:
    (folder / name).mkdir(parents=True, exist_ok=True)
    return Database(folder / name / "engram.db").open()


def count(db: Database) -> int:
    return int(db.reads.conn().execute("SELECT count(*) FROM memories").fetchall()[0][0])


def bench_initial_push(url: str, tmp: Path, n: int) -> dict[str, Any]:
    """Alice has n memories, creates the team; time the first push (and Bob's first pull)."""
    a, b = open_db(tmp, "push-a"), open_db(tmp, "push-b")
    items = [lesson(i, "push") for i in range(n)]
    for start in range(0, n, 1000):
        MemoryService(a).add_many(items[start:start + 1000]).result()
    result = team.init_team(a, url, "push-team", member="alice", project_key="bench")
    team.join_team(b, result.join_url, member="bob", project_key="bench")
    t = time.perf_counter()
    report = team.sync_now(a)
    push_s = time.perf_counter() - t
    t = time.perf_counter()
    pulled = team.sync_now(b)
    pull_s = time.perf_counter() - t
    out = {"n": n, "push_s": push_s, "pushed": report.pushed, "pull_s": pull_s, "pulled": pulled.pulled,
           "pull_count": count(b)}
    a.close()
    b.close()
    return out


def bench_propagation(url: str, tmp: Path, samples: int, interval: float) -> dict[str, Any]:
    """Both machines online with their background sync: add on A, time until B's local database has it."""
    a, b = open_db(tmp, "lat-a"), open_db(tmp, "lat-b")
    result = team.init_team(a, url, "latency-team", member="alice", project_key="bench")
    team.join_team(b, result.join_url, member="bob", project_key="bench")
    engines = [team.engine_for(db, interval=interval).start() for db in (a, b)]
    lat: list[float] = []
    try:
        time.sleep(2 * interval)
        mem = MemoryService(a)
        for i in range(samples):
            time.sleep(random.uniform(0, interval))  # no phase lock between the probe and B's poll
            text = f"latency probe {i}: the deploy hook needs LOG_LEVEL set"
            t = time.perf_counter()
            mem.add(text, type="gotcha").result()
            conn = b.reads.conn()
            while not conn.execute("SELECT 1 FROM memories WHERE content = ?", (text,)).fetchall():
                time.sleep(0.005)
                if time.perf_counter() - t > 30:
                    break
            lat.append(time.perf_counter() - t)
            time.sleep(0.1)
    finally:
        for e in engines:
            e.close()
        a.close()
        b.close()
    return {"samples": len(lat), "interval_s": interval, "p50_s": percentile(lat, 50), "p95_s": percentile(lat, 95),
            "max_s": max(lat)}


def bench_search_overhead(url: str, tmp: Path, n: int, rounds: int, queries: int) -> dict[str, Any]:
    """FTS+dense search on B with no sync vs. sync running while A writes 5 changes a second."""
    from desktop.composition import Engram
    from desktop.settings import Settings

    a = open_db(tmp, "search-a")
    MemoryService(a).add_many([lesson(i, "search") for i in range(n)]).result()
    result = team.init_team(a, url, "search-team", member="alice", project_key="bench")
    team.sync_now(a)
    app = Engram(Settings.load(tmp / "search-data"))
    (tmp / "search-proj").mkdir(exist_ok=True)
    project = app.open_project(tmp / "search-proj", remember=False)
    team.join_team(project.db, result.join_url, member="bob", project_key="bench")
    team.sync_now(project.db)
    search = project.build_search(start_indexer=False)
    search.sync_vectors()
    qs = [f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7) % len(WORDS)]} restart" for i in range(queries)]
    for q in qs[:5]:
        search.search(q)  # warm caches and the model

    def run_queries() -> list[float]:
        out = []
        for q in qs:
            t = time.perf_counter()
            search.search(q, limit=10)
            out.append((time.perf_counter() - t) * 1000)
        return out

    off: list[float] = []
    on: list[float] = []
    a.close()
    # A teammate in another process writes 5 changes a second and syncs them, during both
    # phases (same CPU competition); only B's sync engine is switched on and off.
    churn = subprocess.Popen([sys.executable, "-c", CHURN, str(ROOT), str(tmp / "search-churn"),
                              result.join_url], stdout=subprocess.DEVNULL)
    pulled_before = count(project.db)
    try:
        time.sleep(1.0)
        for _ in range(rounds):
            for phase in random.sample(["off", "on"], 2):  # random order: no first/second-phase bias
                if phase == "off":
                    time.sleep(1.0)
                    off += run_queries()
                else:
                    engine = team.engine_for(project.db, interval=1.0).start()
                    time.sleep(1.0)
                    on += run_queries()
                    engine.close()
        # The same cost without query noise: CPU the sync engine adds to this process, idle vs running.
        cpu: dict[str, float] = {}
        for label in ("off", "on"):
            engine = team.engine_for(project.db, interval=1.0).start() if label == "on" else None
            t0, c0 = time.perf_counter(), time.process_time()
            time.sleep(5.0)
            cpu[label] = 1000 * (time.process_time() - c0) / (time.perf_counter() - t0)
            if engine is not None:
                engine.close()
    finally:
        churn.terminate()
        churn.wait(10)
    pulled = count(project.db) - pulled_before
    search.close()
    project.close()
    mean_off, mean_on = sum(off) / len(off), sum(on) / len(on)
    return {"memories": n, "queries_each": len(off), "off_p50_ms": percentile(off, 50),
            "off_p95_ms": percentile(off, 95), "on_p50_ms": percentile(on, 50), "on_p95_ms": percentile(on, 95),
            "added_mean_pct": 100 * (mean_on - mean_off) / mean_off, "pulled_meanwhile": pulled,
            "cpu_ms_per_s_off": cpu["off"], "cpu_ms_per_s_on": cpu["on"]}


CHURN = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from tests.support.keyrings import memory_keyring
from desktop.memory.store.database import Database
from desktop.memory.service import MemoryService
from desktop.memory.team import service as team
folder = Path(sys.argv[2]); folder.mkdir(parents=True, exist_ok=True)
with memory_keyring():
    db = Database(folder / "engram.db").open()
    team.join_team(db, sys.argv[3], member="carol", project_key="bench")
    engine = team.engine_for(db, interval=0.5).start()
    i = 0
    while True:
        MemoryService(db).add(f"churn {i}: the queue worker retries on timeout", type="gotcha").result()
        i += 1
        time.sleep(0.2)
"""

CLIENT = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from tests.support.keyrings import memory_keyring
from desktop.memory.store.database import Database
from desktop.memory.service import MemoryService
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.team import service as team
folder, url, idx, per, total, deadline = Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), \\
    int(sys.argv[6]), float(sys.argv[7])
folder.mkdir(parents=True, exist_ok=True)
with memory_keyring():
    db = Database(folder / "engram.db").open()
    team.join_team(db, url, member=f"dev{idx}", project_key="bench")
    engine = team.engine_for(db, interval=1.0).start()
    t0 = time.perf_counter()
    MemoryService(db).add_many([NewMemory(content=f"client {idx} lesson {i}: flag f{i} before start",
                                          type="gotcha") for i in range(per)]).result()
    n = 0
    while time.perf_counter() - t0 < deadline:
        n = db.reads.conn().execute("SELECT count(*) FROM memories").fetchall()[0][0]
        if n >= total:
            break
        time.sleep(0.05)
    took = time.perf_counter() - t0
    errors = engine.last_error.code if engine.last_error else ""
    engine.close()
    db.close()
print(json.dumps({"idx": idx, "seconds": took, "count": n, "error": errors}))
"""


def bench_many_clients(url: str, tmp: Path, clients: int, per: int, deadline: float) -> dict[str, Any]:
    """`clients` processes join one team, each adds `per` memories; time until each has everyone's."""
    a = open_db(tmp, "many-admin")
    result = team.init_team(a, url, "many-team", member="admin", project_key="bench-many")
    a.close()
    total = clients * per
    t = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", CLIENT, str(ROOT), str(tmp / f"many-{i}"), result.join_url,
                               str(i), str(per), str(total), str(deadline)], stdout=subprocess.PIPE, text=True)
             for i in range(clients)]
    outs = []
    for p in procs:
        stdout, _ = p.communicate(timeout=deadline + 60)
        outs.append(json.loads(stdout.strip().splitlines()[-1]))
    wall = time.perf_counter() - t
    secs = [o["seconds"] for o in outs]
    return {"clients": clients, "per_client": per, "total": total, "converged": sum(o["count"] >= total for o in outs),
            "p50_s": percentile(secs, 50), "p95_s": percentile(secs, 95), "max_s": max(secs), "wall_s": wall,
            "errors": sum(bool(o["error"]) for o in outs)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--search-n", type=int, default=2000)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--per-client", type=int, default=25)
    ap.add_argument("--rounds", type=int, default=6, help="off/on alternations of the search measure")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    # A terminated run still stops its PostgreSQL (the `finally` below runs on SystemExit).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    pg = PostgresServer(log_statements=False).start()
    tmp = Path(tempfile.mkdtemp(prefix="engram-bench-team-"))
    res: dict[str, Any] = {"uptime_before": load}
    try:
        with memory_keyring():
            url = pg.create_database("bench")
            res["push"] = bench_initial_push(url, tmp, args.n)
            print("push", res["push"], file=sys.stderr)
            res["latency"] = bench_propagation(url, tmp, args.samples, 1.0)
            print("latency", res["latency"], file=sys.stderr)
            res["search"] = bench_search_overhead(url, tmp, args.search_n, args.rounds, 30)
            print("search", res["search"], file=sys.stderr)
            res["many"] = bench_many_clients(url, tmp, args.clients, args.per_client, 120.0)
            print("many", res["many"], file=sys.stderr)
    finally:
        pg.cleanup()
    res["uptime_after"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    p, lat, s, m = res["push"], res["latency"], res["search"], res["many"]
    rows = [
        ("initial push", f"{p['n']} memories", f"{p['push_s']:.2f} s ({p['pushed']} acked); "
         f"first pull on 2nd machine {p['pull_s']:.2f} s ({p['pull_count']} rows)", "<= 10 s",
         "met" if p["push_s"] <= 10 and p["pushed"] == p["n"] else "NOT met"),
        ("change visible on the other machine", f"{lat['samples']} changes, NOTIFY + {lat['interval_s']} s poll",
         f"p50 {lat['p50_s']:.2f} s, p95 {lat['p95_s']:.2f} s, max {lat['max_s']:.2f} s", "p95 <= 2 s",
         "met" if lat["p95_s"] <= 2 else "NOT met"),
        ("search latency, sync running", f"{s['memories']} memories, {s['queries_each']} queries each",
         f"off p50 {s['off_p50_ms']:.1f} / p95 {s['off_p95_ms']:.1f} ms; on p50 {s['on_p50_ms']:.1f} / "
         f"p95 {s['on_p95_ms']:.1f} ms; mean {s['added_mean_pct']:+.1f} % ({s['pulled_meanwhile']} pulled meanwhile);"
        f" process CPU idle {s['cpu_ms_per_s_off']:.1f} vs syncing {s['cpu_ms_per_s_on']:.1f} ms/s",
         "<= +5 %",
         "met" if s["added_mean_pct"] <= 5 else "NOT met"),
        ("20 client processes", f"{m['clients']} x {m['per_client']} memories",
         f"{m['converged']}/{m['clients']} converged; each had all {m['total']}: p50 {m['p50_s']:.1f} s, "
         f"p95 {m['p95_s']:.1f} s, max {m['max_s']:.1f} s; errors {m['errors']}", "bounded (120 s)",
         "met" if m["converged"] == m["clients"] else "NOT met"),
    ]
    print(table(("measure", "sample", "result", "target", "verdict"), rows))
    print(f"\nLoad: before `{res['uptime_before']}`; after `{res['uptime_after']}`")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
