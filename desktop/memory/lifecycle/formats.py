"""Markdown formats: readable export, the CLAUDE.md / AGENTS.md block, and imports of other tools.

Both carry a small ``<!-- engram {...} -->`` comment after each memory (its id,
type, tags, files, pinned) so the file can be imported back without guessing;
a person reading it sees only the text. The CLAUDE.md / AGENTS.md form lives
between two marker lines, so Engram rewrites its block and never touches the
rest of a file the user maintains. Every text passes the secret scanner again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from desktop.memory import safe_json
from desktop.memory.lifecycle import managed_block as block_file
from desktop.memory.lifecycle.decay import DECAYED_SQL
from desktop.memory.lifecycle.portable import ImportReport
from desktop.memory.lifecycle.redaction import redact_for_output
from desktop.memory.lifecycle.rule_files import parse_rule_file, rule_type
from desktop.memory.store.errors import EngramError, ValidationError
from desktop.memory.store.live import LIVE_MEMORY_SQL
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.trust import INJECTABLE_SQL
from desktop.memory.types import MAX_CONTENT_CHARS, MemorySource, MemoryType

log = logging.getLogger("engram.lifecycle")

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
    # The managed block goes to agents: the one injection filter of the core (no candidates,
    # nothing waiting for review, nothing stale).
    where = INJECTABLE_SQL if live_only else LIVE_MEMORY_SQL
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
    return block_file.wrap(f"## Project memory (Engram)\n\n{body}") + "\n"


def export_count(db: Any, *, managed: bool, limit: int | None = None) -> int:
    """How many memories :func:`export_markdown` (``managed=False``) or :func:`managed_block` writes."""
    where = INJECTABLE_SQL if managed else LIVE_MEMORY_SQL
    n = int(db.reads.conn().execute(f"SELECT count(*) FROM memories WHERE {where}").fetchall()[0][0])
    return n if limit is None else min(n, int(limit))


def write_managed_block(path: Path, block: str) -> bool:
    """Put `block` (as managed_block made it) into `path`: one block, the rest untouched. True when changed."""
    body = block_file.extract(block)
    return block_file.write_block(path, block if body is None else body)


def extract_managed_block(text: str) -> str | None:
    """The text of the Engram block, or None when the file has none."""
    return block_file.extract(text)


# -- import ---------------------------------------------------------------------------
# Formats: Engram JSON / JSON Lines (portable.py), Engram Markdown, CLAUDE.md / AGENTS.md /
# GEMINI.md (the Engram block if present, else the whole file), Claude Code's MEMORY.md,
# Cline's memory-bank/ folder, Cursor's .cursor/rules/*.mdc and .cursorrules, and
# .github/copilot-instructions.md. An Engram export is cut item by item; any other
# Markdown rule by rule (rule_files.py: wrapped lines joined, nested items with their
# parent, code and include lines skipped); headings give the type and a tag. Each memory
# gets an external_id of tool, file and text hash, so importing a file again changes
# nothing. Imported text is redacted by the store's secret guard (source "imported").

_BULLET = re.compile(r"^( {0,3})(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")
_FLAGS = re.compile(r"^(?:📌\s*)?(?:\(may be outdated\)\s*)?")
_HEADING_TYPES = [
    (re.compile(r"decision|architecture|adr", re.I), MemoryType.DECISION.value),
    (re.compile(r"requirement|must|constraint|rule", re.I), MemoryType.REQUIREMENT.value),
    (re.compile(r"preference|style|convention|guideline", re.I), MemoryType.PREFERENCE.value),
    (re.compile(r"gotcha|pitfall|warning|caveat|don't|avoid", re.I), MemoryType.GOTCHA.value),
    (re.compile(r"error", re.I), MemoryType.ERROR_PATTERN.value),
    (re.compile(r"pattern", re.I), MemoryType.PATTERN.value),
    (re.compile(r"workflow|command|build|test|deploy|recipe|how to", re.I), MemoryType.WORKFLOW_RECIPE.value),
    (re.compile(r"progress|current|active|in progress|todo|next", re.I), MemoryType.WORK_STATE.value),
]
_CLINE_TYPES = {"projectbrief": MemoryType.REQUIREMENT.value, "productcontext": MemoryType.NOTE.value,
                "activecontext": MemoryType.WORK_STATE.value, "systempatterns": MemoryType.PATTERN.value,
                "techcontext": MemoryType.DECISION.value, "progress": MemoryType.WORK_STATE.value}


@dataclass
class ParsedItem:
    """One memory cut out of a Markdown file."""

    content: str
    heading: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


def split_frontmatter(text: str) -> tuple[dict[str, str], str]:
    """YAML-ish ``---`` front matter as flat key/values (enough for .mdc), and the body."""
    if not text.startswith("---"):
        return {}, text
    end = text.find("\n---", 3)
    if end < 0:
        return {}, text
    meta: dict[str, str] = {}
    for line in text[3:end].splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            meta[key.strip()] = value.strip().strip("'\"")
    return meta, text[end + 4:].lstrip("\n")


def parse_markdown(text: str) -> list[ParsedItem]:
    """Cut Markdown into items: each top-level list item and each paragraph is one."""
    items: list[ParsedItem] = []
    heading = ""
    cur: list[str] = []
    fence = False

    def flush() -> None:
        if cur:
            body = "\n".join(cur).strip()
            meta: dict[str, Any] = {}
            m = META_RX.search(body)
            if m:
                try:
                    meta = safe_json.loads(m.group(1))
                except ValueError:
                    meta = {}
                body = body[:m.start()].rstrip()
            body = _FLAGS.sub("", body).strip()
            if len(body) >= 3:
                items.append(ParsedItem(body, heading, meta))
            cur.clear()

    for line in text.splitlines():
        if _FENCE.match(line):
            if not fence and not cur and items and items[-1].heading == heading and not items[-1].meta:
                # A code block after a blank line illustrates the item before it.
                cur.extend([items.pop().content, ""])
            fence = not fence
            cur.append(line)
            continue
        if fence:
            cur.append(line)
            continue
        h = _HEADING.match(line)
        if h:
            flush()
            heading = h.group(2).strip()
            continue
        if not line.strip():
            flush()
            continue
        if _COMMENT.match(line) and not META_RX.search(line):
            continue
        b = _BULLET.match(line)
        if b and len(b.group(1)) <= 1:
            flush()
            cur.append(b.group(2))
        else:
            cur.append(line.strip() if not cur else line.rstrip()[2:] if line.startswith("  ") else line.strip())
    flush()
    return items


def type_for_heading(heading: str, default: str = MemoryType.NOTE.value) -> str:
    """The memory type a heading suggests ("Gotchas" -> gotcha), else `default`."""
    for rx, mtype in _HEADING_TYPES:
        if rx.search(heading):
            return mtype
    return default


def _to_new(item: ParsedItem, *, tool: str, origin: str, default_type: str, tags: list[str],
            pinned: bool = False, metadata: dict[str, Any] | None = None) -> NewMemory:
    meta = item.meta
    named = meta.get("type")
    # Only a str can equal one of the MemoryType values, so `named` is a str when chosen.
    mtype = cast(str, named) if named in {t.value for t in MemoryType} else \
        type_for_heading(item.heading, default_type)
    topic = [re.sub(r"[^\w-]+", "-", item.heading.lower()).strip("-")[:40]] if item.heading else []
    digest = hashlib.sha1(item.content.encode("utf-8")).hexdigest()[:12]
    return NewMemory(
        content=item.content[:MAX_CONTENT_CHARS], type=mtype, source=MemorySource.IMPORTED.value,
        tags=list(dict.fromkeys([*tags, *[t for t in meta.get("tags", []) if isinstance(t, str)], *topic])),
        related_files=[f for f in meta.get("files", []) if isinstance(f, str)],
        pinned=bool(meta.get("pinned", pinned)), external_id=f"{tool}:{origin}:{digest}",
        metadata={"imported_from": {"tool": tool, "file": origin, "heading": item.heading,
                                    "original_id": meta.get("id")}, **(metadata or {})})


def _rule_items(text: str) -> list[ParsedItem]:
    """A file's items: an Engram export (or Engram's block) item by item, any other file rule by rule."""
    parsed = parse_markdown(text)
    if any(item.meta for item in parsed):
        # An Engram export: only the memories, not its title and intro lines.
        return [item for item in parsed if item.meta]
    return [ParsedItem(rule.text, rule.section, {"type": rule_type(rule.text, rule.headings)})
            for rule in parse_rule_file(text)]


def collect(path: Path, fmt: str) -> list[NewMemory]:
    """Every memory a file (or folder) of format `fmt` holds, not yet saved."""
    out: list[NewMemory] = []
    if fmt in ("markdown", "claude-md", "agents-md", "gemini-md", "claude-memory", "copilot"):
        text = path.read_text(encoding="utf-8", errors="replace")
        block = extract_managed_block(text) if fmt in ("claude-md", "agents-md", "markdown") else None
        parsed = parse_markdown(block) if block is not None else _rule_items(text)
        for item in parsed:
            out.append(_to_new(item, tool=fmt, origin=path.name, default_type=MemoryType.NOTE.value, tags=[fmt]))
    elif fmt == "cline":
        folder = path if path.is_dir() else path.parent
        for md in sorted(folder.rglob("*.md")):
            default = _CLINE_TYPES.get(md.stem.lower().replace("-", "").replace("_", ""), MemoryType.NOTE.value)
            rel = md.relative_to(folder).as_posix()
            for item in parse_markdown(md.read_text(encoding="utf-8", errors="replace")):
                out.append(_to_new(item, tool="cline", origin=rel, default_type=default, tags=["cline", md.stem]))
    elif fmt == "cursor":
        files = sorted(path.rglob("*.mdc")) if path.is_dir() else [path]
        for f in files:
            front, body = split_frontmatter(f.read_text(encoding="utf-8", errors="replace"))
            always = front.get("alwaysApply", "").lower() == "true"
            extra = {"cursor_rule": {k: v for k, v in front.items() if v}} if front else {}
            for item in _rule_items(body):
                out.append(_to_new(item, tool="cursor", origin=f.name, default_type=MemoryType.PREFERENCE.value,
                                   tags=["cursor", f.stem], pinned=always, metadata=extra))
    else:
        raise ValidationError(f"Unknown import format '{fmt}'.")
    return out


def detect_format(path: Path) -> str:
    """Guess the format from the name: memory-bank/ -> cline, .mdc -> cursor, CLAUDE.md -> claude-md, ..."""
    name = path.name.lower()
    if path.is_dir():
        if name == "memory-bank" or (path / "memory-bank").is_dir():
            return "cline"
        if name == "rules" or (path / ".cursor" / "rules").is_dir() or any(path.glob("*.mdc")):
            return "cursor"
        raise ValidationError(f"Cannot tell what {path} holds; pass --format.")
    table = {"claude.md": "claude-md", "agents.md": "agents-md", "gemini.md": "gemini-md", "memory.md": "claude-memory",
             ".cursorrules": "cursor", "copilot-instructions.md": "copilot"}
    if name in table:
        return table[name]
    suffix = path.suffix.lower()
    if suffix == ".mdc":
        return "cursor"
    if suffix in (".json", ".jsonl"):
        return suffix[1:]
    if path.parent.name.lower() == "memory-bank":
        return "cline"
    return "markdown"


def import_path(service: Any, path: Path, fmt: str | None = None, *, actor: str = "import",
                trusted: bool = False) -> ImportReport:
    """Import a file or folder in `fmt` (detected when None); the one entry point the CLI uses.

    ``trusted`` (a JSON export the user says is their own backup) keeps the records' flags;
    every other import is demoted to ``imported`` at import confidence (trust.py).
    """
    from desktop.memory.lifecycle.portable import import_json, import_jsonl

    path = Path(path)
    if not path.exists():
        raise ValidationError(f"No such file or folder: {path}")
    fmt = fmt or detect_format(path)
    if fmt == "cline" and path.is_dir() and (path / "memory-bank").is_dir():
        path = path / "memory-bank"
    if fmt == "cursor" and path.is_dir() and (path / ".cursor" / "rules").is_dir():
        path = path / ".cursor" / "rules"
    if fmt == "json":
        return import_json(service, path, actor=actor, trusted=trusted)
    if fmt == "jsonl":
        return import_jsonl(service, path, actor=actor)
    items = collect(path, fmt)
    report = ImportReport()
    for i in range(0, len(items), 500):
        chunk = items[i:i + 500]
        try:
            results = service.add_many(chunk, actor=actor, reason=f"import {fmt} {path.name}").result()
        except EngramError:
            results = []
            for n, one in enumerate(chunk, start=i + 1):
                try:
                    results.append(service.add_many([one], actor=actor).result()[0])
                except EngramError as exc:
                    report.rejected.append((n, str(exc)))
        for r in results:
            report.ids.append(r.id)
            report.added += int(r.created)
            report.unchanged += int(not r.created)
    log.info("imported %s (%s): %d new, %d known", path, fmt, report.added, report.unchanged)
    return report
