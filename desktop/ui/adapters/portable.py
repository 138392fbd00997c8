"""Import and export for the UI: agent rule files as typed memories, JSON, Markdown, CLAUDE.md/AGENTS.md.

Parsing runs on pool threads; the caller reviews the proposed memories and only
the confirmed ones are written (through the writer, in batches). JSON Lines goes
through the core's importer; the other formats are adapters until
desktop.memory.lifecycle offers its own.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from desktop.memory.lifecycle.portable import export_json, record_to_new_memory
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.rows import MemoryQuery
from desktop.memory.types import Memory

log = logging.getLogger("engram.ui")

RULE_FILES = ("CLAUDE.md", "AGENTS.md", ".cursorrules", ".github/copilot-instructions.md")
RULE_DIRS = (".cursor/rules",)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*\S)\s*$")
BATCH = 500


def find_rule_files(root: Path) -> list[Path]:
    """Agent instruction files present in a project."""
    found = [root / name for name in RULE_FILES if (root / name).is_file()]
    for d in RULE_DIRS:
        folder = root / d
        if folder.is_dir():
            found += sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in (".md", ".mdc", ""))
    return found


def classify_rule(text: str) -> str:
    """The memory type a rule reads as (keyword heuristics a person can predict)."""
    low = text.lower()
    if re.search(r"\b(never|don't|do not|avoid|careful|beware|must not|warning)\b", low):
        return "gotcha"
    if re.search(r"`[^`]*\b(make|npm|pnpm|yarn|pytest|cargo|go|pip|uv|docker)\b", low) or \
            re.search(r"^(run|to \w+,? run|build with|test with)\b", low):
        return "workflow_recipe"
    if re.search(r"\b(we chose|we use|instead of|decided|decision)\b", low):
        return "decision"
    if re.search(r"\b(prefer|style|naming|format|indent|always use)\b", low):
        return "preference"
    if re.search(r"\b(must|always|required|should)\b", low):
        return "requirement"
    return "note"


def parse_rules(text: str, source: str) -> list[NewMemory]:
    """One proposed memory per bullet (or paragraph) of a rule file; headings become tags."""
    items: list[NewMemory] = []
    heading = ""
    paragraph: list[str] = []

    def push(body: str) -> None:
        body = " ".join(body.split())
        if len(body) < 8 or len(body) > 2000:
            return
        tags = ["imported-rules"] + ([heading.lower()[:40]] if heading else [])
        items.append(NewMemory(content=body, type=classify_rule(body), source="imported", confidence=0.85,
                               tags=tags, provenance=[{"kind": "rule_file", "file": source}],
                               metadata={"rule_file": source}))

    for line in [*text.splitlines(), ""]:
        stripped = line.strip()
        if stripped.startswith("#") or stripped.startswith("---") or stripped.startswith("```"):
            if paragraph:
                push(" ".join(paragraph))
                paragraph = []
            if stripped.startswith("#"):
                heading = stripped.lstrip("#").strip()
            continue
        bullet = _BULLET.match(line)
        if bullet:
            if paragraph:
                push(" ".join(paragraph))
                paragraph = []
            push(bullet.group(1))
        elif stripped:
            paragraph.append(stripped)
        elif paragraph:
            push(" ".join(paragraph))
            paragraph = []
    return items


def scan_rule_files(root: Path) -> list[NewMemory]:
    """Proposed memories from every rule file of the project (pool thread)."""
    out: list[NewMemory] = []
    for path in find_rule_files(root):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            log.warning("cannot read %s: %s", path, exc)
            continue
        out += parse_rules(text, str(path.relative_to(root)))
    return out


def read_import_file(path: Path) -> list[NewMemory]:
    """Proposed memories from a JSON array, JSON Lines, or a Markdown/rules file (pool thread)."""
    return list(iter_import_file(path))


def iter_import_file(path: Path) -> Iterator[NewMemory]:
    """Like read_import_file, but JSON Lines are parsed lazily, line by line.

    Streaming keeps a 10,000-line import from holding 10,000 live objects at once,
    which is what made Python's full garbage collections long enough to stall the GUI.
    """
    if path.suffix.lower() not in (".json", ".jsonl", ".ndjson"):
        yield from parse_rules(path.read_text(encoding="utf-8"), path.name)
        return
    with path.open(encoding="utf-8") as fh:
        first = fh.readline()
        try:  # a JSON Lines file has one whole object on its first line
            head = json.loads(first)
            jsonl = isinstance(head, dict) and ("content" in head or "memories" not in head)
        except ValueError:
            jsonl = False
        if jsonl:
            yield record_to_new_memory(head)
            for line in fh:
                if line.strip():
                    yield record_to_new_memory(json.loads(line))
            return
    records: Any = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(records, dict):
        records = records.get("memories", [])
    for r in records:
        yield record_to_new_memory(r)


def add_in_batches(project: Any, items: Iterable[NewMemory], *, actor: str = "import",
                   progress: Callable[[int], None] | None = None) -> int:
    """Write `items` through the writer in batches, waiting per batch (pool thread only)."""
    done = 0
    batch: list[NewMemory] = []
    for item in items:
        batch.append(item)
        if len(batch) >= BATCH:
            project.memories.add_many(batch, actor=actor, reason="import").result()
            done += len(batch)
            batch = []
            if progress:
                progress(done)
    if batch:
        project.memories.add_many(batch, actor=actor, reason="import").result()
        done += len(batch)
    return done


def _active(project: Any) -> list[Memory]:
    ids = project.memories.list_ids(MemoryQuery(statuses=["active"]), order="confidence")
    found = project.memories.get_many(ids)
    return [found[i] for i in ids if i in found and found[i].type != "code"]


def export_markdown(project: Any, out: Path, *, style: str = "markdown") -> int:
    """Write active memories as Markdown grouped by type; style "claude"/"agents" writes rule files."""
    from desktop.ui.labels import TYPE_NAMES  # English headings: these files are read by agents

    memories = _active(project)
    if style in ("claude", "agents"):
        memories = [m for m in memories if m.confidence >= 0.65]
    groups: dict[str, list[Memory]] = {}
    for m in memories:
        groups.setdefault(m.type, []).append(m)
    title = {"claude": "CLAUDE.md", "agents": "AGENTS.md"}.get(style, f"{project.info.name} memory")
    lines = [f"# {title}", "", f"Project knowledge exported by Engram ({len(memories)} memories).", ""]
    for t, ms in groups.items():
        lines += [f"## {TYPE_NAMES.get(t, t)}", ""]
        for m in ms:
            where = f" ({', '.join(m.related_files[:3])})" if m.related_files else ""
            lines.append(f"- {' '.join(m.content.split())}{where}")
        lines.append("")
    out.write_text("\n".join(lines), encoding="utf-8")
    return len(memories)


def export_file(project: Any, out: Path, fmt: str) -> int:
    """Export in `fmt` (json, markdown, claude, agents); returns how many memories (pool thread)."""
    if fmt == "json":
        with out.open("w", encoding="utf-8") as fh:
            return int(export_json(project.memories, fh))
    return export_markdown(project, out, style=fmt)


def delete_everything(project: Any) -> int:
    """Hard-delete every memory of the project and scrub the file (pool thread)."""
    from desktop.memory.lifecycle.control import delete_all

    return int(delete_all(project, actor="user", reason="delete everything (settings)"))
