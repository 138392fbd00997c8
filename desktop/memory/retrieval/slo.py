"""SLO monitor: rolling p95 of search latency, with degradation and recovery.

Over budget (p95 of the last ``window`` searches above ``budget_ms``, with at
least ``min_samples`` seen) the pipeline degrades: fewer candidates per path,
no rerank, no HyDE. It recovers when the p95 falls below ``recover_ratio`` of
the budget; the gap between the two thresholds keeps it from flapping.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from dataclasses import dataclass

__all__ = ["Limits", "SloMonitor"]

log = logging.getLogger("engram.retrieval")


@dataclass(frozen=True)
class Limits:
    """How much work one search may do."""

    candidates: int = 50       # per path
    rerank: bool = True
    hyde: bool = True
    neighbours: int = 20       # candidates whose session neighbours are looked up


NORMAL = Limits()
DEGRADED = Limits(candidates=20, rerank=False, hyde=False, neighbours=5)


class SloMonitor:
    """Tracks latencies and says whether the next search should run degraded."""

    def __init__(self, budget_ms: float = 250.0, *, window: int = 100, min_samples: int = 5,
                 recover_ratio: float = 0.6) -> None:
        """Configure the budget (ms) and the rolling window."""
        self.budget_ms = budget_ms
        self.min_samples = min_samples
        self.recover_ratio = recover_ratio
        self._samples: deque[float] = deque(maxlen=window)
        self._lock = threading.Lock()
        self._degraded = False
        self.transitions = 0

    def record(self, latency_ms: float) -> None:
        """Add one search's latency and update the degraded state."""
        with self._lock:
            self._samples.append(latency_ms)
            if len(self._samples) < self.min_samples:
                return
            p95 = self._p95()
            if not self._degraded and p95 > self.budget_ms:
                self._degraded = True
                self.transitions += 1
                log.warning("search p95 %.0f ms over the %.0f ms budget: degrading", p95, self.budget_ms)
            elif self._degraded and p95 < self.budget_ms * self.recover_ratio:
                self._degraded = False
                self.transitions += 1
                log.info("search p95 %.0f ms back under budget: full pipeline again", p95)

    def _p95(self) -> float:
        ordered = sorted(self._samples)
        idx = min(len(ordered) - 1, max(0, round(0.95 * (len(ordered) - 1))))
        return ordered[idx]

    @property
    def p95(self) -> float:
        """Current rolling p95 in ms (0 with no samples)."""
        with self._lock:
            return self._p95() if self._samples else 0.0

    @property
    def degraded(self) -> bool:
        """True while over budget."""
        return self._degraded

    def limits(self) -> Limits:
        """The limits for the next search."""
        return DEGRADED if self._degraded else NORMAL
