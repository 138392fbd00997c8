"""The pruning pass: decay, TTL, quarantine expiry, soft limit and hard delete, in one op.

Rules (design V5 section 18, document 001 section 16):

* **decay** - a memory unused for more than 3 half-lives is soft-deprecated.
* **ttl** - a memory older than its type's TTL that was used fewer than 3 times
  is soft-deprecated (pinned and user-verified memories never expire).
* **quarantine** - an auto-promoted candidate never used within 14 days goes.
* **evict** - above the soft limit, the lowest decayed-confidence memories are
  soft-deprecated down to 90 % of it; pinned, user-verified and memories used in
  the last 24 hours are never evicted.
* **prune** - 30 days after deprecation a memory is hard-deleted, unless the
  user verified (or pinned) it.

Everything is set-based: ids are selected into a temp table with a few
INSERT ... SELECT statements, audit rows are written with one INSERT ... SELECT
(actor ``engram``, a reason sentence per row), then one UPDATE / DELETE applies
them. The whole pass is one WriteOp, so it is one short transaction.
"""

from __future__ import annotations

import json
import logging
import time
from concurrent.futures import Future
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, ClassVar, cast

from desktop.memory.lifecycle.decay import DECAYED_SQL, SOFT_DEPRECATE_HALF_LIVES
from desktop.memory.lifecycle.emergency import fill_temp, in_own_transaction, live_count, purge_temp
from desktop.memory.store.connection import count_of
from desktop.memory.store.live import live_memory
from desktop.memory.store.writer import MaintenanceOp, Tx, iso
from desktop.memory.types import MemoryType

log = logging.getLogger("engram.lifecycle")

ACTOR = "engram"
# Days a memory may live without being used at least 3 times (document 001, section 16,
# mapped onto Engram's types). Types absent here never expire by age.
TTL_DAYS: dict[str, float] = {
    MemoryType.WORK_STATE.value: 14,
    MemoryType.PREFETCH_PATTERN.value: 21,
    MemoryType.CONTEXT_COST.value: 21,
    MemoryType.E2E_OBSERVATION.value: 30,
    MemoryType.ERROR_PATTERN.value: 90,
    MemoryType.DEAD_END.value: 90,
    MemoryType.GOTCHA.value: 180,
    MemoryType.PATTERN.value: 180,
    MemoryType.MODULE_INSIGHT.value: 180,
    MemoryType.WORKFLOW_RECIPE.value: 180,
    MemoryType.CAUSAL_DEPENDENCY.value: 180,
    MemoryType.TASK_CALIBRATION.value: 180,
    MemoryType.WORK_UNIT_OUTCOME.value: 180,
}
TTL_SURVIVE_ACCESSES = 3


@dataclass
class PruneConfig:
    """Knobs of the pass; defaults follow the design documents."""

    soft_limit: int = 3000
    evict_to_ratio: float = 0.9
    recent_hours: float = 24.0
    grace_days: float = 30.0
    candidate_days: float = 14.0
    ttl_days: dict[str, float] = field(default_factory=lambda: dict(TTL_DAYS))


@dataclass
class PruneReport:
    """What one pass did (or, with dry_run, would do)."""

    dry_run: bool
    at: str
    decayed: int = 0
    expired: int = 0
    quarantine_expired: int = 0
    evicted: int = 0
    hard_deleted: int = 0
    cache_evicted: int = 0
    live_before: int = 0
    live_after: int = 0
    seconds: float = 0.0
    sample: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (CLI --json)."""
        return asdict(self)


_BASE = f"{live_memory('m')} AND m.pinned = 0"
_DAYS_UNUSED = "(julianday(:now) - julianday(m.last_accessed_at))"
_AGE = "(julianday(:now) - julianday(m.created_at))"

_SELECT_DECAY = f"""
INSERT OR IGNORE INTO temp._prune(id, action, rule, reason, detail)
SELECT m.id, 'decay', 'decay',
  printf('Not used for %d days, more than %g half-lives of %g days: confidence %.2f decayed to %.2f.',
         CAST({_DAYS_UNUSED} AS INTEGER), {SOFT_DEPRECATE_HALF_LIVES}, m.decay_half_life_days,
         m.confidence, {DECAYED_SQL}),
  json_object('rule', 'decay', 'half_life_days', m.decay_half_life_days,
              'days_unused', round({_DAYS_UNUSED}, 1), 'confidence', m.confidence)
FROM memories m
WHERE {_BASE} AND m.decay_half_life_days > 0
  AND {_DAYS_UNUSED} > {SOFT_DEPRECATE_HALF_LIVES} * m.decay_half_life_days
"""

_SELECT_TTL = f"""
INSERT OR IGNORE INTO temp._prune(id, action, rule, reason, detail)
SELECT m.id, 'prune', 'ttl',
  printf('Older than the %g-day TTL of %s memories and used only %d time(s).',
         t.value, m.type, m.access_count),
  json_object('rule', 'ttl', 'ttl_days', t.value, 'age_days', round({_AGE}, 1),
              'access_count', m.access_count)
