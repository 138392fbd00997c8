"""Import and export for the UI: the core importer, JSON, Markdown, CLAUDE.md/AGENTS.md.

Everything runs on pool threads. Imports go through the core's ``import_path`` (the
one ``engram import`` uses), so the app and the CLI count and reject the same lines.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from desktop.composition import ProjectServices
from desktop.memory.lifecycle.formats import import_path
from desktop.memory.lifecycle.portable import ImportReport, export_json
from desktop.memory.store.rows import MemoryQuery
from desktop.memory.types import Memory

log = logging.getLogger("engram.ui")



def import_file(project: ProjectServices, path: Path) -> ImportReport:
    """Import a file through the core importer, exactly as ``engram import`` does (pool thread)."""
    return import_path(project.memories, path)


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
