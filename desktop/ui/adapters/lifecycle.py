"""Conflicts and supersession for the app: thin calls into the core.

Each action has one implementation, in ``desktop.memory.lifecycle``: a conflict
resolution is one ``ResolveConflict`` op (a correction is ``Project.correct``). This
module only adapts them to the widgets (futures in, Memory objects out).
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from desktop.memory.lifecycle.conflict_store import ResolveConflict
from desktop.memory.lifecycle.conflict_store import supersession_chain as chain_ids
from desktop.memory.lifecycle.correction import KINDS as CORRECTION_KINDS
from desktop.memory.types import Memory

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.ui")

__all__ = ["CORRECTION_KINDS", "Conflict", "find_conflicts", "resolve_conflict",
           "supersession_chain"]


@dataclass
class Conflict:
    """Two memories that say contradicting things; `new` is the more recent one."""

    old: Memory
    new: Memory


def find_conflicts(project: Project, limit: int = 50) -> list[Conflict]:
    """Pairs marked as conflicting by the core (relations type conflicts_with/contradicts). Pool thread."""
    conn = project.db.reads.conn()
    rows = conn.execute("SELECT id FROM memories WHERE deprecated=0 AND (relations LIKE '%conflicts_with%' "
                        "OR relations LIKE '%contradicts%') ORDER BY id DESC LIMIT ?", (limit * 2,)).fetchall()
    mems = project.memories.get_many([int(str(r[0])) for r in rows])
    seen: set[tuple[int, int]] = set()
    out: list[Conflict] = []
    for m in mems.values():
        for rel in m.relations:
            if rel.get("type") not in ("conflicts_with", "contradicts") or rel.get("resolved"):
                continue
            other_id = int(rel.get("id", 0))
            pair = (min(m.id, other_id), max(m.id, other_id))
            if pair in seen:
                continue
            other = mems.get(other_id) or project.memories.get_many([other_id]).get(other_id)
            if other is None or other.deprecated:
                continue
            seen.add(pair)
            old, new = (m, other) if m.id < other.id else (other, m)
            out.append(Conflict(old, new))
    return out[:limit]


def resolve_conflict(project: Project, conflict: Conflict, choice: str) -> Future[Any]:
    """keep_new / keep_old / keep_both: the core records the choice on both sides in one write."""
    return project.db.writer.submit(ResolveConflict(conflict.new.id, conflict.old.id, choice))


def supersession_chain(project: Project, memory: Memory, limit: int = 20) -> list[Memory]:
    """Follow superseded_by links from `memory` to the memory that replaced it last (pool thread)."""
    ids = chain_ids(project.db, memory.id, limit=limit + 1)
    found = project.memories.get_many(ids[1:])
    return [memory, *(found[i] for i in ids[1:] if i in found)]
