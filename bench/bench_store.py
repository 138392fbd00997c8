"""Issue 2 benchmark: writer throughput, list/filter/search latency, first window, GUI stall on import.

Run: .venv/bin/python bench/bench_store.py [--sizes 10000 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, summary, table, time_ms

from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.rows import MemoryQuery


def _vocabulary(limit: int = 5000) -> tuple[list[str], list[int]]:
    """Words with their real frequencies, taken from the Python standard library's own source.

    Memories and queries are sampled from this Zipf-like distribution, so search
    selectivity resembles real text rather than a 40-word toy vocabulary.
    """
    import collections
    import re
    import sysconfig

    counts: collections.Counter[str] = collections.Counter()
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(stdlib.glob("*.py"))[:120]:
        counts.update(w.lower() for w in re.findall(r"[A-Za-z]{3,}", path.read_text(errors="replace")))
    common = counts.most_common(limit)
    return [w for w, _ in common], [c for _, c in common]


WORDS, WEIGHTS = _vocabulary()
TYPES = ["gotcha", "decision", "error_pattern", "dead_end", "workflow_recipe", "pattern", "module_insight"]


def make_memory(rng: random.Random, i: int) -> NewMemory:
    """A realistic-looking memory with files, tags and a type."""
    words = " ".join(rng.choices(WORDS, WEIGHTS, k=rng.randint(12, 40)))
    files = [f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}_{rng.randint(0, 300)}.py" for _ in range(rng.randint(0, 3))]
    return NewMemory(content=f"{words} (#{i})", type=rng.choice(TYPES), source="agent_explicit",
                     related_files=files, tags=[rng.choice(WORDS)], needs_review=rng.random() < 0.05,
                     confidence=round(rng.uniform(0.4, 0.95), 2))


def fill(svc: MemoryService, n: int, seed: int = 1) -> float:
    """Insert n memories in batches of 500; returns memories/s."""
    rng = random.Random(seed)
    # Build the inputs first: the benchmark measures the writer, not the random generator.
    batches = [[make_memory(rng, i) for i in range(start, min(n, start + 500))] for start in range(0, n, 500)]
    t = time.perf_counter()
    futures = [svc.add_many(batch) for batch in batches]
    for f in futures:
        f.result()
    return n / (time.perf_counter() - t)


def single_op_rate(svc: MemoryService, n: int = 5000) -> float:
    """Many independent add() calls in flight (group commit at work)."""
    rng = random.Random(7)
    items = [make_memory(rng, 10_000_000 + i) for i in range(n)]
    t = time.perf_counter()
    futures = [svc.add(m) for m in items]
    for f in futures:
        f.result()
    return n / (time.perf_counter() - t)


def latency_rows(svc: MemoryService, n: int) -> list[list[object]]:
    """p50/p95 of the reads the memory browser and CLI make."""
    rng = random.Random(3)
    some_file = svc.list(MemoryQuery(), limit=200)
    files = [f for m in some_file for f in m.related_files] or ["src/x.py"]
    cases = {
        "list newest 50": lambda: svc.list(MemoryQuery(), limit=50),
        "list page at offset 5000": lambda: svc.list(MemoryQuery(), limit=50, offset=5000),
        "filter type=gotcha": lambda: svc.list(MemoryQuery(types=["gotcha"]), limit=50),
        "filter status=needs_review": lambda: svc.list(MemoryQuery(statuses=["needs_review"]), limit=50),
        "filter by file": lambda: svc.list(MemoryQuery(files=[rng.choice(files)]), limit=50),
        "text search (FTS), 2 words": lambda: svc.list(
            MemoryQuery(text=" ".join(rng.choices(WORDS, WEIGHTS, k=2))), limit=50),
        "count (all live)": lambda: svc.count(),
        "all ids (browser model)": lambda: svc.list_ids(),
    }
    rows = []
    for name, fn in cases.items():
        fn()
        p50, p95, worst = summary(time_ms(fn, 60))
        rows.append([f"{n:,}", name, p50, p95, worst])
    return rows


def first_window_ms() -> float:
    """Cold start of `python main.py`-equivalent to the first painted window, in a fresh process."""
    probe = r"""
