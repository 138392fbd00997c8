"""Helpers shared by the benchmark scripts (evaluation tooling, not shipped)."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
SHARED = (ROOT / ".." / "shared" / "data").resolve()


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of `values`."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def time_ms(fn: Callable[[], object], repeat: int) -> list[float]:
    """Wall time of `repeat` calls, in milliseconds."""
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table."""
    def cell(v: object) -> str:
        if isinstance(v, float):
            return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"
        return str(v)
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def summary(values: Sequence[float]) -> tuple[float, float, float]:
    """p50, p95, max."""
    return statistics.median(values), percentile(values, 95), max(values)
