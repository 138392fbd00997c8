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

import json
import logging
import shutil
import sys
from pathlib import Path
from typing import Any

from desktop.agents.memory_access import StoreMemoryAccess, TimedMemoryAccess
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.types import MemorySource, MemoryType

log = logging.getLogger("engram.mcp")

SERVER_NAME = "engram"
PINNED_URI = "engram://memories/pinned"
INSTRUCTIONS = ("Engram is this project's long-term memory. Call search_memory before exploring, cite memories "
                "you use as [Memory #<id>: ...], and record_memory what a future session should know.")


def _line(m: Any) -> str:
    return f"#{m.id} [{m.type}{', pinned' if m.pinned else ''}] {' '.join(m.content.split())[:800]}"


class EngramMCP:
    """The tool implementations, independent of the transport (tested directly and over stdio)."""

    def __init__(self, project: Any) -> None:
        """``project`` is an open ProjectServices."""
        self.project = project
        self.memory = TimedMemoryAccess(StoreMemoryAccess(project))

    def search_memory(self, query: str, limit: int = 8) -> str:
        """Memories relevant to the query, one per line with its id."""
        found = self.memory.search(query, limit=max(1, min(50, limit)))
        if not found:
            return f"No memory matches {query!r}."
        # Every memory returned is shown to the client's agent: one feedback op (history, reinforcement).
        self.project.memories.record_access([m.id for m in found], source="mcp")
        return "\n".join(_line(m) for m in found)

    def record_memory(self, content: str, type: str = "note", files: list[str] | None = None) -> str:
        """Store a candidate memory (quarantined until confirmed or reinforced)."""
        mtype = type if type in {t.value for t in MemoryType} else MemoryType.NOTE.value
        item = NewMemory(content=content, type=mtype, related_files=list(files or [])[:10],
                         source=MemorySource.MCP_AUTO.value, candidate=True, confidence=0.6)
        res = self.project.memories.add(item, actor="mcp", reason="record_memory over MCP").result(30)
        return f"Recorded as memory #{res.id}{'' if res.created else ' (reinforced an existing one)'}."

    def get_workflow_recipe(self, task: str) -> str:
        """How tasks like this one were done successfully before."""
        recipes = self.memory.workflow_recipes(task, 3)
        return "\n".join(f"- {r}" for r in recipes) if recipes else "No workflow recipe is known for this yet."

    def analyze_impact(self, target: str, depth: int = 3) -> str:
        """Dependents of a file or symbol in the code graph (JSON)."""
        return json.dumps(self.memory.analyze_impact(target, max(1, min(6, depth))), default=str)[:50_000]

    def pin(self, memory_id: int, pinned: bool = True) -> str:
        """Pin (always inject) or unpin a memory."""
        self.project.memories.pin(memory_id, pinned, actor="mcp").result(30)
        return f"Memory #{memory_id} {'pinned' if pinned else 'unpinned'}."

    def forget(self, memory_id: int, reason: str = "") -> str:
        """Forget a memory (never injected again; deleted later by pruning)."""
        self.project.memories.forget(memory_id, reason=reason or None, actor="mcp").result(30)
        return f"Memory #{memory_id} forgotten."

    def pinned(self) -> str:
        """Every pinned memory, one per line."""
        from desktop.memory.store.rows import MemoryQuery

        mems = self.project.memories.list(MemoryQuery(pinned=True), limit=200)
        if mems:
            self.project.memories.record_access([m.id for m in mems], source="mcp")
        return "\n".join(_line(m) for m in mems) or "No pinned memories."

    def close(self) -> None:
        """Stop the timeout pool."""
        self.memory.close()


def build_server(impl: EngramMCP) -> Any:
    """An MCPServer exposing ``impl``'s tools and the pinned-memories resource."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING")
    server.add_tool(impl.search_memory, name="search_memory",
                    description="Search this project's long-term memory (decisions, gotchas, dead ends).")
    server.add_tool(impl.record_memory, name="record_memory",
                    description="Record something a future session should know (stored as a candidate).")
    server.add_tool(impl.get_workflow_recipe, name="get_workflow_recipe",
                    description="How tasks like this one were done successfully in this project.")
    server.add_tool(impl.analyze_impact, name="analyze_impact",
                    description="What depends on a file or symbol (path or path:symbol).")
    server.add_tool(impl.pin, name="pin", description="Pin a memory so it is always injected (pinned=false unpins).")
    server.add_tool(impl.forget, name="forget", description="Forget a memory that is wrong or obsolete.")

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
        build_server(impl).run("stdio")
    finally:
        impl.close()
        project.close()


def launch_command(project_dir: Path) -> tuple[str, list[str]]:
    """The command an MCP client should run: the ``engram`` executable, else this Python."""
    exe = shutil.which("engram")
    args = ["mcp", "--project", str(Path(project_dir).resolve())]
    if exe:
        return exe, args
    return sys.executable, ["-m", "desktop.cli.main", *args]


def client_config(project_dir: Path, client: str = "all") -> dict[str, Any]:
    """Configuration snippets for Claude Code (.mcp.json), Cursor (.cursor/mcp.json) and Codex (config.toml)."""
    command, args = launch_command(project_dir)
    entry = {"command": command, "args": args}
    toml_args = ", ".join(json.dumps(a) for a in args)
    snippets: dict[str, Any] = {
        "claude-code": {"file": ".mcp.json (project) or `claude mcp add engram -- "
                                f"{command} {' '.join(args)}`", "json": {"mcpServers": {SERVER_NAME: entry}}},
        "cursor": {"file": ".cursor/mcp.json", "json": {"mcpServers": {SERVER_NAME: entry}}},
        "codex": {"file": "~/.codex/config.toml",
                  "toml": f"[mcp_servers.{SERVER_NAME}]\ncommand = {json.dumps(command)}\nargs = [{toml_args}]\n"},
    }
    return snippets if client == "all" else {client: snippets[client]}