import sys, time
t0 = float(sys.argv[1])
sys.path.insert(0, sys.argv[2])
from desktop.ui.app import create_app
from desktop.composition import Engram
from desktop.ui.main_window import MainWindow
from PySide6.QtCore import QTimer
app = create_app(sys.argv)
win = MainWindow(Engram())
win.show()
def done():
    sys.stdout.write(str((time.time() - t0) * 1000)); sys.stdout.flush(); app.quit()
QTimer.singleShot(0, done)
app.exec()
"""
    values = []
    for _ in range(5):
        with tempfile.TemporaryDirectory() as data:
            env = dict(os.environ, ENGRAM_DATA_DIR=data, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
            out = subprocess.run([sys.executable, "-c", probe, str(time.time()), str(ROOT)], env=env,
                                 capture_output=True, text=True, check=True).stdout
            values.append(float(out.strip().splitlines()[-1]))
    return sorted(values)[len(values) // 2]


def gui_stall_during_import(n: int = 10_000, *, background: bool = False) -> tuple[float, float]:
    """Longest gap between 5 ms timer ticks on the GUI thread while n memories are imported."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QElapsedTimer, QTimer

    from desktop.composition import Engram
    from desktop.memory.lifecycle.portable import import_jsonl
    from desktop.settings import Settings
    from desktop.ui.app import create_app
    from desktop.ui.main_window import MainWindow

    app = create_app([])
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        (tmpdir / "proj").mkdir()
        src = tmpdir / "import.jsonl"
        rng = random.Random(5)
        with src.open("w") as fh:
            for i in range(n):
                m = make_memory(rng, i)
                fh.write(json.dumps({"content": m.content, "type": m.type, "related_files": m.related_files,
                                     "external_id": f"e{i}"}) + "\n")
        win = MainWindow(Engram(Settings(data_dir=tmpdir / "data")), onboarding=False, background=background)
        win.show()
        win.open_project(tmpdir / "proj")
        while win.project is None:
            app.processEvents()
        clock = QElapsedTimer()
        clock.start()
        gaps: list[float] = []
        last = [clock.elapsed()]

        def tick() -> None:
            now = clock.elapsed()
            gaps.append(now - last[0])
            last[0] = now
        timer = QTimer()
        timer.setInterval(5)
        timer.timeout.connect(tick)
        timer.start()
        done = []
        start = time.perf_counter()
        win.tasks.run(lambda: import_jsonl(win.project.memories, src), done.append)
        while not done:
            app.processEvents()
            time.sleep(0.001)
        # Let the view absorb the last change notices too.
        settle = time.perf_counter() + 1.0
        while time.perf_counter() < settle:
            app.processEvents()
            time.sleep(0.001)
        elapsed = time.perf_counter() - start
        timer.stop()
        win.close()
    return max(gaps) if gaps else 0.0, elapsed


def main() -> None:
    """Run everything and print the tables."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--gui-only", action="store_true")
    args = parser.parse_args()
    if args.gui_only:
        args.sizes = []
    throughput, latency = [], []
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp, Database(Path(tmp) / "bench.db") as db:
            svc = MemoryService(db)
            rate = fill(svc, n)
            throughput.append([f"{n:,}", "add_many, batches of 500", rate])
            if n == args.sizes[0]:
                throughput.append(["5,000", "5,000 separate add() in flight", single_op_rate(svc)])
            latency += latency_rows(svc, n)
            db_size = (Path(tmp) / "bench.db").stat().st_size / 1e6
            throughput.append([f"{n:,}", "database size (MB)", db_size])
    print("### Writer throughput (no embeddings)\n")
    print(table(["memories", "what", "memories/s"], throughput))
    print("\n### Read latency (ms)\n")
    print(table(["memories", "query", "p50", "p95", "max"], latency))
    fw = first_window_ms()
    stall, took = gui_stall_during_import()
    stall_bg, took_bg = gui_stall_during_import(background=True)
    print("\n### GUI\n")
    print(table(["measure", "value"], [
        ["time to first window (ms, median of 5 cold starts)", fw],
        ["longest GUI-thread stall while importing 10,000 memories (ms)", stall],
        ["import of 10,000 memories, wall time (s)", took],
        ["same, with the app's background services running (search index, conflicts): stall (ms)", stall_bg],
        ["same, with background services: import wall time (s)", took_bg]]))


if __name__ == "__main__":
    main()
