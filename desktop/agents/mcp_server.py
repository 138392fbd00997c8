"""Engram's MCP server (official ``mcp`` SDK, stdio): the same memory for Claude Code, Cursor, Codex.

Started by ``engram mcp --project DIR``. Tools: search_memory, record_memory,
get_workflow_recipe, analyze_impact, pin and forget; pinned memories are a
resource (``engram://memories/pinned``). stdout belongs to the protocol, so this
module only ever logs (to stderr, logger ``engram.mcp``).

Two processes, one database: the app and this server each have their own single
writer thread. SQLite's ``BEGIN IMMEDIATE`` takes the database write lock, and
every connection waits up to the busy timeout (10 s) for it, so the two writers
serialise; writes are short group-committed transactions, so neither waits long.
See docs/ARCHITECTURE.md, "Two processes".
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from desktop import __version__
from desktop.agents.mcp_framing import run_framed
from desktop.agents.memory_access import StoreMemoryAccess, TimedMemoryAccess
from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.store.errors import EngramError, ValidationError
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.trust import injectable
from desktop.memory.types import MemorySource, MemoryType

log = logging.getLogger("engram.mcp")

SERVER_NAME = "engram"
PINNED_URI = "engram://memories/pinned"
INSTRUCTIONS = ("Engram is this project's long-term memory. Call search_memory before exploring, cite memories "
                "you use as [Memory #<id>: ...], and record_memory what a future session should know "
                "(a recorded memory is a candidate until a person confirms it or an agent uses it).")
MEMORY_TYPES = tuple(t.value for t in MemoryType)

# Parameter descriptions: clients (and the model) see these in each tool's input schema.
Query = Annotated[str, Field(description="What to look for, in plain words or identifiers.")]
Limit = Annotated[int, Field(description="How many memories at most (1-50).", ge=1, le=50)]
Content = Annotated[str, Field(description="The fact, decision or pitfall, in one or two sentences.",
                               min_length=1, max_length=4000)]
MType = Annotated[str, Field(description="One of: " + ", ".join(MEMORY_TYPES) + ".")]
Files = Annotated[list[str] | None, Field(description="Project-relative files it is about (at most 10).")]
Task = Annotated[str, Field(description="The task, in a sentence.")]
Target = Annotated[str, Field(description="A project-relative file path, or path:symbol.")]
Depth = Annotated[int, Field(description="How many dependency levels to follow (1-6).", ge=1, le=6)]
MemoryId = Annotated[int, Field(description="The memory's id (the number in [Memory #id]).")]
Pinned = Annotated[bool, Field(description="true pins, false unpins.")]
Reason = Annotated[str, Field(description="Why it is wrong or obsolete (kept in the audit log).")]


def _line(m: Any) -> str:
    return f"#{m.id} [{m.type}{', pinned' if m.pinned else ''}] {redact_then_cut(' '.join(m.content.split()), 800)}"


class EngramMCP:
    """The tool implementations, independent of the transport (tested directly and over stdio)."""

    def __init__(self, project: Any) -> None:
        """``project`` is an open ProjectServices."""
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
        """Store a candidate memory (quarantined until confirmed or reinforced)."""
        if type not in MEMORY_TYPES:
            raise ValidationError(f"Unknown memory type {type!r}; use one of: {', '.join(MEMORY_TYPES)}.")
        item = NewMemory(content=content, type=type, related_files=list(files or [])[:10],
                         source=MemorySource.MCP_AUTO.value, candidate=True, confidence=0.6)
        res = self.project.memories.add(item, actor="mcp", reason="record_memory over MCP").result(30)
        return (f"Recorded as memory #{res.id}{'' if res.created else ' (reinforced an existing one)'}: a candidate, "
                "not shown to agents until a person confirms it or an agent uses it.")

    def get_workflow_recipe(self, task: Task) -> str:
        """How tasks like this one were done successfully before."""
        recipes = self.memory.workflow_recipes(task, 3)
        return "\n".join(f"- {r}" for r in recipes) if recipes else "No workflow recipe is known for this yet."

    def analyze_impact(self, target: Target, depth: Depth = 3) -> str:
        """Dependents of a file or symbol in the code graph (JSON)."""
        return json.dumps(self.memory.analyze_impact(target, max(1, min(6, depth))), default=str)[:50_000]

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


def build_server(impl: EngramMCP) -> Any:
    """An MCPServer exposing ``impl``'s tools and the pinned-memories resource."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    read = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
    write = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING", version=__version__)
    tools: list[tuple[Callable[..., str], str, str, ToolAnnotations]] = [
        (impl.search_memory, "search_memory", "Search this project's long-term memory (decisions, gotchas, dead "
         "ends, recipes). Cite what you use as [Memory #id: ...].", read),
        (impl.record_memory, "record_memory", "Record something a future session should know. It is stored as a "
         "candidate: not shown to agents until a person confirms it or an agent uses it.", write),
        (impl.get_workflow_recipe, "get_workflow_recipe", "How tasks like this one were done successfully in "
         "this project.", read),
        (impl.analyze_impact, "analyze_impact", "What depends on a file or symbol (path or path:symbol), from the "
         "code graph.", read),
        (impl.pin, "pin", "Pin a memory so it is always injected (pinned=false unpins).", write),
        (impl.forget, "forget", "Forget a memory that is wrong or obsolete: it is never injected again and is "
         "deleted later by pruning.", ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                                      idempotent_hint=True, open_world_hint=False)),
    ]
    for fn, name, description, hints in tools:
        server.add_tool(as_tool_errors(fn), name=name, description=description, annotations=hints)

    @server.resource(PINNED_URI, name="pinned-memories", description="The project's pinned memories.",
                     mime_type="text/plain")
    def pinned_resource() -> str:
        return impl.pinned()
    return server


