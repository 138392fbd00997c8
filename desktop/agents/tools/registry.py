"""The agent's tool belt: specs for the model, confined execution, approval, memory tools."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from desktop.agents.errors import AgentError, PathOutsideProject
from desktop.agents.messages import ToolSpec
from desktop.agents.tools.confine import ProjectRoot
from desktop.agents.tools.files import ToolOutcome, edit_file, glob_files, grep_files, read_file, write_file
from desktop.agents.tools.shell import run_bash
from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.types import MemoryType

log = logging.getLogger("engram.agents")

WRITE_TOOL_NAMES = frozenset({"Write", "Edit"})
COMMAND_TOOL_NAMES = frozenset({"Bash"})
MEMORY_TOOL_NAMES = frozenset({"search_memory", "record_memory", "get_workflow_recipe", "analyze_impact"})
_P = {"type": "string"}


def _obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


TOOL_SPECS: list[ToolSpec] = [
    ToolSpec("Read", "Read a text file of the project (numbered lines).",
             _obj({"file_path": _P, "offset": {"type": "integer"}, "limit": {"type": "integer"}}, ["file_path"])),
    ToolSpec("Write", "Create or overwrite a file in the project.",
             _obj({"file_path": _P, "content": _P}, ["file_path", "content"])),
    ToolSpec("Edit", "Replace an exact string in a file (must be unique unless replace_all).",
             _obj({"file_path": _P, "old_string": _P, "new_string": _P, "replace_all": {"type": "boolean"}},
                  ["file_path", "old_string", "new_string"])),
    ToolSpec("Grep", "Search file contents with a regular expression.",
             _obj({"pattern": _P, "path": _P, "glob": _P}, ["pattern"])),
    ToolSpec("Glob", "List project files matching a glob pattern such as src/**/*.py.",
             _obj({"pattern": _P, "path": _P}, ["pattern"])),
    ToolSpec("Bash", "Run a shell command in the project folder (timeout in seconds optional).",
             _obj({"command": _P, "timeout": {"type": "number"}}, ["command"])),
    ToolSpec("search_memory", "Search the project's long-term memory (decisions, gotchas, dead ends).",
             _obj({"query": _P, "limit": {"type": "integer"}}, ["query"])),
    ToolSpec("record_memory", "Record something worth remembering for future sessions (a gotcha, decision, "
             "dead end). It is reviewed at the end of the session.",
             _obj({"content": _P, "type": {"type": "string", "enum": [t.value for t in MemoryType]},
                   "files": {"type": "array", "items": _P}}, ["content"])),
    ToolSpec("get_workflow_recipe", "How tasks like this one were done successfully before.",
             _obj({"task": _P}, ["task"])),
    ToolSpec("analyze_impact", "What depends on a file or symbol (path or path:symbol) in the code graph.",
             _obj({"target": _P, "depth": {"type": "integer"}}, ["target"])),
]


@dataclass
class ApprovalRequest:
    """A write or a command waiting for the user's yes or no."""

    session_id: str
    tool: str
    arguments: dict[str, Any]
    summary: str


@dataclass
class ApprovalPolicy:
    """What may run without asking, and who to ask about the rest.

    ``ask`` is called in the session's thread and must return True to allow; the
    GUI blocks it on a dialog answer. Without ``ask``, anything not pre-allowed is denied.
    """

    allow_writes: bool = False
    allow_commands: bool = False
    ask: Callable[[ApprovalRequest], bool] | None = None
    remember: dict[str, bool] = field(default_factory=dict)  # per-tool "always" answers

    def permits(self, request: ApprovalRequest) -> bool:
        """True when the call may run."""
        if request.tool in WRITE_TOOL_NAMES and self.allow_writes:
            return True
        if request.tool in COMMAND_TOOL_NAMES and self.allow_commands:
            return True
        if request.tool in self.remember:
            return self.remember[request.tool]
        if self.ask is None:
            return False
        try:
            return bool(self.ask(request))
        except Exception:  # a broken dialog must fail closed
            log.exception("approval callback failed; denying %s", request.tool)
            return False


