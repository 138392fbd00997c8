"""Human-readable exports: Markdown, and a managed block for CLAUDE.md / AGENTS.md.

Both carry a small ``<!-- engram {...} -->`` comment after each memory (its id,
type, tags, files, pinned) so the file can be imported back without guessing;
a person reading it sees only the text. The CLAUDE.md / AGENTS.md form lives
between two marker lines, so Engram rewrites its block and never touches the
rest of a file the user maintains. Every text passes the secret scanner again.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from desktop.memory.lifecycle.decay import DECAYED_SQL
from desktop.memory.lifecycle.redaction import redact_for_output
from desktop.memory.types import MemoryType

log = logging.getLogger("engram.lifecycle")

BEGIN = "<!-- engram:begin (managed by Engram; edits inside this block are replaced) -->"
END = "<!-- engram:end -->"
_BEGIN_RX = re.compile(r"^<!-- engram:begin\b.*?-->\s*$", re.M)
_END_RX = re.compile(r"^<!-- engram:end -->\s*$", re.M)
META_RX = re.compile(r"\s*<!-- engram (\{.*?\}) -->\s*$")

TITLES: dict[str, str] = {
    MemoryType.DECISION.value: "Decisions", MemoryType.REQUIREMENT.value: "Requirements",
    MemoryType.PREFERENCE.value: "Preferences", MemoryType.GOTCHA.value: "Gotchas",
    MemoryType.PATTERN.value: "Patterns", MemoryType.ERROR_PATTERN.value: "Error patterns",
    MemoryType.MODULE_INSIGHT.value: "Module insights", MemoryType.WORKFLOW_RECIPE.value: "Workflow recipes",
    MemoryType.DEAD_END.value: "Dead ends", MemoryType.CAUSAL_DEPENDENCY.value: "Causal dependencies",
    MemoryType.WORK_STATE.value: "Work in progress", MemoryType.NOTE.value: "Notes",
}
_ORDER = list(TITLES)


def _title(mtype: str) -> str:
    return TITLES.get(mtype, mtype.replace("_", " ").capitalize())


def _rows(conn: Any, *, live_only: bool, limit: int | None, now: str) -> list[dict[str, Any]]:
    where = "deprecated = 0 AND type <> 'code'" + (" AND candidate = 0 AND stale_at IS NULL" if live_only else "")
    sql = (f"SELECT id, type, content, tags, related_files, pinned, deprecated, needs_review, stale_at, "
           f"candidate, confidence, {DECAYED_SQL} AS score FROM memories WHERE {where} "
           f"ORDER BY pinned DESC, score DESC, id")
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    names = ["id", "type", "content", "tags", "files", "pinned", "deprecated", "needs_review", "stale_at",
             "candidate", "confidence", "score"]
    return [dict(zip(names, r, strict=True)) for r in conn.execute(sql, {"now": now})]


def _bullet(row: dict[str, Any], *, with_meta: bool) -> str:
    text = redact_for_output(str(row["content"]).strip())
    lines = text.splitlines() or [""]
    flags = []
    if row["pinned"]:
        flags.append("📌")
    if row["needs_review"] or row["stale_at"]:
        flags.append("(may be outdated)")
    head = "- " + " ".join([*flags, lines[0]]) if flags else "- " + lines[0]
    body = [head] + ["  " + ln if ln.strip() else "" for ln in lines[1:]]
    if with_meta:
        meta = {"id": row["id"], "type": row["type"]}
        for key in ("tags", "files"):
            value = json.loads(row[key]) if isinstance(row[key], str) else row[key]
            if value:
                meta[key] = value
        if row["pinned"]:
            meta["pinned"] = True
        body[-1] += f" <!-- engram {json.dumps(meta, ensure_ascii=False)} -->"
    return "\n".join(body)


def _sections(rows: list[dict[str, Any]], *, level: str, with_meta: bool) -> str:
    by_type: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_type.setdefault(row["type"], []).append(row)
    order = sorted(by_type, key=lambda t: (_ORDER.index(t) if t in _ORDER else len(_ORDER), t))
    parts = []
    for mtype in order:
        parts.append(f"{level} {_title(mtype)}\n\n" + "\n".join(_bullet(r, with_meta=with_meta)
                                                               for r in by_type[mtype]))
    return "\n\n".join(parts)


def export_markdown(db: Any, *, project_name: str = "", now: datetime | None = None,
                    include_meta: bool = True) -> str:
    """Every live memory as readable Markdown, grouped by type, pinned and strongest first."""
    from desktop.memory.store.writer import iso

    when = iso(now or db.clock())
    rows = _rows(db.reads.conn(), live_only=False, limit=None, now=when)
    title = f"# Engram memory{' - ' + project_name if project_name else ''}"
    intro = f"_{len(rows)} memories, exported {when[:10]}. 📌 = pinned._"
    return f"{title}\n\n{intro}\n\n{_sections(rows, level='##', with_meta=include_meta)}\n"


def managed_block(db: Any, *, limit: int = 200, now: datetime | None = None) -> str:
    """The CLAUDE.md / AGENTS.md block: current, trusted memories (no candidates or stale ones)."""
    from desktop.memory.store.writer import iso

    rows = _rows(db.reads.conn(), live_only=True, limit=limit, now=iso(now or db.clock()))
    body = _sections(rows, level="###", with_meta=True) or "_No memories yet._"
    return f"{BEGIN}\n## Project memory (Engram)\n\n{body}\n{END}\n"


def write_managed_block(path: Path, block: str) -> bool:
    """Put `block` into `path`: replace the existing block, or append one. True when the file changed."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    b, e = _BEGIN_RX.search(old), _END_RX.search(old)
    if b and e and e.start() > b.start():
        new = old[:b.start()] + block.rstrip("\n") + old[e.end():]
    else:
        new = (old.rstrip("\n") + "\n\n" if old.strip() else "") + block
    if not new.endswith("\n"):
        new += "\n"
    if new == old:
        return False
    path.write_text(new, encoding="utf-8")
    return True


def extract_managed_block(text: str) -> str | None:
    """The text between the markers, or None when the file has no Engram block."""
    b, e = _BEGIN_RX.search(text), _END_RX.search(text)
    if b and e and e.start() > b.end():
        return text[b.end():e.start()]
    return None
