"""Conflicts in the database: links, groups for injection, resolution and supersession.

Links live in ``memories.relations`` (a JSON list), one entry per link and side:
``{"type": "contradicts", "id": 7, "at": ..., "rule": ..., "resolved": null}``,
``{"type": "supersedes", "id": 7, ...}`` and ``{"type": "superseded_by", "id": 9, ...}``.
An unresolved ``contradicts`` link makes both memories one conflict group, which
retrieval/injection shows together with a conflict marker - never one silently
dropped. Resolving (keep new / keep old / keep both) is recorded in the audit log
and in the links.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from desktop.memory.lifecycle.conflicts import Conflict, ConflictText, Embed, detect_conflicts
from desktop.memory.lifecycle.watching import AddedMemoryWatcher
from desktop.memory.store.errors import EngramError, NotFoundError, ValidationError
from desktop.memory.store.live import LIVE_MEMORY_SQL
from desktop.memory.store.writer import Tx, WriteOp
from desktop.memory.text.tokens import fts_match_query

log = logging.getLogger("engram.lifecycle")

CANDIDATE_LIMIT = 200
RESOLUTIONS = ("keep_new", "keep_old", "keep_both")


def _text_of(row: tuple[Any, ...]) -> ConflictText:
    mid, content, files, mods, tags, mtype = row
    return ConflictText(int(mid), str(content), json.loads(files), json.loads(mods), json.loads(tags), mtype)


_COLS = "id, content, related_files, related_modules, tags, type"


def conflict_candidates(conn: Any, memory: ConflictText, limit: int = CANDIDATE_LIMIT) -> list[ConflictText]:
    """Live memories that could contradict `memory`: sharing a file or module, or matching its words."""
    ids: list[int] = []
    if memory.files:
        marks = ",".join("?" * len(memory.files))
        ids += [r[0] for r in conn.execute(
            f"SELECT memory_id FROM memory_files WHERE file_path IN ({marks}) LIMIT ?", [*memory.files, limit])]
    if memory.modules:
        marks = ",".join("?" * len(memory.modules))
        ids += [r[0] for r in conn.execute(
            f"SELECT memory_id FROM memory_modules WHERE module IN ({marks}) LIMIT ?", [*memory.modules, limit])]
    match = fts_match_query(memory.content, "or")
    if match:
        ids += [r[0] for r in conn.execute(
            "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?", (match, limit))]
    want = [i for i in dict.fromkeys(ids) if i != memory.id][:limit]
    if not want:
        return []
    rows = conn.execute(f"SELECT {_COLS} FROM memories WHERE {LIVE_MEMORY_SQL} AND id IN "
                        f"({','.join('?' * len(want))})", want).fetchall()
    return [_text_of(r) for r in rows]


def find_conflicts(db: Any, memory_id: int, *, embed: Embed | None = None) -> list[Conflict]:
    """Detect what a stored memory contradicts (read-only)."""
    conn = db.reads.conn()
    rows = conn.execute(f"SELECT {_COLS} FROM memories WHERE id = ?", (memory_id,)).fetchall()
    if not rows:
        raise NotFoundError(f"Memory #{memory_id} does not exist.")
    me = _text_of(rows[0])
    return detect_conflicts(me, conflict_candidates(conn, me), embed=embed)


def _relations(tx: Tx, mid: int) -> list[dict[str, Any]]:
    # relations is TEXT NOT NULL (a JSON list).
    rows = cast(list[tuple[str]], tx.execute("SELECT relations FROM memories WHERE id = ?", (mid,)).fetchall())
    if not rows:
        raise NotFoundError(f"Memory #{mid} does not exist.")
    return list(json.loads(rows[0][0] or "[]"))


def _save(tx: Tx, mid: int, rels: list[dict[str, Any]]) -> None:
    tx.execute("UPDATE memories SET relations = ?, updated_at = ? WHERE id = ?",
               (json.dumps(rels, ensure_ascii=False), tx.now, mid))


class RecordConflicts(WriteOp[int]):
    """Write symmetric ``contradicts`` links (audit first); known pairs are left alone."""

    name: ClassVar[str] = "record_conflicts"

    def __init__(self, conflicts: Iterable[Conflict]) -> None:
        self.conflicts = list(conflicts)

    def apply(self, tx: Tx) -> int:
        """Add each new link to both memories."""
        added = 0
        touched: set[int] = set()
        for c in self.conflicts:
            ra, rb = _relations(tx, c.a), _relations(tx, c.b)
            if any(r.get("type") == "contradicts" and r.get("id") == c.b for r in ra):
                continue
            tx.audit("conflict", c.a, actor="engram", reason=c.reason(),
                     detail={"other": c.b, "rule": c.rule, "score": round(c.score, 4), "by": c.detail.get("by")})
            link = {"type": "contradicts", "at": tx.now, "rule": c.rule, "score": round(c.score, 4),
                    "resolved": None}
            _save(tx, c.a, [*ra, {**link, "id": c.b}])
            _save(tx, c.b, [*rb, {**link, "id": c.a}])
            touched |= {c.a, c.b}
            added += 1
        if touched:
            tx.changed("memory", "updated", touched)
        return added


def check_on_write(db: Any, memory_ids: Iterable[int], *, embed: Embed | None = None) -> list[Conflict]:
    """Detect and record conflicts of newly written memories; returns what was found."""
    found: list[Conflict] = []
    for mid in memory_ids:
        try:
            found += find_conflicts(db, mid, embed=embed)
        except NotFoundError:
            continue
    if found:
        db.writer.run(RecordConflicts(found))
    return found


@dataclass
class ConflictGroup:
    """Memories that contradict each other and must be injected together, with a marker."""

    ids: list[int]
    missing: list[int]  # members not among the ids asked about: add them to the injection

    def marker(self) -> str:
        """The marker line an injection puts before the group."""
        refs = " vs ".join(f"Memory #{i}" for i in self.ids)
        return f"[⚠ CONFLICT] {refs} disagree. Verify which is current before relying on either."


def conflict_groups(db_or_conn: Any, ids: Iterable[int]) -> list[ConflictGroup]:
    """Unresolved contradiction groups touching `ids` (connected components over live links)."""
    conn = db_or_conn.reads.conn() if hasattr(db_or_conn, "reads") else db_or_conn
    asked = list(dict.fromkeys(int(i) for i in ids))
    seen: set[int] = set()
    groups: list[ConflictGroup] = []
    for start in asked:
        if start in seen:
            continue
        component, todo = set(), [start]
        while todo:
            mid = todo.pop()
            if mid in component:
                continue
            row = conn.execute("SELECT relations, deprecated FROM memories WHERE id = ?", (mid,)).fetchall()
            if not row or (row[0][1] and mid != start):
                continue
            component.add(mid)
            for r in json.loads(row[0][0] or "[]"):
                if r.get("type") == "contradicts" and not r.get("resolved") and isinstance(r.get("id"), int):
                    todo.append(r["id"])
        seen |= component
        if len(component) > 1:
            members = sorted(component)
            groups.append(ConflictGroup(members, [m for m in members if m not in asked]))
    return groups


class ResolveConflict(WriteOp[int]):
    """Record the user's choice between two contradicting memories."""

    name: ClassVar[str] = "resolve_conflict"

    def __init__(self, new_id: int, old_id: int, choice: str, *, actor: str = "user",
                 reason: str | None = None) -> None:
        if choice not in RESOLUTIONS:
            raise ValidationError(f"Resolution must be one of {', '.join(RESOLUTIONS)}.")
        self.new_id, self.old_id, self.choice = new_id, old_id, choice
        self.actor, self.reason = actor, reason

    def apply(self, tx: Tx) -> int:
        """Mark the link resolved on both sides; for keep_new/keep_old supersede the loser."""
        rn, ro = _relations(tx, self.new_id), _relations(tx, self.old_id)
        stamp = {"resolved": self.choice, "resolved_at": tx.now, "resolved_by": self.actor}
        for rels, other in ((rn, self.old_id), (ro, self.new_id)):
            for r in rels:
                if r.get("type") == "contradicts" and r.get("id") == other:
                    r.update(stamp)
        tx.audit("resolve_conflict", self.new_id, actor=self.actor,
                 reason=self.reason or f"conflict between #{self.new_id} and #{self.old_id}: {self.choice}",
                 detail={"new": self.new_id, "old": self.old_id, "choice": self.choice})
        if self.choice != "keep_both":
            win, lose = (self.new_id, self.old_id) if self.choice == "keep_new" else (self.old_id, self.new_id)
            rw, rl = (rn, ro) if win == self.new_id else (ro, rn)
            rw.append({"type": "supersedes", "id": lose, "at": tx.now})
            rl.append({"type": "superseded_by", "id": win, "at": tx.now})
            tx.audit("supersede", lose, actor=self.actor, reason=f"superseded by memory #{win} ({self.choice})",
                     detail={"superseded_by": win})
            tx.execute("UPDATE memories SET deprecated = 1, deprecated_at = ?, deprecated_reason = ? WHERE id = ?",
                       (tx.now, f"superseded by #{win}", lose))
        _save(tx, self.new_id, rn)
        _save(tx, self.old_id, ro)
        tx.changed("memory", "updated", [self.new_id, self.old_id])
        return self.new_id


