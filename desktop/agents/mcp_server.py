"""Engram's MCP server (official ``mcp`` SDK, stdio): the same memory for Claude Code, Codex, Gemini CLI, Cursor.

Started by ``engram mcp`` (``mcp_front`` answers the handshake and the listings at once
and hands everything else to the server built here). Tools: search_memory,
record_memory, get_workflow_recipe, analyze_impact, pin and forget; pinned memories
are a resource (``engram://memories/pinned``). Every result is plain text (no
structured ``{"result": ...}`` copy a client would show the model as escaped JSON),
every memory in it starts with its citation ``[Memory #N]``, and every failure is a
tool error (``isError``) that says why. stdout belongs to the protocol, so this
module only ever logs (to stderr, logger ``engram.mcp``).

Two processes, one database: the app and this server each have their own single
writer thread. SQLite's ``BEGIN IMMEDIATE`` takes the database write lock, and
every connection waits up to the busy timeout (10 s) for it, so the two writers
serialise; writes are short group-committed transactions, so neither waits long.
See docs/ARCHITECTURE.md, "Two processes".
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from desktop import __version__
from desktop.agents.mcp_catalog import INSTRUCTIONS, MEMORY_TYPES, PARAMS, PINNED_URI, RESOURCES, SERVER_NAME, TOOLS
from desktop.agents.memory_access import StoreMemoryAccess, TimedMemoryAccess
from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.store.errors import EngramError, NotFoundError, ValidationError
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.trust import injectable
from desktop.memory.types import MemorySource

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.mcp")

# Parameter types: descriptions from the catalog (what clients are told before the SDK loads).
Query = Annotated[str, Field(description=PARAMS["query"])]
Limit = Annotated[int, Field(description=PARAMS["limit"], ge=1, le=50)]
Content = Annotated[str, Field(description=PARAMS["content"], min_length=1, max_length=4000)]
MType = Annotated[str, Field(description=PARAMS["type"])]
Files = Annotated[list[str] | None, Field(description=PARAMS["files"])]
Task = Annotated[str, Field(description=PARAMS["task"])]
Target = Annotated[str, Field(description=PARAMS["target"])]
Depth = Annotated[int, Field(description=PARAMS["depth"], ge=1, le=6)]
MemoryId = Annotated[int, Field(description=PARAMS["memory_id"])]
Pinned = Annotated[bool, Field(description=PARAMS["pinned"])]
Reason = Annotated[str, Field(description=PARAMS["reason"])]


def _line(m: Any) -> str:
    """One memory as the model reads it: its citation first."""
    kind = f"{m.type}{', pinned' if m.pinned else ''}"
    return f"[Memory #{m.id}] ({kind}) {redact_then_cut(' '.join(m.content.split()), 800)}"


def impact_text(result: dict[str, Any]) -> str:
    """The code graph's impact answer as lines of text (an unknown target is a tool error)."""
    if result.get("error"):
        raise NotFoundError(str(result.get("message") or result["error"]))
    lines = [str(result.get("summary") or f"Impact of {result.get('target')}.")]
    for level in result.get("levels") or []:
        files = ", ".join(str(f) for f in level.get("files") or []) or "no files"
        symbols = ", ".join(str(s.get("label") or s.get("id") or s) if isinstance(s, dict) else str(s)
                            for s in (level.get("symbols") or [])[:20])
        lines.append(f"depth {level.get('depth')}: {files}" + (f" (symbols: {symbols})" if symbols else ""))
    return "\n".join(lines)[:50_000]


