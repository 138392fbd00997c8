"""Canonical tool names and the file paths a tool call touches.

Each agent names its tools differently (Claude Code ``Read``, Gemini ``read_file``,
Codex a ``sed -n`` shell command). Signals such as co-access or repeated grep only
work if the same action gets the same name, so every importer maps through here.
"""

from __future__ import annotations

import logging
import ntpath
import posixpath
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from desktop.memory.observer.shell import classify_command, command_text
from desktop.memory.text.lazy_re import lazy

logger = logging.getLogger("engram.observer")

READ, EDIT, WRITE, MULTI_EDIT = "Read", "Edit", "Write", "MultiEdit"
BASH, GREP, GLOB = "Bash", "Grep", "Glob"
WEB_FETCH, WEB_SEARCH, TASK, TODO_WRITE, OTHER = "WebFetch", "WebSearch", "Task", "TodoWrite", "Other"

CANONICAL_TOOLS: Final[tuple[str, ...]] = (
    READ, EDIT, WRITE, MULTI_EDIT, BASH, GREP, GLOB, WEB_FETCH, WEB_SEARCH, TASK, TODO_WRITE, OTHER,
)
#: Tools whose output comes from outside the machine (the trust gate keys on these).
EXTERNAL_TOOLS: Final = frozenset({WEB_FETCH, WEB_SEARCH})
#: Tools that change files.
WRITE_TOOLS: Final = frozenset({EDIT, WRITE, MULTI_EDIT})

CLAUDE_CODE_TOOLS: Final[Mapping[str, str]] = {
    "Read": READ, "NotebookRead": READ, "Edit": EDIT, "NotebookEdit": EDIT, "Write": WRITE,
    "MultiEdit": MULTI_EDIT, "Bash": BASH, "Grep": GREP, "Glob": GLOB, "LS": GLOB,
    "WebFetch": WEB_FETCH, "WebSearch": WEB_SEARCH, "web_search": WEB_SEARCH,
    "Task": TASK, "Agent": TASK, "TodoWrite": TODO_WRITE,
    # Claude Code 2.1 replaced TodoWrite with a task list API.
    "TaskCreate": TODO_WRITE, "TaskUpdate": TODO_WRITE, "TaskList": TODO_WRITE, "TaskGet": TODO_WRITE,
}
CODEX_TOOLS: Final[Mapping[str, str]] = {
    "shell": BASH, "shell_command": BASH, "exec_command": BASH, "local_shell": BASH,
    "local_shell_call": BASH, "command_execution": BASH, "container.exec": BASH, "write_stdin": BASH,
    "apply_patch": EDIT, "file_change": EDIT, "web_search": WEB_SEARCH, "web_search_call": WEB_SEARCH,
    "update_plan": TODO_WRITE, "todo_list": TODO_WRITE, "view_image": READ, "read_file": READ,
    "list_dir": GLOB, "grep_files": GREP, "mcp_tool_call": OTHER,
}
GEMINI_TOOLS: Final[Mapping[str, str]] = {
    "read_file": READ, "read_many_files": READ, "write_file": WRITE, "replace": EDIT, "edit": EDIT,
    "run_shell_command": BASH, "search_file_content": GREP, "grep": GREP, "grep_search": GREP,
    "glob": GLOB, "list_directory": GLOB, "ls": GLOB, "web_fetch": WEB_FETCH,
    "google_web_search": WEB_SEARCH, "save_memory": OTHER, "write_todos": TODO_WRITE,
    "codebase_investigator": TASK, "delegate_to_agent": TASK,
}
_BY_AGENT: Final[Mapping[str, Mapping[str, str]]] = {
    "claude-code": CLAUDE_CODE_TOOLS, "codex": CODEX_TOOLS, "gemini-cli": GEMINI_TOOLS,
    "engram": CLAUDE_CODE_TOOLS,  # Engram's own agent uses Claude-style names
}