def resolve_conflict(db: Any, new_id: int, old_id: int, choice: str, *, actor: str = "user") -> int:
    """Keep new, keep old or keep both; waits for the commit."""
    return int(db.writer.run(ResolveConflict(new_id, old_id, choice, actor=actor)))


def supersession_chain(db: Any, memory_id: int, *, limit: int = 50) -> list[int]:
    """[memory_id, its successor, ...] following ``superseded_by`` links to the current memory."""
    conn = db.reads.conn()
    chain = [memory_id]
    while len(chain) < limit:
        row = conn.execute("SELECT relations FROM memories WHERE id = ?", (chain[-1],)).fetchall()
        if not row:
            break
        nxt = [r["id"] for r in json.loads(row[0][0] or "[]") if r.get("type") == "superseded_by"]
        if not nxt or nxt[-1] in chain:
            break
        chain.append(int(nxt[-1]))
    return chain


# -- detection on write ---------------------------------------------------------------
# The writer publishes a ChangeSet after each commit; the watcher takes the ids of added
# memories from it (in the writer thread, so it only queues them) and a worker thread
# detects conflicts and records the links as an ordinary WriteOp. Detection never runs
# inside a transaction and never slows the write it follows. Bulk sources (imports,
# code chunks) are skipped: they are not claims an agent or a person just made.

