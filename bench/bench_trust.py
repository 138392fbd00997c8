"""Issue 14: what the one redaction boundary and the new detectors cost, and the look-alike precision.

Run: .venv/bin/python bench/bench_trust.py
Prints a Markdown table (add `uptime` load beside it: the box is shared).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import desktop.memory.privacy.boundary as boundary
from desktop.memory.privacy.secrets import scan
from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database
from desktop.memory.store.memory_ops import NewMemory

N_MEMORIES = 5000
RUNS = 3


def _bulk_add(guarded: bool) -> float:
    original = boundary._params
    if not guarded:
        boundary._params = lambda p: p  # the writer exactly as it was before the boundary
    try:
        with tempfile.TemporaryDirectory() as tmp, Database(Path(tmp) / "b.db") as db:
            svc = MemoryService(db)
            items = [NewMemory(content=f"Memory {i}: the cache key of module m{i % 50} includes the tenant id",
                               source="agent_explicit", related_files=[f"src/m{i % 50}/cache_{i}.py"],
                               tags=["observer", "gotcha"], metadata={"signal_key": f"error_retry:{i:08x}"})
                     for i in range(N_MEMORIES)]
            start = time.perf_counter()
            for k in range(0, N_MEMORIES, 500):
                svc.add_many(items[k:k + 500], actor="observer").result(120)
            return time.perf_counter() - start
    finally:
        boundary._params = original


def _scan_us(texts: list[str]) -> float:
    start = time.perf_counter()
    for t in texts:
        scan(t)
    return (time.perf_counter() - start) / len(texts) * 1e6


def main() -> None:
    """Measure and print."""
    off = [_bulk_add(False) for _ in range(RUNS)]
    on = [_bulk_add(True) for _ in range(RUNS)]
    short = ([f"src/module/file_{i}.py" for i in range(20000)] + ["2026-11-23T20:00:00.000Z"] * 20000
             + [f"SomeSymbolName{i}" for i in range(20000)])
    print("| measure | runs | median | min |\n|---|---|---|---|")
    print(f"| add {N_MEMORIES} agent memories, writer without boundary (s) | {RUNS} | "
          f"{statistics.median(off):.2f} | {min(off):.2f} |")
    print(f"| same, with the boundary (s) | {RUNS} | {statistics.median(on):.2f} | {min(on):.2f} |")
    print(f"| scan() of a short clean string (µs, n={len(short)}) | 1 | {_scan_us(short):.2f} | |")


if __name__ == "__main__":
    main()
