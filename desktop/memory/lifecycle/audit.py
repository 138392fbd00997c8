"""The audit log, browsable and exportable (JSON Lines or CSV).

Every automatic change (decay, prune, evict, reinforce, conflict, supersede,
staleness) writes an entry with actor ``engram`` and a reason sentence; these
helpers let a person read and take them away. Exported text passes the secret
scanner again, like every other export.
"""

from __future__ import annotations

import csv
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from desktop.memory.lifecycle.redaction import redact_for_output, redact_value

log = logging.getLogger("engram.lifecycle")

COLUMNS = ["id", "at", "actor", "action", "memory_id", "reason", "detail"]
AUTOMATIC_ACTIONS = ("decay", "prune", "evict", "reinforce", "review_cleared", "confirm", "conflict",
                     "supersede", "stale", "code_changed")


@dataclass
class AuditFilter:
    """Which entries to read; empty means all."""

    actions: list[str] = field(default_factory=list)
    actors: list[str] = field(default_factory=list)
    memory_id: int | None = None
    since: str | None = None

    def where(self) -> tuple[str, list[Any]]:
        """SQL WHERE clause (with the keyword, or empty) and parameters."""
        clauses: list[str] = []
        params: list[Any] = []
        if self.actions:
            clauses.append(f"action IN ({','.join('?' * len(self.actions))})")
            params += self.actions
        if self.actors:
            clauses.append(f"actor IN ({','.join('?' * len(self.actors))})")
            params += self.actors
        if self.memory_id is not None:
            clauses.append("memory_id = ?")
            params.append(self.memory_id)
        if self.since:
            clauses.append("at >= ?")
            params.append(self.since)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def _entry(row: tuple[Any, ...]) -> dict[str, Any]:
    entry = dict(zip(COLUMNS, row, strict=True))
    try:
        entry["detail"] = json.loads(entry["detail"] or "{}")
    except ValueError:
        entry["detail"] = {"raw": entry["detail"]}
    return entry


def read_audit(db: Any, flt: AuditFilter | None = None, *, limit: int = 200, offset: int = 0,
               newest_first: bool = True) -> list[dict[str, Any]]:
    """A page of audit entries (detail decoded)."""
    where, params = (flt or AuditFilter()).where()
    order = "DESC" if newest_first else "ASC"
    rows = db.reads.conn().execute(
        f"SELECT {', '.join(COLUMNS)} FROM audit_log{where} ORDER BY id {order} LIMIT ? OFFSET ?",
        [*params, limit, offset]).fetchall()
    return [_entry(r) for r in rows]


def count_audit(db: Any, flt: AuditFilter | None = None) -> int:
    """How many entries match."""
    where, params = (flt or AuditFilter()).where()
    return int(db.reads.conn().execute(f"SELECT count(*) FROM audit_log{where}", params).fetchall()[0][0])


def export_audit(db: Any, out: IO[str], *, fmt: str = "jsonl", flt: AuditFilter | None = None) -> int:
    """Stream every matching entry, oldest first, as JSON Lines or CSV; returns how many."""
    where, params = (flt or AuditFilter()).where()
    cur = db.reads.conn().execute(f"SELECT {', '.join(COLUMNS)} FROM audit_log{where} ORDER BY id", params)
    writer = csv.writer(out) if fmt == "csv" else None
    if writer is not None:
        writer.writerow(COLUMNS)
    n = 0
    for row in cur:
        entry = _entry(row)
        if entry["reason"]:
            entry["reason"] = redact_for_output(entry["reason"])
        entry["detail"] = redact_value(entry["detail"])
        if writer is not None:
            writer.writerow([entry[c] if c != "detail" else json.dumps(entry[c], ensure_ascii=False)
                             for c in COLUMNS])
        else:
            out.write(json.dumps(entry, ensure_ascii=False) + "\n")
        n += 1
    return n


def export_audit_file(db: Any, path: Path, flt: AuditFilter | None = None) -> int:
    """Write the audit log to `path`: CSV when it ends in .csv, else JSON Lines."""
    fmt = "csv" if path.suffix.lower() == ".csv" else "jsonl"
    with path.open("w", encoding="utf-8", newline="") as fh:
        n = export_audit(db, fh, fmt=fmt, flt=flt)
    log.info("exported %d audit entries to %s", n, path)
    return n