FROM memories m JOIN json_each(:ttl) t ON t.key = m.type
WHERE {_BASE} AND m.user_verified = 0 AND m.access_count < {TTL_SURVIVE_ACCESSES}
  AND {_AGE} > t.value
"""

_SELECT_QUARANTINE = f"""
INSERT OR IGNORE INTO temp._prune(id, action, rule, reason, detail)
SELECT m.id, 'prune', 'quarantine',
  printf('Auto-promoted candidate never used in %g days.', :candidate_days),
  json_object('rule', 'quarantine', 'age_days', round({_AGE}, 1))
FROM memories m
WHERE m.candidate = 1 AND {_BASE} AND m.user_verified = 0 AND m.access_count = 0
  AND {_AGE} > :candidate_days
"""

_SELECT_EVICT = f"""
INSERT OR IGNORE INTO temp._prune(id, action, rule, reason, detail)
SELECT id, 'evict', 'soft_limit',
  printf('Over the soft limit of %d memories: evicted with the lowest decayed confidence (%.3f).',
         :soft_limit, score),
  json_object('rule', 'soft_limit', 'soft_limit', :soft_limit, 'decayed_confidence', round(score, 4))
FROM (
  SELECT m.id AS id, {DECAYED_SQL} AS score FROM memories m
  WHERE {_BASE} AND m.user_verified = 0
    AND julianday(m.last_accessed_at) < julianday(:now) - :recent_days
    AND m.id NOT IN (SELECT id FROM temp._prune)
  ORDER BY score ASC, m.id ASC LIMIT :n
)
"""

_SELECT_HARD = """
INSERT INTO temp._prune_hard(id)
SELECT id FROM memories
WHERE deprecated = 1 AND user_verified = 0 AND pinned = 0
  AND julianday(:now) - julianday(coalesce(deprecated_at, updated_at)) > :grace