class EngramMCP:
    """The tool implementations, independent of the transport (tested directly and over stdio)."""

    def __init__(self, project: Project) -> None:
        """``project``: the open project the client's agent works in."""
        self.project = project
        self.memory = TimedMemoryAccess(StoreMemoryAccess(project))

    def search_memory(self, query: Query, limit: Limit = 8) -> str:
        """Memories relevant to the query, one per line with its id."""
        found = self.memory.search(query, limit=max(1, min(50, limit)))
        if not found:
            return f"No memory matches {query!r}."
        # Every memory returned is shown to the client's agent: one feedback op (history, reinforcement).
        self.project.memories.record_access([m.id for m in found], source="mcp")
        return "\n".join(_line(m) for m in found)

    def record_memory(self, content: Content, type: MType = "note", files: Files = None) -> str:
        """Store a candidate memory (quarantined until a person confirms it)."""
        if type not in MEMORY_TYPES:
            raise ValidationError(f"Unknown memory type {type!r}; use one of: {', '.join(MEMORY_TYPES)}.")
        item = NewMemory(content=content, type=type, related_files=list(files or [])[:10],
                         source=MemorySource.MCP_AUTO.value, candidate=True, confidence=0.6)
        res = self.project.memories.add(item, actor="mcp", reason="record_memory over MCP").result(30)
        return (f"Recorded as memory #{res.id}{'' if res.created else ' (reinforced an existing one)'}: a candidate, "
                "not shown to agents until a person confirms it.")

    def get_workflow_recipe(self, task: Task) -> str:
        """How tasks like this one were done successfully before (recipe memories with their citation)."""
        mems = self.memory.recipe_memories(task, 3)
        lines = [_line(m) for m in mems] + [f"- {r}" for r in self.memory.learned_recipes(3 - len(mems))]
        return "\n".join(lines) if lines else "No workflow recipe is known for this yet."

    def analyze_impact(self, target: Target, depth: Depth = 3) -> str:
        """Dependents of a file or symbol in the code graph, as text."""
        return impact_text(self.memory.analyze_impact(target, max(1, min(6, depth))))

    def pin(self, memory_id: MemoryId, pinned: Pinned = True) -> str:
        """Pin (always inject) or unpin a memory."""
        self.project.memories.pin(memory_id, pinned, actor="mcp").result(30)
        return f"Memory #{memory_id} {'pinned' if pinned else 'unpinned'}."

    def forget(self, memory_id: MemoryId, reason: Reason = "") -> str:
        """Forget a memory (never injected again; deleted later by pruning)."""
        self.project.memories.forget(memory_id, reason=reason or None, actor="mcp").result(30)
        return f"Memory #{memory_id} forgotten."

    def pinned(self) -> str:
        """Every pinned memory, one per line."""
        from desktop.memory.store.rows import MemoryQuery

        mems = [m for m in self.project.memories.list(MemoryQuery(pinned=True), limit=200) if injectable(m)]
        if mems:
            self.project.memories.record_access([m.id for m in mems], source="mcp")
        return "\n".join(_line(m) for m in mems) or "No pinned memories."

    def close(self) -> None:
        """Stop the timeout pool."""
        self.memory.close()


def as_tool_errors(fn: Callable[..., str]) -> Callable[..., str]:
    """Engram's own failures reach the client as MCP tool errors carrying their message.

    The SDK turns any other exception into "Error executing tool <name>" with no
    detail; a ToolError is an is_error result whose text the model can act on.
    """
    from mcp.server.mcpserver.exceptions import ToolError

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> str:
        try:
            return fn(*args, **kwargs)
        except EngramError as exc:
            raise ToolError(str(exc)) from exc
        except FutureTimeout as exc:
            raise ToolError("Engram's database is busy (another process holds it); try again.") from exc
    return call


def build_server(impl: Any) -> Any:
    """An MCPServer exposing ``impl``'s tools and the pinned-memories resource, described by the catalog."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING", version=__version__)
    for name, (description, hints, _schema) in TOOLS.items():
        annotations = ToolAnnotations(read_only_hint=hints["readOnlyHint"], destructive_hint=hints["destructiveHint"],
                                      idempotent_hint=hints["idempotentHint"], open_world_hint=hints["openWorldHint"])
        # structured_output=False: the text is the result; a {"result": ...} copy reaches some models as JSON
        server.add_tool(as_tool_errors(getattr(impl, name)), name=name, description=description,
                        annotations=annotations, structured_output=False)
    resource = RESOURCES[0]

    @server.resource(PINNED_URI, name=resource["name"], description=resource["description"],
                     mime_type=resource["mimeType"])
    def pinned_resource() -> str:
        return impl.pinned()
    return server


def launch_command(project_dir: Path, data_dir: Path | None = None) -> tuple[str, list[str]]:
    """The command an MCP client should run: this installation's absolute entry point (never
    ``python -m`` from the client's working folder, which is a repository: see launch.py)."""
    from desktop.agents.launch import engram_argv

    args = ["mcp", "--project", str(Path(project_dir).resolve())]
    if data_dir is not None:
        args += ["--data-dir", str(Path(data_dir).expanduser().resolve())]
    exe, *prefix = engram_argv()
    return exe, [*prefix, *args]
