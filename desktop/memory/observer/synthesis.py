"""Threshold and weekly synthesis, workflow recipes and prefetch patterns as memories.

Mode 2 of the design: when a module reaches 5, 10, 20, 50 or 100 sessions, its
statistics are summarised once, deterministically, into at most five memories (a
model's memories come from ``model_synthesis``, when the user chose one). Mode 3:
once a week, module pairs with strong co-access that no causal-dependency memory
captures yet. Workflow recipes (>= 3 sessions, >= 4 steps, >= 80% success) are
promoted when a session makes a sequence qualify.

Everything here only reads; the plan's memories and log rows are written by the
session's single promotion transaction.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from desktop.memory.observer import cross_session as xs
from desktop.memory.observer.observer import SessionDigest
from desktop.memory.observer.signals import module_of
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.types import MemoryScope, MemorySource, MemoryType

logger = logging.getLogger("engram.observer")

MAX_PER_MODULE: Final = 5
MAX_RECIPES_PER_SESSION: Final = 2
WEEKLY_MODULE: Final = "*weekly*"
WEEKLY_MIN_SESSIONS: Final = 3


@dataclass
class SynthesisPlan:
    """Memories to add and synthesis-log rows to write in the promotion transaction."""

    memories: list[NewMemory] = field(default_factory=list)
    log: list[tuple[str, int, int]] = field(default_factory=list)


def _q(p: str) -> str:
    return f"`{p}`"


def _memory(kind: str, content: str, files: list[str], digest: SessionDigest, what: str,
            confidence: float = 0.7, module: str | None = None) -> NewMemory:
    return NewMemory(content=content, type=kind, confidence=confidence, tags=["observer", what],
                     related_files=files[:8], related_modules=[module] if module else [],
                     scope=MemoryScope.MODULE.value if module else MemoryScope.GLOBAL.value,
                     source=MemorySource.OBSERVER_INFERRED.value, session_id=digest.session_id,
                     provenance_session_ids=[digest.session_id],
                     provenance=[{"session_id": digest.session_id, "signal": what, "steps": [],
                                  "evidence": [f"cross-session statistics after {digest.session_id}"]}],
                     needs_review=True, metadata={"signal": what})


def module_stats(conn: Any, module: str, extra_sessions: int = 0) -> dict[str, Any]:
    """Top files, strong co-access pairs and recurring errors of one module."""
    total = xs.module_counts(conn, [module])[module] + extra_sessions
    files = [(p, int(n)) for p, n in conn.execute(
        "SELECT file_path, session_count FROM observer_file_nodes WHERE module = ? ORDER BY session_count DESC"
        " LIMIT 10", (module,))]
    pairs = [(a, b, int(n)) for a, b, n in conn.execute(
        "SELECT file_a, file_b, session_count FROM observer_co_access_edges WHERE session_count >= 2"
        " ORDER BY weight DESC LIMIT 40") if module_of(a) == module or module_of(b) == module][:8]
    errors = [(m, r, len(s)) for m, r, s in conn.execute(
        "SELECT error_message, resolved_how, sessions FROM observer_error_patterns"
        " WHERE json_array_length(sessions) >= 2 ORDER BY occurrence_count DESC LIMIT 5")]
    return {"sessions": total, "top_files": files, "co_access": pairs, "errors": errors}


def _module_memories(module: str, stats: dict[str, Any], digest: SessionDigest) -> list[NewMemory]:
    total = max(1, stats["sessions"])
    always = [p for p, n in stats["top_files"] if n / total >= xs.PREFETCH_ALWAYS]
    often = [p for p, n in stats["top_files"] if xs.PREFETCH_FREQUENT <= n / total < xs.PREFETCH_ALWAYS]
    out = []
    if always or often:
        parts = []
        if always:
            parts.append(f"nearly always need {', '.join(map(_q, always[:4]))}")
        if often:
            parts.append(f"often need {', '.join(map(_q, often[:4]))}")
        out.append(_memory(MemoryType.PREFETCH_PATTERN, f"Sessions working in {_q(module)} "
                           f"{' and '.join(parts)}: read them first.", always + often, digest,
                           "prefetch_pattern", 0.75, module))
    for a, b, _ in stats["co_access"][:2]:
        out.append(_memory(MemoryType.CAUSAL_DEPENDENCY, f"{_q(a)} and {_q(b)} are usually worked on together: "
                           f"when changing one, check the other.", [a, b], digest, "co_access", 0.7, module))
    return out[:MAX_PER_MODULE]


def plan_synthesis(conn: Any, digest: SessionDigest, *, first_time: bool,
                   now: datetime | None = None) -> SynthesisPlan:
    """Decide which syntheses this session triggers and produce their memories."""
    plan = SynthesisPlan()
    if not first_time:
        return plan
    modules = sorted({module_of(p) for p in digest.files})
    counts = xs.module_counts(conn, modules)
    for module in modules:
        reached = counts[module] + 1
        if reached not in xs.SYNTHESIS_THRESHOLDS:
            continue
        if conn.execute("SELECT 1 FROM observer_synthesis_log WHERE module = ? AND trigger_count = ?",
                        (module, reached)).fetchall():
            continue
        stats = module_stats(conn, module, extra_sessions=1)
        mems = _module_memories(module, stats, digest)
        plan.memories.extend(mems)
        plan.log.append((module, reached, len(mems)))
    plan.memories.extend(_recipes(conn, digest))
    plan.memories.extend(_weekly(conn, digest, plan, now))
    return plan


def _recipes(conn: Any, digest: SessionDigest) -> list[NewMemory]:
    ok = 1 if xs.session_succeeded(digest) else 0
    out = []
    for seq in digest.sequences:
        row = conn.execute("SELECT session_count, success_count FROM observer_sequences WHERE sequence = ?",
                           (seq,)).fetchall()
        n, good = (int(row[0][0]), int(row[0][1])) if row else (0, 0)
        n, good = n + 1, good + ok
        steps = seq.split(" > ")
        if n != xs.RECIPE_MIN_SESSIONS or good / n < xs.RECIPE_MIN_SUCCESS or len(set(steps)) < 2:
            continue  # promote once, when the sequence first qualifies
        words = [s.split(":", 1)[1].join("``") if s.startswith("Bash:") else s.lower() for s in steps]
        out.append(_memory(MemoryType.WORKFLOW_RECIPE, "A workflow that keeps working here: "
                           + " → ".join(words) + ".", [], digest, "workflow_recipe", 0.7))
        if len(out) >= MAX_RECIPES_PER_SESSION:
            break
    return out


def _weekly(conn: Any, digest: SessionDigest, plan: SynthesisPlan, now: datetime | None) -> list[NewMemory]:
    """Once per ISO week: cross-module co-access that no memory captures yet."""
    when = now or datetime.fromtimestamp(digest.ended_at or digest.started_at or 0, UTC)
    year, week, _ = when.isocalendar()
    trigger = year * 100 + week
    if conn.execute("SELECT 1 FROM observer_synthesis_log WHERE module = ? AND trigger_count = ?",
                    (WEEKLY_MODULE, trigger)).fetchall():
        return []
    out = []
    for a, b, _n in conn.execute("SELECT file_a, file_b, session_count FROM observer_co_access_edges"
                                " WHERE session_count >= ? ORDER BY weight DESC LIMIT 50", (WEEKLY_MIN_SESSIONS,)):
        ma, mb = module_of(a), module_of(b)
        if ma == mb:
            continue
        known = conn.execute("SELECT 1 FROM memories WHERE type = 'causal_dependency' AND deprecated = 0 AND"
                             " related_files LIKE ? AND related_files LIKE ? LIMIT 1",
                             (f'%"{a}"%', f'%"{b}"%')).fetchall()
        if known:
            continue
        out.append(_memory(MemoryType.CAUSAL_DEPENDENCY, f"{_q(ma)} and {_q(mb)} are coupled: {_q(a)} and {_q(b)} "
                           f"are needed together across sessions.", [a, b], digest, "weekly_synthesis", 0.65))
        if len(out) >= 3:
            break
    plan.log.append((WEEKLY_MODULE, trigger, len(out)))
    return out
