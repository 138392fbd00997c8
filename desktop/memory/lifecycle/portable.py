"""Memories as portable records: JSON export and JSON Lines import without loss."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import IO, Any

from desktop import __version__
from desktop.memory.service import MemoryService
from desktop.memory.store.errors import EngramError, ValidationError
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.rows import MemoryQuery
from desktop.memory.types import Memory, MemorySource

log = logging.getLogger("engram.lifecycle")

_NEW_FIELDS = {f.name for f in fields(NewMemory)}
# Fields a record may carry that are set by the database, not by an import.
_DB_ONLY = {"id", "fingerprint", "updated_at", "last_accessed_at", "access_count", "project_id",
            "deprecated", "deprecated_at", "stale_at"}
BATCH = 500


def memory_to_record(memory: Memory) -> dict[str, Any]:
    """Every field of a memory as a JSON-ready dict (the export format)."""
    record = asdict(memory)
    record["status"] = memory.status.value
    return record


def record_to_new_memory(record: dict[str, Any], *, default_source: str = MemorySource.IMPORTED.value
                         ) -> NewMemory:
    """Build a NewMemory from an import record; unknown keys go to metadata, nothing is dropped."""
    if not isinstance(record, dict):
        raise ValidationError("Each line must be a JSON object.")
    if "content" not in record:
        raise ValidationError("The record has no 'content'.")
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in record.items():
        if key in _NEW_FIELDS:
            values[key] = value
        elif key not in _DB_ONLY and key != "status":
            extra[key] = value
    values.setdefault("source", default_source)
    values.setdefault("type", "note")
    if extra:
        values["metadata"] = {**(values.get("metadata") or {}), "imported_fields": extra}
    if values.get("external_id") is not None:
        values["external_id"] = str(values["external_id"])
    try:
        item = NewMemory(**values)
    except TypeError as exc:
        raise ValidationError(f"Bad record: {exc}") from exc
    item.validate()
    return item


@dataclass
class ImportReport:
    """What an import did."""

    added: int = 0
    unchanged: int = 0
    rejected: list[tuple[int, str]] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every line was imported."""
        return not self.rejected


def iter_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON or the exception) for each non-empty line; bad UTF-8 is an error per line."""
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                yield number, json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as exc:
                yield number, ValidationError(f"not valid JSON/UTF-8 ({exc.__class__.__name__})")


def import_jsonl(service: MemoryService, path: Path, *, actor: str = "import") -> ImportReport:
    """Import one memory per line; good lines are saved even when others are rejected."""
    report = ImportReport()
    batch: list[tuple[int, NewMemory]] = []

    def flush() -> None:
        if not batch:
            return
        try:
            results = service.add_many([m for _, m in batch], actor=actor, reason=f"import {path.name}").result()
        except EngramError as exc:
            # One bad item fails its batch; retry one by one so the good ones are kept.
            results = []
            for number, item in batch:
                try:
                    results.append(service.add_many([item], actor=actor).result()[0])
                except EngramError as one:
                    report.rejected.append((number, str(one)))
            log.info("batch import fell back to single adds: %s", exc)
        for r in results:
            report.ids.append(r.id)
            if r.created:
                report.added += 1
            else:
                report.unchanged += 1
        batch.clear()

    for number, value in iter_jsonl(path):
        if isinstance(value, Exception):
            report.rejected.append((number, str(value)))
            continue
        try:
            batch.append((number, record_to_new_memory(value)))
        except ValidationError as exc:
            report.rejected.append((number, str(exc)))
            continue
        if len(batch) >= BATCH:
            flush()
    flush()
    return report


def export_json(service: MemoryService, out: IO[str], *, include_deprecated: bool = True) -> int:
    """Write every memory as one JSON document; returns how many."""
    statuses = ["active", "needs_review", "stale", "candidate"] + (["deprecated"] if include_deprecated else [])
    ids = service.list_ids(MemoryQuery(statuses=statuses), order="oldest")
    header = {"format": "engram-memories", "version": 1, "engram_version": __version__}
    out.write(json.dumps(header)[:-1] + ', "memories": [\n')
    first = True
    for chunk in _chunks(ids, 1000):
        found = service.get_many(chunk)
        for mid in chunk:
            if mid in found:
                out.write(("" if first else ",\n") + json.dumps(memory_to_record(found[mid]), ensure_ascii=False))
                first = False
    out.write("\n]}\n")
    return len(ids)


def _chunks(items: list[int], size: int) -> Iterable[list[int]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]
