"""A managed memory block in CLAUDE.md / AGENTS.md, between markers; the user's text is never touched.

The block sits between ``<!-- engram:begin -->`` and ``<!-- engram:end -->``. Writing
replaces only what is between (and including) the markers, or appends the block
when there is none; bytes outside the markers are preserved exactly. Writing the
same content twice changes nothing (the file is not even rewritten).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from desktop.agents.injection.budget import PromptBudget
from desktop.agents.injection.session_start import build_start_context
from desktop.agents.tools.confine import ProjectRoot

BEGIN = "<!-- engram:begin -->"
END = "<!-- engram:end -->"
NOTE = "<!-- Managed by Engram: edits inside this block are replaced. Your text outside it is never touched. -->"
FILES = {"claude-code": "CLAUDE.md", "codex": "AGENTS.md", "gemini-cli": "GEMINI.md"}
FORMATS = {"claude-code": "xml", "codex": "plain", "gemini-cli": "markdown"}


def splice(text: str, body: str) -> str:
    """``text`` with its managed block replaced by ``body`` (or ``body`` appended in a new block)."""
    block = f"{BEGIN}\n{NOTE}\n{body.strip()}\n{END}"
    start = text.find(BEGIN)
    end = text.find(END, start + len(BEGIN)) if start >= 0 else -1
    if start >= 0 and end >= 0:
        return text[:start] + block + text[end + len(END):]
    if not text:
        return block + "\n"
    sep = "" if text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    return f"{text}{sep}{block}\n"


def remove(text: str) -> str:
    """``text`` without the managed block; the user's text around it stays as written."""
    start = text.find(BEGIN)
    end = text.find(END, start + len(BEGIN)) if start >= 0 else -1
    if start < 0 or end < 0:
        return text
    before, after = text[:start], text[end + len(END):]
    if after.startswith("\n"):
        after = after[1:]
    if not after and before.endswith("\n\n"):
        before = before[:-1]  # the blank line splice() put before an appended block
    return before + after


def write_block(path: Path, body: str) -> bool:
    """Write the managed block into ``path`` atomically; False when nothing changed."""
    # bytes, not read_text: universal newlines would silently turn the user's CRLF into LF
    old = path.read_bytes().decode("utf-8", "surrogateescape") if path.exists() else ""
    new = splice(old, body)
    if new == old:
        return False
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape", newline="") as fh:
            fh.write(new)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


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
