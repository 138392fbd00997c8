"""What the managed memory block in CLAUDE.md / AGENTS.md / GEMINI.md says before an external agent runs.

The block mechanics (markers, splice, repair of duplicate blocks, atomic write)
have one implementation, :mod:`desktop.memory.lifecycle.managed_block`, shared
with ``engram export --format claude-md``; this module only decides the content.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop.agents.injection.budget import PromptBudget
from desktop.agents.injection.session_start import build_start_context
from desktop.agents.tools.confine import ProjectRoot
from desktop.memory.lifecycle.managed_block import BEGIN, END, NOTE, remove, splice, write_block

__all__ = ["BEGIN", "END", "FILES", "FORMATS", "NOTE", "memory_body", "remove", "splice", "update_agent_file",
           "write_block"]

FILES = {"claude-code": "CLAUDE.md", "codex": "AGENTS.md", "gemini-cli": "GEMINI.md"}
FORMATS = {"claude-code": "xml", "codex": "plain", "gemini-cli": "markdown"}


def memory_body(memory: Any, root: Path, task: str, fmt: str, *, context_window: int = 200_000) -> str:
    """What the block says: the same T1 content Engram's own agent gets (no prefetched files)."""
    ctx = build_start_context(memory, task, ProjectRoot(root), fmt,
                              PromptBudget(context_window).allocate(0), prefetch=False)
    intro = ("Engram memory for this project. Also available over MCP (server `engram`: search_memory, "
             "record_memory, get_workflow_recipe, analyze_impact).")
    return f"{intro}\n{ctx.system_text}" if ctx.system_text else intro


def update_agent_file(memory: Any, root: Path, agent: str, task: str = "") -> Path:
    """Refresh the managed block of the agent's instruction file; returns the file's path."""
    path = Path(root) / FILES[agent]
    write_block(path, memory_body(memory, Path(root), task, FORMATS[agent]))
    return path
