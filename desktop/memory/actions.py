"""The bodies of a person's actions on a project, one implementation for every door.

:class:`~desktop.memory.project.Project` exposes them as methods; the app's dialogs,
the ``engram`` commands and the MCP tools call those methods and only word the result.

* **Teaching.** What a person typed is a verified, user-taught memory: decided here
  and nowhere else (the teach dialog, ``/remember``, the memory panel's Add, ``engram add``).
* **Export.** One export per format. Into CLAUDE.md or AGENTS.md only Engram's managed
  block is written: the user's own lines around it are kept byte for byte, whichever
  door exports.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from desktop.memory.lifecycle.format_names import EXPORT_FORMATS
from desktop.memory.store.errors import ValidationError
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.types import MemorySource, MemoryType

if TYPE_CHECKING:
    from desktop.memory.project import Project

#: ``/remember`` is said in the middle of a session, about it: a little surer than the default 0.8.
REMEMBER_CONFIDENCE: Final = 0.9


def taught(content: str, **fields: Any) -> NewMemory:
    """A memory a person wrote: source ``user_taught``, verified (the one place this is decided).

    ``fields`` are any other NewMemory fields (type, scope, related_files, tags, pinned...).
    """
    for key in ("source", "user_verified"):
        if key in fields:
            raise ValidationError(f"A taught memory's {key} is not chosen by the caller.")
    return NewMemory(content=content, source=MemorySource.USER_TAUGHT.value, user_verified=True, **fields)


def remembered(text: str) -> NewMemory:
    """``/remember TEXT`` in a session: a taught note, with where it came from."""
    return taught(text, type=MemoryType.NOTE.value, confidence=REMEMBER_CONFIDENCE,
                  provenance=[{"kind": "remember_command"}])


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote: how many memories, and whether the target changed (a block already current: no)."""

    count: int
    changed: bool = True


def export_memories(project: Project, fmt: str, out: Path | IO[str], *, limit: int = 200) -> ExportResult:
    """Write the project's memories in ``fmt`` to the file ``out`` or the open stream ``out``.

    json: every memory, re-importable. markdown: live memories grouped by type. claude-md /
    agents-md: the managed block of trusted memories (at most ``limit``); into a file, only
    that block is replaced.
    """
    from desktop.memory.lifecycle.formats import export_count, export_markdown, managed_block, write_managed_block
    from desktop.memory.lifecycle.portable import export_json

    if fmt not in EXPORT_FORMATS:
        raise ValidationError(f"Unknown export format {fmt!r}; use one of: {', '.join(EXPORT_FORMATS)}.")
    if fmt == "json":
        if isinstance(out, Path):
            with out.open("w", encoding="utf-8") as fh:
                return ExportResult(export_json(project.memories, fh))
        return ExportResult(export_json(project.memories, out))
    managed = fmt != "markdown"
    text = managed_block(project.db, limit=limit) if managed else \
        export_markdown(project.db, project_name=project.info.name)
    count = export_count(project.db, managed=managed, limit=limit if managed else None)
    if not isinstance(out, Path):
        out.write(text)
        return ExportResult(count)
    if managed:
        return ExportResult(count, write_managed_block(out, text))
    out.write_text(text, encoding="utf-8")
    return ExportResult(count)

