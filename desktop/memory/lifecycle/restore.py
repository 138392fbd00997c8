"""Restore full memory records (an Engram export) with every field intact.

`AddMemories` is the door for *new* knowledge: it resets flags, timestamps and
counters. A restore must not: pinned, deprecated, stale, counters, timestamps,
provenance and relations come back exactly. Text still passes the secret guard
(redacted, as for any imported source), the fingerprint is recomputed from the
stored text, and a record whose live duplicate already exists is left alone, so
importing the same export twice changes nothing.

Ids are kept when free in the target database; otherwise the row gets a new id
and, after all batches, ``relations`` that pointed at the old id are remapped.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any, ClassVar, cast

from desktop.memory.lifecycle.emergency import in_own_transaction
from desktop.memory.lifecycle.portable import ImportReport
from desktop.memory.store.errors import EngramError, ValidationError
from desktop.memory.store.guards import guard_text
from desktop.memory.store.live import LIVE_SQL
from desktop.memory.store.record_schema import check_fields
from desktop.memory.store.rows import BOOL_FIELDS, JSON_DICT_FIELDS, JSON_LIST_FIELDS, fingerprint
from desktop.memory.store.writer import MaintenanceOp, Tx, WriteOp
from desktop.memory.triggers.index import index_memory
from desktop.memory.trust import imported_columns
from desktop.memory.types import MemoryScope, MemorySource, MemoryType

log = logging.getLogger("engram.lifecycle")

BATCH = 2000
_TYPES = {t.value for t in MemoryType}
_SCOPES = {s.value for s in MemoryScope}
_SOURCES = {s.value for s in MemorySource}
# Columns the target database owns.
_SKIP = {"project_id", "fingerprint", "status"}


_LIST, _DICT, _BOOL = frozenset(JSON_LIST_FIELDS), frozenset(JSON_DICT_FIELDS), frozenset(BOOL_FIELDS)


def _encode(key: str, value: Any) -> Any:
    # Most JSON columns are empty: skip json.dumps for them (100,000-row restores).
    if key in _LIST:
        return json.dumps(value, ensure_ascii=False) if value else "[]"
    if key in _DICT:
        return json.dumps(value, ensure_ascii=False) if value else "{}"
    if key == "work_unit_ref":
        return None if value is None else json.dumps(value, ensure_ascii=False)
    if key in _BOOL:
        return 1 if value else 0
    return value


def normalise_record(record: Any, columns: list[str], now: str, *, trusted: bool = False) -> dict[str, Any]:
    """Validate one record and turn it into column values (unknown keys go to metadata)."""
    if not isinstance(record, dict):
        raise ValidationError("A record must be a JSON object.")
    content = record.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ValidationError("The record has no 'content'.")
    for name, default, known in (("type", "note", _TYPES), ("scope", "global", _SCOPES),
                                 ("source", "imported", _SOURCES)):
        value = record.get(name, default)
        if not isinstance(value, str) or value not in known:
            raise ValidationError(f"Unknown {'memory type' if name == 'type' else name} '{str(value)[:40]}'.")
    check_fields(record)  # the one record schema: types, ranges and sizes
    known = set(columns)
    values = {k: _encode(k, v) for k, v in record.items() if k in known and k not in _SKIP}
    extra = {k: v for k, v in record.items() if k not in known and k not in _SKIP}
    if extra:
        meta = json.loads(values.get("metadata") or "{}")
        meta["imported_fields"] = extra
        values["metadata"] = json.dumps(meta, ensure_ascii=False)
    values.setdefault("type", "note")
    values.setdefault("source", MemorySource.IMPORTED.value)
    for stamp in ("created_at", "updated_at", "last_accessed_at"):
        values.setdefault(stamp, values.get("created_at") or now)
    if values.get("external_id") is not None:
        values["external_id"] = str(values["external_id"])
    if not trusted:
        # A shared file could claim to be the user's pinned word; only the user's own backup,
        # restored on purpose, keeps its flags.
        imported_columns(values)
    return values


class RestoreMemories(WriteOp[list[tuple[int, int, bool]]]):
    """Insert full records; returns (original id or -1, id in this database, created)."""

    name: ClassVar[str] = "restore_memories"

    def __init__(self, records: list[dict[str, Any]], *, actor: str = "import", reason: str | None = None) -> None:
        self.records = records
        self.actor = actor
        self.reason = reason

    def apply(self, tx: Tx) -> list[tuple[int, int, bool]]:
        """Guard text, skip live duplicates, keep free ids, audit set-wise."""
        out: list[tuple[int, int, bool]] = []
        audit: list[tuple[Any, ...]] = []
        added: list[int] = []
        rows = []
        for values in self.records:
            row = dict(values)
            row["_orig"] = int(row.pop("id")) if isinstance(row.get("id"), int) else -1
            row["content"] = guard_text(row["content"], user_taught=False)
            if isinstance(row.get("citation_text"), str):
                row["citation_text"] = guard_text(row["citation_text"], user_taught=False)
            row["fingerprint"] = fingerprint(row["content"])
            rows.append(row)
        # What the database already holds, looked up once per batch rather than per row.
        same, live, ext, taken = self._known(tx, rows)
        for row in rows:
            orig, fp = row.pop("_orig"), row["fingerprint"]
            # The same record imported before (any status): same text, same birth.
            hit = same.get((fp, row.get("created_at")))
            if hit is None and not row.get("deprecated"):
                hit = live.get(fp) or (ext.get(row["external_id"]) if row.get("external_id") else None)
            if hit is not None:
                out.append((orig, hit, False))
                continue
            if orig > 0 and orig not in taken:
                row["id"] = orig
            row["project_id"] = tx.project_id
            cols = list(row)
            tx.execute(f"INSERT INTO memories({','.join(cols)}) VALUES ({','.join('?' * len(cols))})",
                       [row[c] for c in cols])
            mid = tx.conn.last_insert_rowid()
            index_memory(tx, mid, str(row.get("type", "")), str(row.get("content", "")), str(row.get("source", "")),
                         row.get("metadata"))
            taken.add(mid)
            same[(fp, row.get("created_at"))] = mid
            if not row.get("deprecated"):
                live[fp] = mid
                if row.get("external_id"):
                    ext[row["external_id"]] = mid
            audit.append((tx.now, self.actor, "import", mid, self.reason,
                          json.dumps({"restored": True, "original_id": orig if orig > 0 else None})))
            out.append((orig, mid, True))
            added.append(mid)
        if audit:
            # The audit rows go in with the rows, in the same savepoint: one cannot exist without the other.
            tx.audit_many(audit)
            tx.changed("memory", "added", added)
        return out


    @staticmethod
    def _known(tx: Tx, rows: list[dict[str, Any]]
               ) -> tuple[dict[tuple[str, Any], int], dict[str, int], dict[str, int], set[int]]:
        same: dict[tuple[str, Any], int] = {}
        live: dict[str, int] = {}
        ext: dict[str, int] = {}
        taken: set[int] = set()

        def chunks(values: list[Any]) -> Any:
            values = list(dict.fromkeys(v for v in values if v is not None))
            for i in range(0, len(values), 500):
                part = values[i:i + 500]
                yield part, ",".join("?" * len(part))
        for part, marks in chunks([r.get("created_at") for r in rows]):
            for mid, fp, created in tx.execute(
                    f"SELECT id, fingerprint, created_at FROM memories WHERE created_at IN ({marks})", part):
                same[(fp, created)] = int(mid)
        for part, marks in chunks([r["fingerprint"] for r in rows]):
            for mid, fp in tx.execute(
                    f"SELECT id, fingerprint FROM memories WHERE {LIVE_SQL} AND fingerprint IN ({marks})", part):
                live[fp] = int(mid)
        for part, marks in chunks([r.get("external_id") for r in rows]):
            for mid, eid in tx.execute(
                    f"SELECT id, external_id FROM memories WHERE {LIVE_SQL} AND external_id IN ({marks})", part):
                ext[eid] = int(mid)
        for part, marks in chunks([r["_orig"] for r in rows if r["_orig"] > 0]):
            taken |= {int(r[0]) for r in tx.execute(f"SELECT id FROM memories WHERE id IN ({marks})", part)}
        return same, live, ext, taken


class BulkRestore(MaintenanceOp[list[tuple[int, int, bool]]]):
    """`RestoreMemories` in its own transaction, without the writer's per-op savepoint.

    A savepoint makes SQLite copy every page first touched inside it to a
    sub-journal; a 2,000-row restore touches pages all over the FTS and the
    indexes, so the copy cost grows with the database. Still one transaction,
    still in the writer thread, rolled back whole on any error.
    """

    name: ClassVar[str] = "bulk_restore"

    def __init__(self, inner: RestoreMemories) -> None:
        self.inner = inner

    def apply(self, tx: Tx) -> list[tuple[int, int, bool]]:
        """BEGIN IMMEDIATE, restore, COMMIT (ROLLBACK on failure)."""
        return in_own_transaction(tx, self.inner.apply)


class RemapRelations(WriteOp[int]):
    """Point relations of restored memories at the ids their targets got here."""

    name: ClassVar[str] = "remap_relations"

    def __init__(self, ids: list[int], mapping: dict[int, int]) -> None:
        self.ids = ids
        self.mapping = mapping

    def apply(self, tx: Tx) -> int:
        """Rewrite each affected relations list."""
        changed = 0
        # Ids read back from JSON may be absent (None) or of any type: those simply miss.
        mapping: Mapping[Any, int] = self.mapping
        for mid in self.ids:
            # relations is TEXT NOT NULL (a JSON list).
            rows = cast(list[tuple[str]], tx.execute("SELECT relations FROM memories WHERE id = ?", (mid,)).fetchall())
            rels = json.loads(rows[0][0] or "[]") if rows else []
            new = [{**r, "id": mapping.get(r.get("id"), r.get("id"))} if isinstance(r, dict) else r
                   for r in rels]
            if new != rels:
                tx.execute("UPDATE memories SET relations = ? WHERE id = ?", (json.dumps(new, ensure_ascii=False), mid))
                changed += 1
        if changed:
            tx.changed("memory", "updated", self.ids)
        return changed


def restore_records(db: Any, records: list[Any], *, actor: str = "import", source: str = "",
                    trusted: bool = False) -> ImportReport:
    """Restore records in batches (one transaction each); bad records are reported, good ones kept.

    Unless ``trusted`` (the user restoring their own backup, said so explicitly), every
    record becomes an ``imported`` memory at import confidence, unpinned and unverified.
    """
    columns = [str(r[1]) for r in db.reads.conn().execute("PRAGMA table_info(memories)")]
    now = db.clock().isoformat()
    report = ImportReport()
    mapping: dict[int, int] = {}
    created: list[int] = []
    batch: list[dict[str, Any]] = []
    numbers: list[int] = []

    pending: list[tuple[Any, list[dict[str, Any]], list[int]]] = []

    def settle(fut: Any, rows: list[dict[str, Any]], nums: list[int]) -> None:
        try:
            results = fut.result(600)
        except EngramError:
            # One bad record fails its batch; redo it one by one so the good ones are kept.
            results = []
            for number, one in zip(nums, rows, strict=True):
                try:
                    results += db.writer.run(RestoreMemories([one], actor=actor, reason=f"import {source}"))
                except EngramError as exc:
                    report.rejected.append((number, str(exc)))
        for orig, mid, made in results:
            report.ids.append(mid)
            if orig > 0:
                mapping[orig] = mid
            if made:
                report.added += 1
                created.append(mid)
            else:
                report.unchanged += 1

    def flush() -> None:
        # Wait for each batch: preparing the next one meanwhile would fight the writer
        # thread for the GIL on every FTS trigger call and make the whole import slower.
        if batch:
            fut = db.writer.submit(BulkRestore(RestoreMemories(list(batch), actor=actor, reason=f"import {source}")))
            pending.append((fut, list(batch), list(numbers)))
            batch.clear()
            numbers.clear()
        while pending:
            settle(*pending.pop(0))

    for number, record in enumerate(records, start=1):
        try:
            batch.append(normalise_record(record, columns, now, trusted=trusted))
            numbers.append(number)
        except ValidationError as exc:
            report.rejected.append((number, str(exc)))
        if len(batch) >= BATCH:
            flush()
    flush()
    while pending:
        settle(*pending.pop(0))
    moved = {o: n for o, n in mapping.items() if o != n}
    if moved and created:
        db.writer.run(RemapRelations(created, moved), 600)
    log.info("restored %d memories (%d unchanged, %d rejected) from %s",
             report.added, report.unchanged, len(report.rejected), source)
    return report
