"""Memories as portable records: complete JSON export, JSON restore and JSON Lines import."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import IO, Any

from desktop import __version__
from desktop.memory import safe_json
from desktop.memory.lifecycle.redaction import redact_record
from desktop.memory.privacy.secrets import scan
from desktop.memory.service import MemoryService
from desktop.memory.store.connection import rows_as_dicts
from desktop.memory.store.errors import EngramError, ValidationError
from desktop.memory.store.live import LIVE_SQL
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.rows import BOOL_FIELDS, JSON_DICT_FIELDS, JSON_LIST_FIELDS, decode_column
from desktop.memory.types import Memory, MemorySource, memory_status

log = logging.getLogger("engram.lifecycle")

_NEW_FIELDS = {f.name for f in fields(NewMemory)}
# Fields a record may carry that are set by the database, not by an import.
_DB_ONLY = {"id", "fingerprint", "updated_at", "last_accessed_at", "access_count", "project_id",
            "deprecated", "deprecated_at", "stale_at"}
BATCH = 500
FORMAT_VERSION = 2


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
    if values.get("metadata") is not None and not isinstance(values["metadata"], dict):
        raise ValidationError("metadata must be an object.")
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
    """(line number, parsed JSON or the exception) for each non-empty line; bad UTF-8 is an error per line.

    Size and depth are checked before parsing (safe_json), so one hostile line is one
    rejected line, never a traceback that loses the good lines around it.
    """
    limit = safe_json.MAX_CHARS
    with path.open("rb") as fh:
        number = 0
        while True:
            raw = fh.readline(limit + 1)
            if not raw:
                return
            number += 1
            if len(raw) > limit and not raw.endswith(b"\n"):
                while (rest := fh.readline(limit)) and not rest.endswith(b"\n"):
                    pass  # skip the rest of the oversized line without holding it
                yield number, ValidationError(f"line too long (more than {limit} bytes)")
                continue
            if not raw.strip():
                continue
            try:
                yield number, safe_json.loads(raw)
            except safe_json.JSONLimitError as exc:
                yield number, ValidationError(str(exc))
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


def export_json(service: MemoryService, out: IO[str], *, include_deprecated: bool = True,
                redact_output: bool = True) -> int:
    """Write every memory, every column, as one JSON document; returns how many.

    SQLite builds each record's JSON (json_object, in C) while Python only runs
    the secret scanner once per row over the row's text fields; a row with a
    finding is rebuilt in Python with its text redacted. Rows stream from one
    read cursor, so 100,000 memories never sit in memory as objects.
    """
    conn = service.db.reads.conn()
    where = "" if include_deprecated else f" WHERE {LIVE_SQL}"
    header = {"format": "engram-memories", "version": FORMAT_VERSION, "engram_version": __version__,
              "project_id": service.db.project_id}
    out.write(json.dumps(header)[:-1] + ', "memories": [\n')
    columns = [str(r[1]) for r in conn.execute("PRAGMA table_info(memories)")]
    scan_sql = " || char(10) || ".join(
        f"coalesce({c}, '')" for c in columns if c in _SCANNED)
    cur = conn.execute(f"SELECT {_record_json_sql(columns)}, {scan_sql}, id FROM memories{where} ORDER BY id")
    n = 0
    for doc, text, mid in cur:
        if redact_output and scan(text):
            row = rows_as_dicts(service.db.reads.conn().execute("SELECT * FROM memories WHERE id=?", (mid,)))[0]
            doc = json.dumps(redact_record(row_to_record(row)), ensure_ascii=False)
        out.write(("" if n == 0 else ",\n") + doc)
        n += 1
    out.write("\n]}\n")
    return n


# Columns whose text the scanner reads on export (free text and JSON holding free text).
_SCANNED = {"content", "citation_text", "context_prefix", "methodology", "deprecated_reason", "tags",
            "provenance", "metadata", "work_unit_ref", "related_files", "related_modules", "relations",
            "code_anchors", "external_id", "session_id", "commit_sha", "provenance_session_ids",
            "target_node_id", "impacted_node_ids"}
_STATUS_SQL = ("CASE WHEN deprecated THEN 'deprecated' WHEN stale_at IS NOT NULL THEN 'stale' "
               "WHEN candidate THEN 'candidate' WHEN needs_review THEN 'needs_review' ELSE 'active' END")


def _record_json_sql(columns: list[str]) -> str:
    """SQL building a record exactly like `row_to_record` (in groups: SQL functions limit arguments)."""
    pairs: list[str] = []
    for c in columns:
        if c in JSON_LIST_FIELDS:
            expr = f"json(coalesce(nullif({c}, ''), '[]'))"
        elif c in JSON_DICT_FIELDS:
            expr = f"json(coalesce(nullif({c}, ''), '{{}}'))"
        elif c == "work_unit_ref":
            expr = f"json(nullif({c}, ''))"
        elif c in BOOL_FIELDS:
            expr = f"json(iif({c}, 'true', 'false'))"
        else:
            expr = c
        pairs.append(f"'{c}', {expr}")
    pairs.append(f"'status', {_STATUS_SQL}")
    groups = [f"json_object({', '.join(pairs[i:i + 50])})" for i in range(0, len(pairs), 50)]
    if len(groups) == 1:
        return groups[0]
    # Splice the objects' text ("{a}" + "{b}" -> "{a,b}"); json_patch would drop null values.
    parts = [f"substr({g}, 2, length({g}) - 2)" for g in groups]
    return "'{' || " + " || ',' || ".join(parts) + " || '}'"


def row_to_record(row: dict[str, Any]) -> dict[str, Any]:
    """A raw ``memories`` row as an export record: JSON columns decoded, flags as booleans, status added."""
    record = {key: decode_column(key, value) for key, value in row.items()}
    record["status"] = memory_status(row.get("deprecated"), row.get("stale_at"), row.get("candidate"),
                                     row.get("needs_review")).value
    return record


def read_json_export(path: Path) -> list[dict[str, Any]]:
    """The records of an Engram JSON export (or of a bare JSON list of records)."""
    try:
        doc = safe_json.loads(path.read_text(encoding="utf-8"), max_chars=2 * 1024**3)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValidationError(f"{path.name} is not valid JSON ({exc.__class__.__name__}).") from exc
    records = doc.get("memories") if isinstance(doc, dict) else doc
    if not isinstance(records, list):
        raise ValidationError(f"{path.name} is not an Engram memory export.")
    return records


def import_json(service: MemoryService, path: Path, *, actor: str = "import", trusted: bool = False
                ) -> ImportReport:
    """Restore an Engram JSON export (or JSON Lines of full records) without loss.

    Every field comes back: flags, timestamps, counters, provenance and relations.
    Original ids are kept when free, otherwise relations are remapped to the new ids.
    """
    from desktop.memory.lifecycle.restore import restore_records

    if path.suffix.lower() == ".jsonl":
        records: list[Any] = []
        rejected: list[tuple[int, str]] = []
        for number, value in iter_jsonl(path):
            if isinstance(value, Exception):
                rejected.append((number, str(value)))
            else:
                records.append(value)
        report = restore_records(service.db, records, actor=actor, source=path.name, trusted=trusted)
        report.rejected = rejected + report.rejected
        return report
    return restore_records(service.db, read_json_export(path), actor=actor, source=path.name, trusted=trusted)
