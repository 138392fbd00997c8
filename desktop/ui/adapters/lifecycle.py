"""Corrections, conflicts and supersession, as thin adapters over MemoryService writes.

Each correction kind has a real effect on the memory, always through the writer:
  outdated        -> deprecated; a replacement memory (superseding it) when text is given
  partially_wrong -> the content is edited (the audit log keeps the diff) and confirmed
  does_not_apply  -> tagged "not-applicable" and deprecated, so it is never injected here again
  incorrect       -> deprecated, and the (required) correction saved as a new memory superseding it
Conflicts are resolved as keep new / keep old / keep both, recording superseded-by chains
in each memory's ``relations``. When desktop.memory.lifecycle grows its own versions,
these functions are where to switch.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from dataclasses import dataclass
from functools import partial
from typing import Any

from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.types import Memory

log = logging.getLogger("engram.ui")

CORRECTION_KINDS = ("outdated", "partially_wrong", "does_not_apply", "incorrect")


def _chain(futures: list[Future[Any]]) -> Future[list[Any]]:
    """One future that resolves when all of `futures` have (first error wins)."""
    out: Future[list[Any]] = Future()
    results: list[Any] = [None] * len(futures)
    left = [len(futures)]

    def one(i: int, f: Future[Any]) -> None:
        if out.done():
            return
        if f.exception() is not None:
            out.set_exception(f.exception())
            return
        results[i] = f.result()
        left[0] -= 1
        if left[0] == 0:
            out.set_result(results)
    if not futures:
        out.set_result([])
    for i, f in enumerate(futures):
        f.add_done_callback(partial(one, i))
    return out


def _relations(m: Memory, kind: str, other: int) -> list[dict[str, Any]]:
    kept = [r for r in m.relations if not (r.get("type") == kind and r.get("id") == other)]
    return [*kept, {"type": kind, "id": other}]


def _replacement(old: Memory, text: str, kind: str) -> NewMemory:
    return NewMemory(content=text, type=old.type, scope=old.scope, source="user_taught",
                     related_files=list(old.related_files), related_modules=list(old.related_modules),
                     tags=list(old.tags), confidence=0.9, user_verified=True,
                     relations=[{"type": "supersedes", "id": old.id}],
                     metadata={"correction_of": old.id, "correction": kind})


def apply_correction(project: Any, memory: Memory, kind: str, text: str = "") -> Future[Any]:
    """Apply one correction kind to `memory` (see module docstring). Raises ValidationError early."""
    svc = project.memories
    text = text.strip()
    if kind not in CORRECTION_KINDS:
        raise ValueError(kind)
    if kind == "partially_wrong":
        if not text:
            raise ValueError("partially_wrong needs the refined text")
        return _chain([svc.edit(memory.id, {"content": text, "user_verified": True, "needs_review": False},
                                reason="correction: partially wrong")])
    if kind == "incorrect" and not text:
        raise ValueError("incorrect needs the correct information")
    if kind == "does_not_apply":
        tags = sorted(set(memory.tags) | {"not-applicable"})
        return _chain([svc.edit(memory.id, {"tags": tags}, reason="correction: does not apply"),
                       svc.deprecate(memory.id, reason="does not apply to this project")])
    futures: list[Future[Any]] = [svc.deprecate(memory.id, reason=f"correction: {kind.replace('_', ' ')}")]
    if text:
        outer: Future[Any] = Future()

        def added(f: Future[Any]) -> None:
            if f.exception() is not None:
                outer.set_exception(f.exception())
                return
            new_id = f.result().id
            link = svc.edit(memory.id, {"relations": _relations(memory, "superseded_by", new_id)},
                            reason="superseded by a correction")
            link.add_done_callback(lambda g: outer.set_exception(g.exception()) if g.exception()
                                   else outer.set_result(new_id))
        svc.add(_replacement(memory, text, kind), actor="user", reason=f"correction of #{memory.id}"
                ).add_done_callback(added)
        futures.append(outer)
    return _chain(futures)


@dataclass
class Conflict:
    """Two memories that say contradicting things; `new` is the more recent one."""

    old: Memory
    new: Memory


def find_conflicts(project: Any, limit: int = 50) -> list[Conflict]:
    """Pairs marked as conflicting by the core (relations type conflicts_with/contradicts). Pool thread."""
    conn = project.db.reads.conn()
    rows = conn.execute("SELECT id FROM memories WHERE deprecated=0 AND (relations LIKE '%conflicts_with%' "
                        "OR relations LIKE '%contradicts%') ORDER BY id DESC LIMIT ?", (limit * 2,)).fetchall()
    mems = project.memories.get_many([r[0] for r in rows])
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


def _without_conflict(m: Memory, other: int) -> list[dict[str, Any]]:
    return [r for r in m.relations if not (r.get("type") in ("conflicts_with", "contradicts")
                                           and int(r.get("id", 0)) == other)]


def resolve_conflict(project: Any, conflict: Conflict, choice: str) -> Future[Any]:
    """keep_new / keep_old / keep_both; the loser is deprecated with a superseded-by link."""
    try:  # the core's op records the choice on both sides and supersedes the loser in one write
        from desktop.memory.lifecycle.conflict_store import ResolveConflict

        return project.db.writer.submit(ResolveConflict(conflict.new.id, conflict.old.id, choice))
    except ImportError:
        pass
    svc = project.memories
    old, new = conflict.old, conflict.new
    old_rel, new_rel = _without_conflict(old, new.id), _without_conflict(new, old.id)
    if choice == "keep_both":
        return _chain([svc.edit(old.id, {"relations": [*old_rel, {"type": "coexists", "id": new.id}]},
                                reason="conflict: keep both"),
                       svc.edit(new.id, {"relations": [*new_rel, {"type": "coexists", "id": old.id}]},
                                reason="conflict: keep both"),
                       svc.verify(old.id), svc.verify(new.id)])
    keep, drop, keep_rel, drop_rel = (new, old, new_rel, old_rel) if choice == "keep_new" else \
        (old, new, old_rel, new_rel)
    return _chain([
        svc.edit(drop.id, {"relations": [*drop_rel, {"type": "superseded_by", "id": keep.id}]},
                 reason=f"conflict: {choice.replace('_', ' ')}"),
        svc.edit(keep.id, {"relations": [*keep_rel, {"type": "supersedes", "id": drop.id}]},
                 reason=f"conflict: {choice.replace('_', ' ')}"),
        svc.deprecate(drop.id, reason=f"superseded by #{keep.id}"),
        svc.verify(keep.id),
    ])


def supersession_chain(project: Any, memory: Memory, limit: int = 20) -> list[Memory]:
    """Follow superseded_by links from `memory` to the memory that replaced it last (pool thread)."""
    chain = [memory]
    current = memory
    for _ in range(limit):
        nxt = next((int(r["id"]) for r in current.relations if r.get("type") == "superseded_by"), None)
        if nxt is None or any(m.id == nxt for m in chain):
            break
        found = project.memories.get_many([nxt]).get(nxt)
        if found is None:
            break
        chain.append(found)
        current = found
    return chain
