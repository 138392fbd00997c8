"""Numbers behind the health dashboard, computed on a pool thread in one pass of reads.

Health score (0-100) follows the design: average confidence x module coverage x
review activity. Coverage weighs least: a project whose rules were just imported and
confirmed has project-wide memories and none about a module yet, and that is a start,
not an alarm. The dashboard says in words what each part is and what would raise it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from desktop.memory.store.live import LIVE_MEMORY_SQL

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.ui")

COVERAGE_LEVELS = ("unknown", "shallow", "partial", "mapped")


@dataclass
class ModuleCoverage:
    """One module's memory count and coverage level; ``label`` is the name a person reads."""

    name: str
    files: int
    memories: int
    level: str
    label: str = ""

    @property
    def fraction(self) -> float:
        """Bar length 0-1."""
        return COVERAGE_LEVELS.index(self.level) / 3


@dataclass
class Health:
    """Everything the dashboard shows."""

    total: int = 0
    active_30d: int = 0
    needs_review: int = 0
    stale: int = 0
    pinned: int = 0
    avg_confidence: float = 0.0
    score: int = 0
    by_type: dict[str, int] = field(default_factory=dict)
    daily: list[int] = field(default_factory=list)          # additions per day, oldest first (14 days)
    modules: list[ModuleCoverage] = field(default_factory=list)
    activity: list[dict[str, Any]] = field(default_factory=list)
    attention: list[dict[str, Any]] = field(default_factory=list)


def coverage_level(count: int) -> str:
    """unknown (0) / shallow (1-2) / partial (3-5) / mapped (6+) memories about a module."""
    return "unknown" if count == 0 else "shallow" if count < 3 else "partial" if count < 6 else "mapped"


def _count(conn: Any, sql: str, params: tuple[str, ...] = ()) -> int:
    return int(conn.execute(sql, params).fetchall()[0][0])


def compute_health(project: Project, *, now: datetime | None = None, days: int = 14) -> Health:
    """Read the dashboard numbers (pool thread)."""
    conn = project.db.reads.conn()
    now = now or datetime.now(UTC)
    h = Health()
    live = LIVE_MEMORY_SQL
    total, pinned, avg = conn.execute(
        f"SELECT count(*), coalesce(sum(pinned),0), coalesce(avg(confidence),0) FROM memories WHERE {live}"
    ).fetchall()[0]
    h.total, h.pinned, h.avg_confidence = int(str(total)), int(str(pinned)), float(str(avg))
    since = (now - timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%S")
    h.active_30d = _count(conn, f"SELECT count(*) FROM memories WHERE {live} AND (last_accessed_at>=? "
                                "OR created_at>=?)", (since, since))
    h.needs_review = _count(conn, f"SELECT count(*) FROM memories WHERE {live} AND (needs_review=1 "
                                  "OR candidate=1)")
    h.stale = _count(conn, f"SELECT count(*) FROM memories WHERE {live} AND stale_at IS NOT NULL")
    h.by_type = {t: n for t, n in conn.execute(
        f"SELECT type, count(*) FROM memories WHERE {live} GROUP BY type ORDER BY 2 DESC")}
    start = (now - timedelta(days=days - 1)).date()
    per_day = dict(conn.execute("SELECT substr(created_at,1,10), count(*) FROM memories "
                                "WHERE created_at>=? AND type<>'code' GROUP BY 1", (start.isoformat(),)))
    h.daily = [int(per_day.get((start + timedelta(days=i)).isoformat(), 0)) for i in range(days)]
    h.modules = _modules(project, conn)
    # What happened to memories (added, edited, pinned, ...), not Engram's upkeep batches
    # (anchoring, pruning passes): the words the feed can show are the actions it lists.
    from desktop.ui.labels import AUDIT_ACTIONS

    h.activity = project.memories.audit_log(limit=30, actions=list(AUDIT_ACTIONS))
    h.attention = [{"id": i, "content": c, "why": "stale" if s else "review"} for i, c, s in conn.execute(
        f"SELECT id, content, stale_at FROM memories WHERE {live} AND (stale_at IS NOT NULL OR needs_review=1"
        " OR candidate=1) ORDER BY stale_at IS NULL, id DESC LIMIT 20")]
    h.score = health_score(h)
    return h


def _modules(project: Project, conn: Any) -> list[ModuleCoverage]:
    # min and max of a module's paths share the prefix every path in between shares: its folder.
    files = {m: (n, lo, hi) for m, n, lo, hi in conn.execute(
        "SELECT coalesce(module,'.'), count(*), min(file_path), max(file_path) FROM graph_files "
        "WHERE status<>'skipped' GROUP BY 1")}
    if not files:
        return []
    from desktop.memory.graph.queries import module_memory_counts

    counts = module_memory_counts(conn)  # the same count the module map shows
    return sorted((ModuleCoverage(m, n, counts.get(m, 0), coverage_level(counts.get(m, 0)),
                                  module_label(m, lo, hi))
                   for m, (n, lo, hi) in files.items()), key=lambda c: (-c.memories, c.label))


def module_label(name: str, first_file: str, last_file: str) -> str:
    """What a person reads for a module: its folder when the graph named it by a number (``pkg#6``)."""
    if "#" not in name and name not in (".", ""):
        return name
    common = []
    for a, b in zip(first_file.split("/")[:-1], last_file.split("/")[:-1], strict=False):
        if a != b:
            break
        common.append(a)
    folder = "/".join(common)
    if folder and folder != name.split("#")[0]:
        return folder
    base = folder or name.split("#")[0] or "."
    stem = first_file.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return f"{base} ({stem}…)" if "#" in name else base


def score_parts(h: Health) -> tuple[float, float, float]:
    """(confidence, coverage, reviewed), each 0-1: the three things the score multiplies."""
    coverage = (sum(1 for m in h.modules if m.memories) / len(h.modules)) if h.modules else 0.5
    reviewed = 1.0 - min(1.0, (h.needs_review + h.stale) / max(1, h.total))
    return h.avg_confidence, coverage, reviewed


def health_score(h: Health) -> int:
    """0-100: confidence x coverage x review activity; coverage moves it least (see the module docstring)."""
    if h.total == 0:
        return 0
    confidence, coverage, reviewed = score_parts(h)
    value = confidence * (0.75 + 0.25 * coverage) * (0.5 + 0.5 * reviewed)
    return max(0, min(100, round(value * 100)))