"""


class PruneOp(MaintenanceOp[PruneReport]):
    """One pruning pass; with `dry_run` nothing changes and the report says what would.

    A MaintenanceOp running its own single transaction (see `in_own_transaction`):
    the first pass over a large store changes tens of thousands of rows at once.
    """

    name: ClassVar[str] = "prune"

    def __init__(self, config: PruneConfig | None = None, *, now: datetime | None = None,
                 dry_run: bool = False, sample: int = 20) -> None:
        self.config = config or PruneConfig()
        self.now = now
        self.dry_run = dry_run
        self.sample = sample

    def apply(self, tx: Tx) -> PruneReport:
        """Select every rule's ids, audit them set-based, apply (unless dry run); one transaction."""
        return in_own_transaction(tx, self._pass)

    def _pass(self, tx: Tx) -> PruneReport:
        t0 = time.perf_counter()
        cfg = self.config
        now = iso(self.now) if self.now is not None else tx.now
        report = PruneReport(dry_run=self.dry_run, at=now)
        tx.execute("CREATE TEMP TABLE IF NOT EXISTS _prune(id INTEGER PRIMARY KEY, action TEXT, rule TEXT,"
                   " reason TEXT, detail TEXT)")
        tx.execute("DELETE FROM temp._prune")
        fill_temp(tx, "_prune_hard", [])
        p = {"now": now, "ttl": json.dumps(cfg.ttl_days), "candidate_days": cfg.candidate_days}
        # The ids of the hard-delete rule are chosen before today's soft deprecations,
        # so a memory always gets its full grace period.
        tx.execute(_SELECT_HARD, {"now": now, "grace": cfg.grace_days})
        tx.execute(_SELECT_DECAY, {"now": now})
        tx.execute(_SELECT_TTL, {"now": now, "ttl": p["ttl"]})
        tx.execute(_SELECT_QUARANTINE, {"now": now, "candidate_days": cfg.candidate_days})
        report.live_before = live_count(tx)
        soft = count_of(tx.execute("SELECT count(*) FROM temp._prune"))
        over = report.live_before - soft - int(cfg.soft_limit * cfg.evict_to_ratio)
        if report.live_before - soft > cfg.soft_limit and over > 0:
            tx.execute(_SELECT_EVICT, {"now": now, "soft_limit": cfg.soft_limit,
                                       "recent_days": cfg.recent_hours / 24.0, "n": over})
        # (rule TEXT, count(*) INTEGER) rows; apsw types each column as any SQLite value.
        counts = dict(cast(list[tuple[str, int]], tx.execute(
            "SELECT rule, count(*) FROM temp._prune GROUP BY rule").fetchall()))
        report.decayed = int(counts.get("decay", 0))
        report.expired = int(counts.get("ttl", 0))
        report.quarantine_expired = int(counts.get("quarantine", 0))
        report.evicted = int(counts.get("soft_limit", 0))
        report.hard_deleted = count_of(tx.execute("SELECT count(*) FROM temp._prune_hard"))
        report.sample = [{"id": r[0], "action": r[1], "reason": r[2]} for r in tx.execute(
            "SELECT id, action, reason FROM temp._prune ORDER BY id LIMIT ?", (self.sample,))]
        if not self.dry_run:
            self._apply(tx, now, report)
        removed = report.decayed + report.expired + report.quarantine_expired + report.evicted
        report.live_after = report.live_before - (0 if self.dry_run else removed)
        report.seconds = time.perf_counter() - t0
        log.info("prune pass%s: %d decayed, %d expired, %d quarantine, %d evicted, %d hard-deleted in %.2fs",
                 " (dry run)" if self.dry_run else "", report.decayed, report.expired,
                 report.quarantine_expired, report.evicted, report.hard_deleted, report.seconds)
        return report

    def _apply(self, tx: Tx, now: str, report: PruneReport) -> None:
        hard_ids = [int(r[0]) for r in tx.execute("SELECT id FROM temp._prune_hard")]
        if hard_ids:
            # Scrub the old entries' text first, then write the deletion's own entry.
            purge_ids = hard_ids
            tx.execute("UPDATE audit_log SET detail = '{\"scrubbed\": true}' "
                       "WHERE memory_id IN (SELECT id FROM temp._prune_hard)")
            tx.audit_from(
                "SELECT :now, 'engram', 'prune', m.id, printf('Deprecated on %s (%s); hard-deleted after the "
                "%g-day grace period.', substr(coalesce(m.deprecated_at, m.updated_at), 1, 10), "
                "coalesce(m.deprecated_reason, 'deprecated'), :grace), json_object('rule', 'grace') "
                "FROM memories m WHERE m.id IN (SELECT id FROM temp._prune_hard)",
                {"now": now, "grace": self.config.grace_days})
            purge_temp(tx, "_prune_hard", scrub_audit=False)
            tx.changed("memory", "deleted", purge_ids)
        soft_ids = [int(r[0]) for r in tx.execute("SELECT id FROM temp._prune")]
        if soft_ids:
            tx.audit_from("SELECT :now, 'engram', action, id, reason, detail FROM temp._prune ORDER BY id",
                          {"now": now})
            tx.execute(
                "UPDATE memories SET deprecated = 1, deprecated_at = :now, updated_at = :now, "
                "deprecated_reason = (SELECT reason FROM temp._prune p WHERE p.id = memories.id) "
                "WHERE id IN (SELECT id FROM temp._prune)", {"now": now})
            tx.changed("memory", "updated", soft_ids)
        if soft_ids or hard_ids:
            tx.changed("audit", "added")
        # Embedding-cache rows past their expiry (expires_at is a Unix time).
        cutoff = int(datetime.fromisoformat(now.replace("Z", "+00:00")).timestamp())
        tx.execute("DELETE FROM embedding_cache WHERE expires_at < ?", (cutoff,))
        report.cache_evicted = tx.conn.changes()
        tx.execute("INSERT INTO project_meta(key, value) VALUES ('last_prune_at', :now) "
                   "ON CONFLICT(key) DO UPDATE SET value = excluded.value", {"now": now})


def prune(db: Any, *, config: PruneConfig | None = None, now: datetime | None = None,
          dry_run: bool = False, timeout: float | None = 120) -> PruneReport:
    """Run one pass and wait for it (CLI and background threads; never the GUI thread)."""
    return db.writer.run(PruneOp(config or config_from_meta(db), now=now, dry_run=dry_run), timeout)


def config_from_meta(db: Any) -> PruneConfig:
    """The defaults, with a per-project soft limit from ``project_meta.memory_soft_limit`` if set."""
    cfg = PruneConfig()
    rows = db.reads.conn().execute(
        "SELECT value FROM project_meta WHERE key = 'memory_soft_limit'").fetchall()
    if rows:
        try:
            cfg.soft_limit = max(1, int(rows[0][0]))
        except ValueError:
            log.warning("ignoring bad memory_soft_limit %r", rows[0][0])
    return cfg


def last_prune_at(db: Any) -> str | None:
    """When the last (non-dry) pass ran, or None."""
    rows = db.reads.conn().execute("SELECT value FROM project_meta WHERE key = 'last_prune_at'").fetchall()
    return str(rows[0][0]) if rows else None


def prune_when_idle(db: Any, *, now: datetime | None = None, min_interval_hours: float = 24.0
                    ) -> Future[PruneReport] | None:
    """For the GUI's idle timer: queue a pass if none ran in `min_interval_hours`; never blocks.

    Returns the pass's future (resolved after commit) or None when no pass was due.
    """
    from desktop.memory.lifecycle.decay import days_between

    when = now or db.clock()
    last = last_prune_at(db)
    if last is not None and days_between(last, when) * 24.0 < min_interval_hours:
        return None
    return db.writer.submit(PruneOp(config_from_meta(db), now=now))
