"""A/B groups and per-session metrics (design 003 section 19, 004 section 7).

Group assignment is a stable hash of session and project id: 5% control (no
injection; the observer still learns), 10% passive (T1 + T2 only), 85% full (all
four tiers). Metrics are merged into ``session_metrics.metrics`` under the key
``agent`` through one writer op, after promotion wrote the observer's own row.
"""

from __future__ import annotations

import hashlib
import json
import math
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from desktop.memory.store.writer import FnOp, Tx

CONTROL, PASSIVE, FULL = "control", "passive", "full"
AB_GROUPS = (CONTROL, PASSIVE, FULL)
TIERS: dict[str, frozenset[str]] = {
    CONTROL: frozenset(), PASSIVE: frozenset({"t1", "t2"}), FULL: frozenset({"t1", "t2", "t3", "t4"}),
}
DISCOVERY_TOOLS = frozenset({"Read", "Grep", "Glob"})
DISCOVERY_WINDOW = 30


def ab_group(session_id: str, project_id: str) -> str:
    """The session's group: the same session and project always land in the same one."""
    h = int(hashlib.sha256(f"{session_id}:{project_id}".encode()).hexdigest()[:8], 16) % 100
    if h < 5:
        return CONTROL
    if h < 15:
        return PASSIVE
    return FULL


def p95(values: list[float]) -> float:
    """The 95th percentile (nearest rank); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


@dataclass
class SessionMetrics:
    """Counters one session accumulates."""

    group: str
    prefetched: list[str] = field(default_factory=list)
    prefetch_tokens: int = 0
    discovery_calls: int = 0
    tool_calls: int = 0
    reads: dict[str, int] = field(default_factory=dict)
    early_reads: set[str] = field(default_factory=set)
    re_reads: int = 0
    dead_end_reentries: int = 0
    injections: dict[str, int] = field(default_factory=dict)
    tokens_added: dict[str, int] = field(default_factory=dict)
    cited: set[int] = field(default_factory=set)
    denied: int = 0
    memory_timeouts: int = 0
    model_tokens: int | None = None  # input + output as the provider reported them (None: never reported)

    def on_tool(self, step: int, tool: str, files: list[str], dead_end_files: dict[str, set[int]]) -> None:
        """Count one tool call."""
        self.tool_calls += 1
        if step <= DISCOVERY_WINDOW and tool in DISCOVERY_TOOLS:
            self.discovery_calls += 1
        for f in files:
            if tool == "Read":
                if self.reads.get(f):
                    self.re_reads += 1
                self.reads[f] = self.reads.get(f, 0) + 1
                if step <= DISCOVERY_WINDOW:
                    self.early_reads.add(f)
            if tool in ("Edit", "Write") and dead_end_files.get(f):
                self.dead_end_reentries += 1

    def on_turn(self, input_tokens: int, output_tokens: int) -> None:
        """Add one model turn's reported usage (providers that report none leave it None)."""
        if input_tokens or output_tokens:
            self.model_tokens = (self.model_tokens or 0) + int(input_tokens) + int(output_tokens)

    def on_injection(self, tier: str, tokens: int) -> None:
        """Count one injection of ``tier``."""
        self.injections[tier] = self.injections.get(tier, 0) + 1
        self.tokens_added[tier] = self.tokens_added.get(tier, 0) + tokens

    def prefetch_hit_rate(self) -> float | None:
        """Share of prefetched files the agent did NOT re-read in its first 30 steps."""
        if not self.prefetched:
            return None
        missed = sum(1 for p in self.prefetched if p in self.early_reads)
        return 1 - missed / len(self.prefetched)

    def as_dict(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """JSON-ready summary."""
        data = {
            "ab_group": self.group, "tool_calls": self.tool_calls,
            "discovery_tool_calls_1_30": self.discovery_calls, "prefetched_files": len(self.prefetched),
            "prefetch_tokens": self.prefetch_tokens, "prefetch_hit_rate": self.prefetch_hit_rate(),
            "re_reads": self.re_reads, "dead_end_reentries": self.dead_end_reentries,
            "injections": dict(self.injections), "tokens_added": dict(self.tokens_added),
            "injections_total": sum(self.injections.values()),
            "tokens_added_total": sum(self.tokens_added.values()),
            "citations": sorted(self.cited), "approvals_denied": self.denied,
            "memory_timeouts": self.memory_timeouts, "model_tokens": self.model_tokens,
        }
        data.update(extra or {})
        return data


def save_metrics(db: Any, session_id: str, agent: str, group: str, metrics: dict[str, Any], *,
                 started_at: str | None = None, outcome: str | None = None) -> Future[None]:
    """Upsert the row and merge ``{"agent": metrics}`` into its JSON (one writer op)."""
    blob = json.dumps({"agent": metrics}, ensure_ascii=False, default=str)

    def write(tx: Tx) -> None:
        tx.execute("INSERT INTO session_metrics(session_id, agent, started_at, ended_at, outcome, ab_group,"
                   " session_type, metrics) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(session_id) DO UPDATE SET"
                   " ab_group = excluded.ab_group, outcome = coalesce(session_metrics.outcome, excluded.outcome),"
                   " metrics = json_patch(session_metrics.metrics, excluded.metrics)",
                   (session_id, agent, started_at or tx.now, tx.now, outcome, group, "agent", blob))
        tx.changed("session_metrics", "updated", [session_id])
    return db.writer.submit(FnOp("save_session_metrics", write))
