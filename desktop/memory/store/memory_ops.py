"""Typed write operations on memories. Each runs inside the writer thread.

The secret scanner runs here, inside the op, because the writer is the one
door to the database file: nothing reaches a page, the WAL or the audit log
without passing through it. Agent-derived text is stored redacted; a memory a
person typed that contains a secret is refused with the span shown.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

from desktop.memory.privacy.secrets import scan
from desktop.memory.store.connection import rows_as_dicts
from desktop.memory.store.errors import NotFoundError, ValidationError
from desktop.memory.store.guards import check_text, guard_json, guard_text, refuse_secret_fields
from desktop.memory.store.live import LIVE_SQL
from desktop.memory.store.record_schema import SQL_INT_MAX, check_fields
from desktop.memory.store.rows import fingerprint, to_column
from desktop.memory.store.sources import drop_sources
from desktop.memory.store.writer import Tx, WriteOp
from desktop.memory.triggers.index import index_memory, merge_constructs
from desktop.memory.trust import (
    AGENT_MAX_CONFIDENCE,
    CONFIRMED_CONFIDENCE,
    IMPORT_ACTORS,
    agent_record,
    check_action,
    evidence_ceiling,
    imported_record,
    is_agent,
    is_user,
)
from desktop.memory.types import (
    DEFAULT_HALF_LIFE_DAYS,
    MAX_CONTENT_CHARS,
    MemoryScope,
    MemorySource,
    MemoryType,
)

_TYPES = {t.value for t in MemoryType}
_SCOPES = {s.value for s in MemoryScope}
_SOURCES = {s.value for s in MemorySource}
EDITABLE = {"content", "type", "confidence", "tags", "related_files", "related_modules", "scope",
            "citation_text", "needs_review", "user_verified", "metadata", "decay_half_life_days",
            "relations", "stale_at", "candidate", "code_anchors", "commit_sha", "external_id"}
REINFORCE_STEP = 0.05
CONFIDENCE_CAP = 0.95


@dataclass
class NewMemory:
    """A memory to add. Only `content` is required."""

    content: str
    type: str = MemoryType.NOTE.value
    confidence: float = 0.8
    tags: list[str] = field(default_factory=list)
    related_files: list[str] = field(default_factory=list)
    related_modules: list[str] = field(default_factory=list)
    scope: str = MemoryScope.GLOBAL.value
    source: str = MemorySource.USER_TAUGHT.value
    session_id: str | None = None
    commit_sha: str | None = None
    provenance_session_ids: list[str] = field(default_factory=list)
    provenance: list[dict[str, Any]] = field(default_factory=list)
    relations: list[dict[str, Any]] = field(default_factory=list)
    work_unit_ref: dict[str, Any] | None = None
    methodology: str | None = None
    target_node_id: str | None = None
    impacted_node_ids: list[str] = field(default_factory=list)
    decay_half_life_days: float | None = None
    needs_review: bool = False
    user_verified: bool = False
    citation_text: str | None = None
    pinned: bool = False
    candidate: bool = False
    chunk_type: str | None = None
    chunk_start_line: int | None = None
    chunk_end_line: int | None = None
    context_prefix: str | None = None
    embedding_model_id: str | None = None
    external_id: str | None = None
    code_anchors: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: str | None = None

    def validate(self) -> None:
        """Reject bad input before it is queued (size, encoding, vocabulary)."""
        check_text(self.content, "Content")
        if not self.content.strip():
            raise ValidationError("A memory cannot be empty.")
        if len(self.content) > MAX_CONTENT_CHARS:
            raise ValidationError(
                f"A memory is limited to {MAX_CONTENT_CHARS} characters ({len(self.content)} given).")
        for name, known in (("type", _TYPES), ("scope", _SCOPES), ("source", _SOURCES)):
            value = getattr(self, name)
            if not isinstance(value, str) or value not in known:
                raise ValidationError(f"Unknown {'memory type' if name == 'type' else name} "
                                      f"'{str(value)[:40]}'.")
        # Every other field: the one record schema (types, ranges, sizes) every door shares.
        check_fields(self.__dict__)


@dataclass(frozen=True)
class AddResult:
    """Outcome of one add: the id, and False in `created` when it reinforced a duplicate."""

    id: int
    created: bool
    redacted: bool = False


class AddMemories(WriteOp[list[AddResult]]):
    """Add memories; a duplicate (same fingerprint) reinforces the live one instead."""

    name: ClassVar[str] = "add_memories"

    def __init__(self, items: list[NewMemory], *, actor: str = "user", reason: str | None = None) -> None:
        for item in items:
            item.validate()
            if actor in IMPORT_ACTORS:
                imported_record(item)  # a file's claims about itself (pinned, user_taught) are not evidence
            elif is_agent(actor):
                agent_record(item)  # an agent's word is a candidate, never the user's
        self.items = items
        self.actor = actor
        self.reason = reason

    def apply(self, tx: Tx) -> list[AddResult]:
        """Insert (or reinforce) each memory, audit first."""
        self._prefetch_known(tx)
        results = [self._add_one(tx, item) for item in self.items]
        added = [r.id for r in results if r.created]
        if added:
            tx.changed("memory", "added", added)
        updated = [r.id for r in results if not r.created]
        if updated:
            tx.changed("memory", "updated", updated)
        return results

    def _add_one(self, tx: Tx, item: NewMemory) -> AddResult:
        user_taught = item.source == MemorySource.USER_TAUGHT.value
        # One scan over content and tags together (the common, clean case); part by
        # part only when something was found, so each part is refused or redacted alone.
        tags = item.tags
        if scan(item.content + ("\n" + "\n".join(tags) if tags else "")):
            content = guard_text(item.content, user_taught=user_taught)
            tags = [guard_text(t, user_taught=user_taught) for t in tags]
        else:
            content = item.content
        citation = guard_text(item.citation_text, user_taught=user_taught) if item.citation_text else None
        if user_taught:
            refuse_secret_fields(item)  # a person typed it: refuse with the span, never store it silently
        provenance = guard_json(item.provenance, user_taught=False) if item.provenance else []
        fp = fingerprint(content)
        if item.external_id and item.external_id in self._known_external:
            # Re-importing a record another tool already gave us is a no-op, not a reinforcement.
            return AddResult(self._known_external[item.external_id], False)
        if fp in self._known_fingerprints or content != item.content:
            existing = tx.execute(
                "SELECT id, confidence, tags, related_files, related_modules, provenance_session_ids, provenance, "
                "type, content, source, metadata FROM memories WHERE fingerprint = ? AND deprecated = 0",
                (fp,)).fetchall()
            if existing:
                return self._reinforce(tx, existing[0], item, tags, provenance)
        half_life = item.decay_half_life_days
        if half_life is None:
            half_life = DEFAULT_HALF_LIFE_DAYS.get(item.type)
        created = item.created_at or tx.now
        # Journal first: the entry names the id the row is about to get (AUTOINCREMENT
        # hands out sqlite_sequence + 1), so no second statement has to patch it.
        tx.audit_from(
            "SELECT ?, ?, ?, (SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name='memories'), 0) + 1), ?, ?",
            (tx.now, self.actor, "add", self.reason,
             json.dumps({"type": item.type, "source": item.source, "excerpt": content[:200]}, ensure_ascii=False)))
        values = {
            "type": item.type, "content": content, "confidence": float(item.confidence),
            "tags": tags, "related_files": item.related_files, "related_modules": item.related_modules,
            "scope": item.scope, "source": item.source, "session_id": item.session_id,
            "commit_sha": item.commit_sha, "provenance_session_ids": item.provenance_session_ids,
            "provenance": provenance, "relations": item.relations, "work_unit_ref": item.work_unit_ref,
            "methodology": item.methodology, "target_node_id": item.target_node_id,
            "impacted_node_ids": item.impacted_node_ids, "decay_half_life_days": half_life,
            "needs_review": item.needs_review, "user_verified": item.user_verified,
            "citation_text": citation, "pinned": item.pinned, "candidate": item.candidate,
            "created_at": created, "updated_at": tx.now, "last_accessed_at": created,
            "project_id": tx.project_id, "chunk_type": item.chunk_type,
            "chunk_start_line": item.chunk_start_line, "chunk_end_line": item.chunk_end_line,
            "context_prefix": item.context_prefix, "embedding_model_id": item.embedding_model_id,
            "fingerprint": fp, "external_id": item.external_id, "code_anchors": item.code_anchors,
            "metadata": item.metadata,
        }
        cols = list(values)
        tx.execute(f"INSERT INTO memories({','.join(cols)}) VALUES ({','.join('?' * len(cols))})",
                   [to_column(c, values[c]) for c in cols])
        mid = tx.conn.last_insert_rowid()
        index_memory(tx, mid, item.type, content, item.source, item.metadata)
        # Later items of the same batch must see this one (dedup within a batch).
        self._known_fingerprints.add(fp)
        if item.external_id:
            self._known_external[item.external_id] = mid
        return AddResult(mid, True, content != item.content)

    def _prefetch_known(self, tx: Tx) -> None:
        """Which fingerprints and external ids of this batch already exist: one query per 500 items.

        Fingerprints are computed on the raw content here; redaction can only change a
        fingerprint when a secret was present, and those rare items fall back to the
        per-item lookup because their redacted fingerprint is checked again below.
        """
        self._known_fingerprints: set[str] = set()
        self._known_external: dict[str, int] = {}
        prints = list({fingerprint(i.content) for i in self.items})
        externals = list({i.external_id for i in self.items if i.external_id})
        for start in range(0, len(prints), 500):
            chunk = prints[start:start + 500]
            found = cast(list[tuple[str]], tx.execute(  # fingerprint is TEXT NOT NULL
                f"SELECT fingerprint FROM memories WHERE {LIVE_SQL} AND fingerprint IN "
                f"({','.join('?' * len(chunk))})", chunk).fetchall())
            self._known_fingerprints.update(r[0] for r in found)
        for start in range(0, len(externals), 500):
            chunk = externals[start:start + 500]
            # external_id IN (...) only matches TEXT; id is the INTEGER PRIMARY KEY.
            pairs = cast(list[tuple[str, int]], tx.execute(
                f"SELECT external_id, id FROM memories WHERE {LIVE_SQL} AND external_id IN "
                f"({','.join('?' * len(chunk))})", chunk).fetchall())
            self._known_external.update({str(e): int(i) for e, i in pairs})

    def _reinforce(self, tx: Tx, row: tuple[Any, ...], item: NewMemory, tags: list[str],
                   provenance: list[dict[str, Any]]) -> AddResult:
        mid, conf, old_tags, old_files, old_mods, old_sessions, old_prov, mtype, content, source, old_meta = row

        def merge(old: str, new: list[Any]) -> list[Any]:
            out = json.loads(old)
            out.extend(v for v in new if v not in out)
            return out

        # The new evidence decides how far it may lift the memory: an agent repeating itself (or
        # the observer relaying an agent's words) never past the agent cap; nothing is ever lowered.
        ceiling = AGENT_MAX_CONFIDENCE if is_agent(self.actor) else min(CONFIDENCE_CAP, evidence_ceiling(
            {"source": item.source, "user_verified": item.user_verified, "pinned": item.pinned,
             "metadata": item.metadata}))
        new_conf = max(float(conf), min(ceiling, max(float(conf), float(item.confidence)) + REINFORCE_STEP))
        tx.audit("reinforce", mid, actor=self.actor, reason=self.reason or "duplicate added",
                 detail={"confidence": [conf, new_conf], "source": item.source})
        tx.execute(
            "UPDATE memories SET confidence=?, tags=?, related_files=?, related_modules=?,"
            " provenance_session_ids=?, provenance=?, updated_at=? WHERE id=?",
            (new_conf, json.dumps(merge(old_tags, tags)), json.dumps(merge(old_files, item.related_files)),
             json.dumps(merge(old_mods, item.related_modules)),
             json.dumps(merge(old_sessions, item.provenance_session_ids)),
             json.dumps(merge(old_prov, provenance)[-20:], ensure_ascii=False), tx.now, mid))
        merge_constructs(tx, int(mid), str(mtype), str(content), str(source), old_meta, item.metadata)
        return AddResult(int(mid), False)


def check_id(memory_id: Any) -> int:
    """A memory id as SQLite can hold it, else ValidationError (never an OverflowError traceback)."""
    if isinstance(memory_id, bool) or not isinstance(memory_id, int) or not 0 <= memory_id <= SQL_INT_MAX:
        raise ValidationError(f"Memory #{str(memory_id)[:30]} is not a valid memory id.")
    return memory_id


def _load(tx: Tx, memory_id: int) -> dict[str, Any]:
    rows = rows_as_dicts(tx.execute("SELECT * FROM memories WHERE id = ?", (memory_id,)))
    if not rows:
        raise NotFoundError(f"Memory #{memory_id} does not exist.")
    return rows[0]


class EditMemory(WriteOp[int]):
    """Change some fields of a memory; the audit log keeps old and new values (the edit history)."""

    name: ClassVar[str] = "edit_memory"

    def __init__(self, memory_id: int, changes: dict[str, Any], *, actor: str = "user",
                 reason: str | None = None) -> None:
        unknown = set(changes) - EDITABLE
        if unknown:
            raise ValidationError(f"These fields cannot be edited: {', '.join(sorted(unknown))}.")
        if "content" in changes:
            probe = NewMemory(content=changes["content"])
            probe.validate()
        if "type" in changes and (not isinstance(changes["type"], str) or changes["type"] not in _TYPES):
            raise ValidationError(f"Unknown memory type '{str(changes['type'])[:40]}'.")
        if "scope" in changes and (not isinstance(changes["scope"], str) or changes["scope"] not in _SCOPES):
            raise ValidationError(f"Unknown scope '{str(changes['scope'])[:40]}'.")
        check_fields(changes)
        self.memory_id = check_id(memory_id)
        self.changes = changes
        self.actor = actor
        self.reason = reason

    def apply(self, tx: Tx) -> int:
        """Apply the changes, audit first."""
        row = _load(tx, self.memory_id)
        check_action(self.actor, "edit", row)
        if is_agent(self.actor) and ({"user_verified", "candidate", "needs_review"} & set(self.changes)):
            check_action(self.actor, "verify", row)
        user = is_user(self.actor)  # a person typed it: refuse a secret rather than store it changed
        new = dict(self.changes)
        for key in ("content", "citation_text"):
            if isinstance(new.get(key), str):
                new[key] = guard_text(new[key], user_taught=user)
        diff: dict[str, list[Any]] = {}
        for key, value in new.items():
            encoded = to_column(key, value)
            if row.get(key) != encoded:
                diff[key] = [row.get(key), encoded]
        if not diff:
            return self.memory_id
        if "content" in diff:
            fp = fingerprint(new["content"])
            clash = tx.execute("SELECT id FROM memories WHERE fingerprint=? AND deprecated=0 AND id<>?",
                               (fp, self.memory_id)).fetchall()
            if clash:
                raise ValidationError(f"Memory #{clash[0][0]} already says this.")
            diff["fingerprint"] = [row["fingerprint"], fp]
        tx.audit("edit", self.memory_id, actor=self.actor, reason=self.reason,
                 detail={"changes": {k: v for k, v in diff.items() if k != "fingerprint"}})
        sets = ", ".join(f"{k} = ?" for k in diff)
        tx.execute(f"UPDATE memories SET {sets}, updated_at = ? WHERE id = ?",
                   [v[1] for v in diff.values()] + [tx.now, self.memory_id])
        if {"content", "type", "metadata"} & set(diff):
            after = _load(tx, self.memory_id)
            index_memory(tx, self.memory_id, after["type"], after["content"], after["source"], after["metadata"])
        tx.changed("memory", "updated", [self.memory_id])
        return self.memory_id


class SetFlag(WriteOp[int]):
    """Pin/unpin, deprecate, forget (soft) or restore a memory."""

    name: ClassVar[str] = "set_flag"
    ACTIONS = ("pin", "unpin", "deprecate", "forget", "restore", "verify")

    def __init__(self, memory_id: int, action: str, *, actor: str = "user", reason: str | None = None) -> None:
        if action not in self.ACTIONS:
            raise ValidationError(f"Unknown action '{action}'.")
        self.memory_id = check_id(memory_id)
        self.action = action
        self.actor = actor
        self.reason = reason

    def apply(self, tx: Tx) -> int:
        """Audit, then flip the flag."""
        row = _load(tx, self.memory_id)
        check_action(self.actor, self.action, row)
        tx.audit(self.action, self.memory_id, actor=self.actor, reason=self.reason)
        a = self.action
        if a in ("pin", "unpin"):
            tx.execute("UPDATE memories SET pinned=?, updated_at=? WHERE id=?",
                       (1 if a == "pin" else 0, tx.now, self.memory_id))
        elif a == "verify":
            # A person's confirmation is evidence: the memory stands at least where taught ones start.
            tx.execute("UPDATE memories SET user_verified=1, needs_review=0, candidate=0, "
                       "confidence=max(confidence, ?), updated_at=? WHERE id=?",
                       (CONFIRMED_CONFIDENCE, tx.now, self.memory_id))
        elif a in ("deprecate", "forget"):
            tx.execute("UPDATE memories SET deprecated=1, deprecated_at=?, deprecated_reason=?, updated_at=? "
                       "WHERE id=?", (tx.now, "forgotten" if a == "forget" else (self.reason or "deprecated"),
                                      tx.now, self.memory_id))
        else:
            clash = tx.execute("SELECT id FROM memories WHERE fingerprint=? AND deprecated=0 AND id<>?",
                               (row["fingerprint"], self.memory_id)).fetchall()
            if clash:
                raise ValidationError(f"Memory #{clash[0][0]} already says this.")
            tx.execute("UPDATE memories SET deprecated=0, deprecated_at=NULL, deprecated_reason=NULL,"
                       " updated_at=? WHERE id=?", (tx.now, self.memory_id))
        tx.changed("memory", "updated", [self.memory_id])
        return self.memory_id


class HardDelete(WriteOp[int]):
    """Remove memories for good: row, FTS tokens, vectors, file/module links, audit text."""

    name: ClassVar[str] = "hard_delete"

    def __init__(self, memory_ids: list[int], *, actor: str = "user", reason: str | None = None) -> None:
        self.memory_ids = [check_id(i) for i in memory_ids]
        self.actor = actor
        self.reason = reason

    def apply(self, tx: Tx) -> int:
        """Audit (without content), scrub earlier audit text, delete."""
        deleted = []
        for mid in self.memory_ids:
            rows = rows_as_dicts(tx.execute("SELECT * FROM memories WHERE id=?", (mid,)))
            if not rows:
                continue
            check_action(self.actor, "hard_delete", rows[0])
            # The earlier entries' text would otherwise outlive the memory.
            tx.execute("UPDATE audit_log SET detail='{\"scrubbed\": true}' WHERE memory_id=?", (mid,))
            drop_sources(tx, "SELECT ?", [mid])
            tx.audit("hard_delete", mid, actor=self.actor, reason=self.reason)
            tx.execute("DELETE FROM memories WHERE id=?", (mid,))
            deleted.append(mid)
        if deleted:
            tx.changed("memory", "deleted", deleted)
        return len(deleted)
