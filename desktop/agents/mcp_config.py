"""Configuration entries for Engram's MCP server in Claude Code, Codex, Gemini CLI and Cursor.

Two kinds, never mixed:

* **portable** (files meant for the team, plugins and extensions): ``engram mcp``
  found on ``PATH``, no machine path and no pinned project: the server serves the
  Engram project it is started in (``mcp_front``);
* **per user** (the user's own configuration): this installation's absolute entry
  point (``launch.engram_argv``: safe in any folder) and still no pinned project, so
  one entry serves every project; ``--data-dir`` only when Engram keeps its
  databases somewhere other than the default.

Cursor starts servers outside the workspace, so its entry names the workspace with
Cursor's own ``${workspaceFolder}`` variable; it has only the project entry (in
``~/.cursor/mcp.json`` that would make every workspace opened an Engram project).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from desktop.agents.mcp_catalog import SERVER_NAME

CLIENTS = ("claude-code", "codex", "gemini", "cursor")
PORTABLE_COMMAND = "engram"


def portable_entry(extra: list[str] | None = None) -> dict[str, Any]:
    """``{"command": "engram", "args": ["mcp", ...]}``: the entry for files shared with others."""
    return {"command": PORTABLE_COMMAND, "args": ["mcp", *(extra or [])]}


def user_entry(data_dir: Path | None = None) -> dict[str, Any]:
    """The entry for the user's own configuration: this installation's absolute command."""
    from desktop.agents.launch import engram_argv

    exe, *prefix = engram_argv()
    args = [*prefix, "mcp"]
    if data_dir is not None:
        args += ["--data-dir", str(Path(data_dir).expanduser().resolve())]
    return {"command": exe, "args": args}


def toml_entry(entry: dict[str, Any]) -> str:
    """The entry as a Codex ``config.toml`` table."""
    args = ", ".join(json.dumps(a) for a in entry["args"])
    return f"[mcp_servers.{SERVER_NAME}]\ncommand = {json.dumps(entry['command'])}\nargs = [{args}]\n"


def client_config(client: str = "all", data_dir: Path | None = None) -> dict[str, Any]:
    """Per client: the project file (portable) and the user's own entry, ready to paste or run."""
    mine = user_entry(data_dir)
    shell = " ".join(shlex.quote(p) for p in [mine["command"], *mine["args"]])
    servers = {"mcpServers": {SERVER_NAME: portable_entry()}}
    snippets: dict[str, Any] = {
        "claude-code": {
            "project": {"file": ".mcp.json", "json": servers},
            "user": {"command": f"claude mcp add --scope user {SERVER_NAME} -- {shell}"}},
        "codex": {
            "project": {"file": ".codex/config.toml", "toml": toml_entry(portable_entry())},
            "user": {"file": "~/.codex/config.toml", "toml": toml_entry(mine),
                     "command": f"codex mcp add {SERVER_NAME} -- {shell}"}},
        "gemini": {
            "project": {"file": ".gemini/settings.json", "json": servers},
            "user": {"file": "~/.gemini/settings.json", "json": {"mcpServers": {SERVER_NAME: mine}}}},
        "cursor": {
            "project": {"file": ".cursor/mcp.json",
                        "json": {"mcpServers": {SERVER_NAME: portable_entry(["--project", "${workspaceFolder}"])}}}},
    }
    return snippets if client == "all" else {client: snippets[client]}