def summarize(tool: str, args: dict[str, Any]) -> str:
    """One line describing a call, for approval prompts and event logs."""
    if tool == "Bash":
        return f"run: {redact_then_cut(str(args.get('command', '')), 300)}"
    if tool in ("Write", "Edit", "Read"):
        return f"{tool.lower()} {args.get('file_path') or args.get('path') or ''}"
    return f"{tool} {redact_then_cut(json.dumps(args, ensure_ascii=False), 200)}"


class ToolRegistry:
    """Executes tool calls for one session: confined, approved, never raising into the loop."""

    def __init__(self, root: ProjectRoot, memory: Any, *, policy: ApprovalPolicy | None = None,
                 session_id: str = "", notes: Any | None = None, bash_timeout: float = 120.0,
                 cancel: threading.Event | None = None, memory_tools: bool = True) -> None:
        """``memory`` is a MemoryAccess; ``notes`` the session's record_memory scratchpad."""
        self.root = root
        self.memory = memory
        self.policy = policy or ApprovalPolicy()
        self.session_id = session_id
        self.notes = notes
        self.bash_timeout = bash_timeout
        self.cancel = cancel
        self.memory_tools = memory_tools
        self.denied = 0

    def specs(self) -> list[ToolSpec]:
        """Specs offered to the model (memory tools only when memory is on for this session)."""
        return [t for t in TOOL_SPECS if self.memory_tools or t.name not in MEMORY_TOOL_NAMES]

    def relative_files(self, tool: str, args: dict[str, Any]) -> list[str]:
        """Project-relative paths a file tool names (before it runs); outside paths are left out."""
        if tool not in ("Read", "Write", "Edit"):
            return []
        raw = args.get("file_path") or args.get("path")
        if not isinstance(raw, str) or not raw:
            return []
        try:
            return [self.root.relative(self.root.resolve(raw))]
        except PathOutsideProject:
            return []

    def execute(self, name: str, args: dict[str, Any], step: int = 0) -> ToolOutcome:
        """Run one call; every failure comes back as an error result the model can read."""
        try:
            if name in WRITE_TOOL_NAMES or name in COMMAND_TOOL_NAMES:
                if name in WRITE_TOOL_NAMES:
                    self.root.resolve(str(args.get("file_path") or args.get("path") or ""))  # refuse early
                req = ApprovalRequest(self.session_id, name, args, summarize(name, args))
                if not self.policy.permits(req):
                    self.denied += 1
                    return ToolOutcome(f"The user did not allow this {name} call. Do not retry it; "
                                       "explain what you wanted to do instead.", True,
                                       self.relative_files(name, args))
            return self._dispatch(name, args, step)
        except PathOutsideProject as exc:
            return ToolOutcome(f"Refused: {exc}", True)
        except AgentError as exc:
            return ToolOutcome(f"{exc.code}: {exc}", True)
        except (OSError, ValueError, TypeError, UnicodeError) as exc:
            return ToolOutcome(f"{name} failed: {exc}", True, self.relative_files(name, args))

    def _dispatch(self, name: str, args: dict[str, Any], step: int) -> ToolOutcome:
        if name == "Read":
            return read_file(self.root, args)
        if name == "Write":
            return write_file(self.root, args)
        if name == "Edit":
            return edit_file(self.root, args)
        if name == "Grep":
            return grep_files(self.root, args)
        if name == "Glob":
            return glob_files(self.root, args)
        if name == "Bash":
            return run_bash(self.root, args, cancel=self.cancel, default_timeout=self.bash_timeout)
        if name in MEMORY_TOOL_NAMES and self.memory_tools:
            from desktop.agents.tools.memory_tools import run_memory_tool

            return run_memory_tool(self, name, args, step)
        return ToolOutcome(f"Unknown tool {name!r}. Available: {', '.join(t.name for t in self.specs())}.", True)