# Built-in slash commands of Claude Code and Gemini CLI: they run in the CLI and never reach
# the model, so they are not a session's prompt (custom commands such as /hi do reach it).
LOCAL_COMMANDS: Final = frozenset({
    "about", "add-dir", "agents", "auth", "bug", "chat", "clear", "compact", "config", "context", "cost",
    "doctor", "editor", "exit", "export", "extensions", "help", "hooks", "ide", "login", "logout", "mcp",
    "memory", "model", "permissions", "privacy", "quit", "release-notes", "resume", "settings", "stats",
    "status", "terminal-setup", "theme", "tools", "upgrade", "usage", "vim"})
_LOCAL_COMMAND_RE: Final = lazy(r"^(?:<command-name>)?/([\w-]+)")


def is_local_command(prompt: str) -> bool:
    """True when ``prompt`` is a built-in CLI command (``/status``, ``<command-name>/model``...)."""
    m = _LOCAL_COMMAND_RE.match(prompt.strip())
    return m is not None and m.group(1) in LOCAL_COMMANDS


_PATH_KEYS: Final = ("file_path", "absolute_path", "notebook_path", "filePath", "filename", "path", "file")
_URL_RE: Final = lazy(r"https?://[^\s<>\"')\]]+")
_PATCH_FILE_RE: Final = lazy(r"^\*\*\* (Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)


def canonical_tool(agent: str, raw_tool: str) -> str:
    """Map an agent's own tool name to a canonical name (``Other`` if unknown)."""
    if raw_tool in CANONICAL_TOOLS and raw_tool != OTHER:
        return raw_tool
    table = _BY_AGENT.get(agent, CLAUDE_CODE_TOOLS)
    if raw_tool in table:
        return table[raw_tool]
    # MCP tools: mcp__server__tool (Claude Code), server__tool (Codex); never canonical.
    return OTHER


def known_raw_tool(raw_tool: str) -> bool:
    """True for a name some agent's table lists (Codex's generic ``mcp_tool_call`` among them), which
    therefore does not name one particular server's tool."""
    return any(raw_tool in table for table in _BY_AGENT.values())


def patch_files(patch: str) -> list[tuple[str, str]]:
    """List ``(kind, path)`` touched by a Codex ``apply_patch`` body (add/update/delete)."""
    found: list[tuple[str, str]] = []
    for match in _PATCH_FILE_RE.finditer(patch):
        if match.group(3):
            found.append(("add", match.group(3).strip()))
        else:
            found.append((match.group(1).lower(), match.group(2).strip()))
    return found


def edit_or_write(kinds: Iterable[str]) -> str:
    """``Write`` when a change set only creates files, otherwise ``Edit``."""
    kinds = list(kinds)
    return WRITE if kinds and all(k == "add" for k in kinds) else EDIT


def _first_str(args: Mapping[str, Any], keys: Iterable[str]) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def glob_folder(pattern: str) -> str:
    """The folders a glob pattern names before its first wildcard (``a/b/*.go`` -> ``a/b``,
    ``**/x.go`` -> ''): where a Glob call without a ``path`` looks."""
    literal: list[str] = []
    for part in pattern.split("/")[:-1]:
        if any(c in part for c in "*?[{"):
            break
        literal.append(part)
    return "/".join(literal)


def normalize_args(tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """Return the agent's args plus canonical keys for ``tool`` (never overwriting).

    Canonical keys: ``file_path``/``paths`` (Read/Edit/Write/MultiEdit), ``pattern``
    and ``path`` (Grep/Glob), ``command`` (Bash), ``url`` (WebFetch), ``query``
    (WebSearch).
    """
    out: dict[str, Any] = dict(args)
    if tool in {READ, EDIT, WRITE, MULTI_EDIT}:
        path = _first_str(args, _PATH_KEYS)
        if path and "file_path" not in out:
            out["file_path"] = path
    elif tool in {GREP, GLOB}:
        pattern = _first_str(args, ("pattern", "query", "regex", "glob"))
        if pattern and "pattern" not in out:
            out["pattern"] = pattern
        scope = _first_str(args, ("path", "dir_path", "directory", "absolute_path"))
        if scope and "path" not in out:
            out["path"] = scope
    elif tool == BASH:
        if "command" in args or "cmd" in args:
            out["command"] = command_text(args.get("command", args.get("cmd")))
    elif tool == WEB_FETCH:
        if "url" not in out:
            match = _URL_RE.search(str(args.get("prompt", "")))
            if match:
                out["url"] = match.group(0)
    elif tool == WEB_SEARCH:
        query = _first_str(args, ("query", "q", "search_query"))
        if query and "query" not in out:
            out["query"] = query
    return out


def classify_shell(args: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """Classify a shell call's args; return ``(canonical tool, normalized args)``.

    A read-only command becomes Read/Grep/Glob with ``paths`` (and ``pattern``) added,
    so a ``sed -n 1,80p src/x.py`` counts as reading ``src/x.py``.
    """
    command = command_text(args.get("command", args.get("cmd", "")))
    shell = classify_command(command)
    out = dict(args)
    out["command"] = command
    if shell.tool == BASH:
        return BASH, out
    out.update({k: v for k, v in shell.extra.items() if v})
    if shell.paths:
        out["paths"] = list(shell.paths)
        key = "file_path" if shell.tool == READ else "path"
        out.setdefault(key, shell.paths[0])
    return shell.tool, out


def _pathmod(cwd: str) -> Any:
    """Windows transcripts carry drive-letter paths; everything else is POSIX."""
    return ntpath if re.match(r"^[A-Za-z]:[\\/]", cwd or "") else posixpath


_NOT_A_PATH: Final = lazy(r'["{}<>|\n]')


def plausible_file(path: str) -> bool:
    """False for paths that cannot name a file: ``.``, folders, quoted or bracketed fragments."""
    return bool(path) and path not in (".", "..") and not path.endswith("/") and not _NOT_A_PATH.search(path)


def relative_path(path: str, cwd: str, workdir: str | None = None) -> str:
    """Return ``path`` relative to ``cwd`` when inside it, else normalized absolute.

    A relative path is taken relative to ``workdir`` (Codex runs commands in a
    per-call working directory) or else ``cwd``.
    """
    mod = _pathmod(cwd or workdir or path)
    if not mod.isabs(path):
        base = workdir or cwd
        if not base:
            return mod.normpath(path).replace("\\", "/")
        path = mod.join(base, path)
    path = mod.normpath(path)
    if cwd:
        root = mod.normpath(cwd)
        if path == root:
            return "."
        prefix = root if root.endswith(mod.sep) else root + mod.sep
        if path.startswith(prefix):
            return path[len(prefix):].replace("\\", "/")
    return path


def file_paths_of(tool: str, args: Mapping[str, Any], cwd: str, *,
                  workdir: str | None = None) -> tuple[str, ...]:
    """Extract the file paths a tool call touches, relative to ``cwd`` when inside it.

    Read/Edit/Write/MultiEdit give their file(s); Grep gives its search scope if one
    was named; other tools touch no file we can name reliably.
    """
    candidates: list[str] = []
    if tool in {READ, EDIT, WRITE, MULTI_EDIT}:
        path = _first_str(args, _PATH_KEYS)
        if path:
            candidates.append(path)
    elif tool == GREP:
        scope = _first_str(args, ("path", "dir_path", "directory"))
        if scope:
            candidates.append(scope)
    if tool in {READ, EDIT, WRITE, MULTI_EDIT, GREP}:
        extra = args.get("paths")
        if isinstance(extra, list):
            candidates.extend(p for p in extra if isinstance(p, str) and p)
    seen: dict[str, None] = {}
    for raw in candidates:
        try:
            seen.setdefault(relative_path(raw.strip(), cwd, workdir), None)
        except (TypeError, ValueError):  # odd bytes in a path: keep it verbatim
            seen.setdefault(raw, None)
    return tuple(seen)
