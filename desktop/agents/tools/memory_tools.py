"""The memory tools of Engram's own agent: search_memory, record_memory, get_workflow_recipe, analyze_impact.

``record_memory`` writes to the session's scratchpad, never to the database:
the observer sees the call (an explicit signal) and promotion decides at session
end, so a session that is cancelled or wrong does not pollute memory.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from desktop.agents.tools.files import ToolOutcome
from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.types import MemoryType


@dataclass
class Note:
    """One record_memory entry of a running session."""

    content: str
    type: str
    files: list[str]
    step: int


@dataclass
class SessionNotes:
    """The session's record_memory scratchpad (thread-safe; read by the step decider)."""

    notes: list[Note] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, note: Note) -> None:
        """Append an entry."""
        with self._lock:
            self.notes.append(note)

    def since(self, step: int) -> list[Note]:
        """Entries recorded at ``step`` or later."""
        with self._lock:
            return [n for n in self.notes if n.step >= step]

    def all(self) -> list[Note]:
        """Every entry, oldest first."""
        with self._lock:
            return list(self.notes)


def run_memory_tool(registry: Any, name: str, args: dict[str, Any], step: int) -> ToolOutcome:
    """Execute one memory tool through the registry's MemoryAccess."""
    memory = registry.memory
    if name == "search_memory":
        query = str(args.get("query") or "").strip()
        if not query:
            return ToolOutcome("search_memory needs a query.", True)
        found = memory.search(query, limit=max(1, min(20, int(args.get("limit") or 8))))
        if not found:
            return ToolOutcome(f"No memory matches {query!r}.")
        lines = [f"#{m.id} [{m.type}] {redact_then_cut(' '.join(m.content.split()), 500)}" for m in found]
        return ToolOutcome("Cite a memory you use as [Memory #<id>: ...].\n" + "\n".join(lines),
                           memory_ids=[m.id for m in found])
    if name == "record_memory":
        content = str(args.get("content") or "").strip()
        if not content:
            return ToolOutcome("record_memory needs content.", True)
        mtype = str(args.get("type") or MemoryType.NOTE.value)
        if mtype not in {t.value for t in MemoryType}:
            mtype = MemoryType.NOTE.value
        files = [str(f) for f in args.get("files") or [] if isinstance(f, str)][:10]
        if registry.notes is not None:
            registry.notes.add(Note(redact_then_cut(content, 4000), mtype, files, step))
        return ToolOutcome("Recorded in this session's scratchpad; it will be reviewed when the session ends.")
    if name == "get_workflow_recipe":
        recipes = memory.workflow_recipes(str(args.get("task") or ""), 3)
        if not recipes:
            return ToolOutcome("No workflow recipe is known for this kind of task yet.")
        return ToolOutcome("\n".join(f"- {r}" for r in recipes))
    if name == "analyze_impact":
        target = str(args.get("target") or "").strip()
        if not target:
            return ToolOutcome("analyze_impact needs a target (path or path:symbol).", True)
        result = memory.analyze_impact(target, max(1, min(6, int(args.get("depth") or 3))))
        return ToolOutcome(json.dumps(result, ensure_ascii=False, default=str)[:20_000], "error" in result)
    return ToolOutcome(f"Unknown memory tool {name}.", True)
