"""What memory is measured to change: comparable sessions with and without it (the A/B groups).

The app used to show "tokens saved" as a multiple of the memories' own length, a
number nobody measured. This compares finished sessions of Engram's agent in the
control group (no injection) with those given memory (passive and full groups):
mean steps, tool calls and model tokens, each with its sample size. With fewer than
``MIN_SESSIONS`` in either group nothing is claimed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from statistics import mean
from typing import Any

from desktop.agents.metrics import CONTROL, FULL, PASSIVE

MIN_SESSIONS = 3
MEASURES = ("steps", "tool_calls", "model_tokens")


@dataclass
class GroupStats:
    """Means over one group's finished sessions; ``n`` per measure (a provider may not report tokens)."""

    sessions: int = 0
    means: dict[str, float] = field(default_factory=dict)
    n: dict[str, int] = field(default_factory=dict)


@dataclass
class MemoryEffect:
    """With memory vs without, and whether there is enough data to say anything."""

    with_memory: GroupStats
    without: GroupStats
    min_sessions: int = MIN_SESSIONS

    @property
    def measured(self) -> bool:
        """True when both groups have at least ``min_sessions`` finished sessions."""
        return min(self.with_memory.sessions, self.without.sessions) >= self.min_sessions

    def change(self, measure: str) -> float | None:
        """Relative change with memory (-0.2 = 20 % fewer), None when not measured."""
        a, b = self.with_memory.means.get(measure), self.without.means.get(measure)
        if not self.measured or a is None or not b:
            return None
        return (a - b) / b


def _stats(rows: list[dict[str, Any]]) -> GroupStats:
    out = GroupStats(sessions=len(rows))
    for key in MEASURES:
        values = [float(r[key]) for r in rows if isinstance(r.get(key), (int, float)) and r.get(key) is not None]
        if values:
            out.means[key] = mean(values)
            out.n[key] = len(values)
    return out


def memory_effect(db: Any, *, min_sessions: int = MIN_SESSIONS) -> MemoryEffect:
    """Read successful sessions of Engram's agent per A/B group (read-only; call off the GUI thread)."""
    groups: dict[str, list[dict[str, Any]]] = {CONTROL: [], PASSIVE: [], FULL: []}
    for group, blob in db.reads.conn().execute(
            "SELECT ab_group, metrics FROM session_metrics WHERE agent = 'engram' AND outcome = 'success' "
            "AND ab_group IN (?, ?, ?)", (CONTROL, PASSIVE, FULL)):
        agent = json.loads(blob or "{}").get("agent") or {}
        groups[str(group)].append(agent)
    return MemoryEffect(_stats(groups[PASSIVE] + groups[FULL]), _stats(groups[CONTROL]), min_sessions)