SKIP_SOURCES = ("imported", "code_index")


class ConflictWatcher(AddedMemoryWatcher):
    """Detect conflicts of newly added memories in the background."""

    thread_name = "engram-conflicts"

    def __init__(self, db: Any, *, embed: Embed | None = None,
                 on_conflicts: Callable[[list[Conflict]], None] | None = None) -> None:
        super().__init__(db)
        self.embed = embed
        self.on_conflicts = on_conflicts

    def handle(self, ids: list[int]) -> None:
        """Detect and record conflicts of the added memories."""
        self._check(ids)

    def _check(self, ids: list[int]) -> None:
        conn = self.db.reads.conn()
        marks = ",".join("?" * len(ids))
        wanted = [int(r[0]) for r in conn.execute(
            f"SELECT id FROM memories WHERE id IN ({marks}) AND {LIVE_MEMORY_SQL} "
            f"AND source NOT IN ({','.join('?' * len(SKIP_SOURCES))})", [*ids, *SKIP_SOURCES])]
        found: list[Conflict] = []
        for mid in wanted:
            if self.stopping:
                return  # the project is closing; the unchecked ones wait for the next check
            try:
                found += find_conflicts(self.db, mid, embed=self.embed)
            except EngramError:
                continue
        if found:
            self.db.writer.run(RecordConflicts(found))
            log.info("conflicts detected on write: %s", [(c.a, c.b) for c in found])
            if self.on_conflicts is not None:
                self.on_conflicts(found)