def serve(project_dir: Path, *, data_dir: Path | None = None) -> None:
    """Open the project and serve MCP on stdin/stdout until the client disconnects."""
    from desktop.composition import Engram
    from desktop.memory.lifecycle.maintenance import keep_graph_live
    from desktop.settings import Settings

    settings = Settings.load(data_dir) if data_dir else Settings.load()
    project = Engram(settings).open_project(project_dir, remember=False)
    try:  # analyze_impact and the graph path need a current graph; a failure must not stop serving
        keep_graph_live(project)
    except Exception:
        log.exception("could not bring the code graph up to date")
    impl = EngramMCP(project)
    log.info("MCP server for %s (%s)", project.info.root, project.info.db_path)
    try:
        # The SDK's stdio transport behind Engram's JSON-RPC framing checks (mcp_framing.py).
        run_framed(build_server(impl))
    finally:
        impl.close()
        project.close()


def launch_command(project_dir: Path, data_dir: Path | None = None) -> tuple[str, list[str]]:
    """The command an MCP client should run: this installation's absolute entry point (never
    ``python -m`` from the client's working folder, which is a repository: see launch.py)."""
    from desktop.agents.launch import engram_argv

    args = ["mcp", "--project", str(Path(project_dir).resolve())]
    if data_dir is not None:
        args += ["--data-dir", str(Path(data_dir).expanduser().resolve())]
    exe, *prefix = engram_argv()
    return exe, [*prefix, *args]


def client_config(project_dir: Path, client: str = "all", data_dir: Path | None = None) -> dict[str, Any]:
    """Configuration snippets for Claude Code (.mcp.json), Cursor (.cursor/mcp.json) and Codex (config.toml)."""
    import shlex

    command, args = launch_command(project_dir, data_dir)
    entry = {"command": command, "args": args}
    toml_args = ", ".join(json.dumps(a) for a in args)
    shell = " ".join(shlex.quote(p) for p in [command, *args])
    snippets: dict[str, Any] = {
        "claude-code": {"file": ".mcp.json (project scope, shared with the team)",
                        "command": f"claude mcp add --scope project {SERVER_NAME} -- {shell}",
                        "json": {"mcpServers": {SERVER_NAME: entry}}},
        "cursor": {"file": ".cursor/mcp.json", "json": {"mcpServers": {SERVER_NAME: entry}}},
        "codex": {"file": "~/.codex/config.toml",
                  "toml": f"[mcp_servers.{SERVER_NAME}]\ncommand = {json.dumps(command)}\nargs = [{toml_args}]\n"},
    }
    return snippets if client == "all" else {client: snippets[client]}
