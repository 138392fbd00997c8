"""What memory is measured to change: comparable sessions with and without it (the A/B groups).

The A/B groups are assigned at random (``metrics.ab_group``): the control group's sessions
get no memory, the passive and full groups' do; a session whose group the run chose (the
guided tour, ``engram run --group``) is left out. This compares their finished sessions:
steps, tool calls and model tokens, each with both sample sizes and a permutation test of
the difference of means (``desktop.memory.stats``). A difference is called a difference only
when the test says it is distinguishable from chance; with fewer than ``MIN_SESSIONS`` in
either group nothing is compared ("not enough sessions yet").
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from statistics import mean
from typing import Any

from desktop.agents.metrics import CONTROL, FULL, PASSIVE
from desktop.memory.stats import ALPHA, permutation_test

MIN_SESSIONS = 3
MEASURES = ("steps", "tool_calls", "model_tokens")


@dataclass
class GroupStats:
    """One group's finished sessions: the values of each measure (a provider may not report tokens)."""

    sessions: int = 0
    values: dict[str, list[float]] = field(default_factory=dict)

    def n(self, measure: str) -> int:
        """How many sessions report ``measure``."""
        return len(self.values.get(measure, []))


@dataclass(frozen=True)
class Comparison:
    """One measure with memory and without: both means, both sample sizes, and the test's verdict."""

    measure: str
    with_mean: float
    without_mean: float
    n_with: int
    n_without: int
    p_value: float

    @property
    def distinguishable(self) -> bool:
        """True when the difference is unlikely to be chance (two-sided permutation test, p < 0.05)."""
        return self.p_value < ALPHA


@dataclass
class MemoryEffect:
    """With memory vs without, and whether there are enough sessions to compare at all."""

    with_memory: GroupStats
    without: GroupStats
    min_sessions: int = MIN_SESSIONS

    def enough(self, measure: str = "steps") -> bool:
        """True when both groups have at least ``min_sessions`` sessions reporting ``measure``."""
        return min(self.with_memory.n(measure), self.without.n(measure)) >= self.min_sessions

    def compare(self, measure: str = "steps") -> Comparison | None:
        """The comparison of ``measure``, or None when there are not enough sessions yet."""
        if not self.enough(measure):
            return None
        a, b = self.with_memory.values[measure], self.without.values[measure]
        return Comparison(measure, mean(a), mean(b), len(a), len(b), permutation_test(a, b))


def _stats(rows: list[dict[str, Any]]) -> GroupStats:
    out = GroupStats(sessions=len(rows))
    for key in MEASURES:
        values = [float(r[key]) for r in rows if isinstance(r.get(key), int | float)]
        if values:
            out.values[key] = values
    return out


def memory_effect(db: Any, *, min_sessions: int = MIN_SESSIONS) -> MemoryEffect:
    """Read successful sessions of Engram's agent per A/B group (read-only; call off the GUI thread)."""
    groups: dict[str, list[dict[str, Any]]] = {CONTROL: [], PASSIVE: [], FULL: []}
    for group, blob in db.reads.conn().execute(
            "SELECT ab_group, metrics FROM session_metrics WHERE agent = 'engram' AND outcome = 'success' "
            "AND ab_group IN (?, ?, ?)", (CONTROL, PASSIVE, FULL)):
        agent = json.loads(blob or "{}").get("agent") or {}
        if agent.get("ab_random", True):  # a group chosen by the run (the tour, --group) is no experiment
            groups[str(group)].append(agent)
    return MemoryEffect(_stats(groups[PASSIVE] + groups[FULL]), _stats(groups[CONTROL]), min_sessions)
