"""One folder that is a Claude Code marketplace, a Codex marketplace and a Gemini CLI extension.

Everything in it is generated from the hook event table (``hooks.protocol.NATIVE_EVENTS``
through ``hooks.install.merge``, so an event, matcher or timeout added there reaches every
plugin) and from the portable MCP entry (``mcp_config``). The files are meant to be
shared: commands call ``engram`` from ``PATH``, never a machine path.

Layout (``MARKETPLACE`` is also the plugin's name)::

    .claude-plugin/marketplace.json     Claude Code marketplace -> claude-code/
    claude-code/.claude-plugin/plugin.json, hooks/hooks.json, .mcp.json
    .agents/plugins/marketplace.json    Codex marketplace -> codex/
    codex/.codex-plugin/plugin.json, hooks/hooks.json
    gemini/gemini-extension.json (with the MCP server), hooks/hooks.json

Codex's plugin carries no MCP server: Codex starts a plugin's server in the plugin's
cache folder, where it cannot know the project, so Codex gets the user's own entry
instead (``agent_cli``).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from desktop import __version__
from desktop.agents.hooks.install import merge
from desktop.agents.mcp_catalog import SERVER_NAME
from desktop.agents.mcp_config import PORTABLE_COMMAND, portable_entry

NAME = "engram"
MARKETPLACE = "engram"
DESCRIPTION = ("Engram's long-term memory of this codebase: what past sessions learned, told to the agent when a "
               "session starts, at each prompt and when it opens a file, and every session learned from.")
AUTHOR = {"name": "Engram"}
FOLDERS = {"claude-code": "claude-code", "codex": "codex", "gemini": "gemini"}
# The command part of a hook entry: whatever runs Engram, up to " hook <event> --agent <agent>".
_HOOK_TAIL = re.compile(r"^(?P<head>.*?)\s+(?P<tail>hook\s+[\w-]+\s+--agent\s+[\w-]+)$")


def portable_command(command: str) -> str:
    """A hook command with this machine's entry point replaced by ``engram`` from PATH."""
    m = _HOOK_TAIL.match(command)
    if m is None:
        raise ValueError(f"not one of Engram's hook commands: {command!r}")
    return f"{PORTABLE_COMMAND} {m.group('tail')}"


def hooks_config(agent: str) -> dict[str, Any]:
    """``{"hooks": {...}}``: every event of ``agent`` as its settings file would hold it, portable."""
    hooks = merge(agent, {}, None)["hooks"]
    for groups in hooks.values():
        for group in groups:
            for entry in group.get("hooks") or []:
                entry["command"] = portable_command(str(entry["command"]))
    return {"hooks": hooks}


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _claude(root: Path) -> None:
    plugin = root / FOLDERS["claude-code"]
    _write(plugin / ".claude-plugin" / "plugin.json",
           {"name": NAME, "version": __version__, "description": DESCRIPTION, "author": AUTHOR})
    _write(plugin / "hooks" / "hooks.json", hooks_config("claude-code"))
    _write(plugin / ".mcp.json", {"mcpServers": {SERVER_NAME: portable_entry()}})
    _write(root / ".claude-plugin" / "marketplace.json",
           {"name": MARKETPLACE, "owner": AUTHOR, "description": DESCRIPTION,
            "plugins": [{"name": NAME, "source": f"./{FOLDERS['claude-code']}", "version": __version__,
                         "description": DESCRIPTION, "category": "development"}]})


def _codex(root: Path) -> None:
    plugin = root / FOLDERS["codex"]
    _write(plugin / ".codex-plugin" / "plugin.json",
           {"name": NAME, "version": __version__, "description": DESCRIPTION, "author": AUTHOR,
            "hooks": "./hooks/hooks.json",
            "interface": {"displayName": "Engram", "shortDescription": "Long-term memory of this codebase",
                          "category": "Coding"}})
    _write(plugin / "hooks" / "hooks.json", hooks_config("codex"))
    _write(root / ".agents" / "plugins" / "marketplace.json",
           {"name": MARKETPLACE, "interface": {"displayName": "Engram"},
            "plugins": [{"name": NAME, "source": {"source": "local", "path": f"./{FOLDERS['codex']}"},
                         "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"},
                         "category": "Coding"}]})


def _gemini(root: Path) -> None:
    extension = root / FOLDERS["gemini"]
    _write(extension / "gemini-extension.json",
           {"name": NAME, "version": __version__, "description": DESCRIPTION,
            "mcpServers": {SERVER_NAME: portable_entry()}})
    _write(extension / "hooks" / "hooks.json", hooks_config("gemini"))


def build(root: Path) -> Path:
    """Write the bundle into ``root`` (replacing an earlier build there); returns ``root``."""
    root = Path(root)
    for part in (*FOLDERS.values(), ".claude-plugin", ".agents"):
        shutil.rmtree(root / part, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    _claude(root)
    _codex(root)
    _gemini(root)
    return root


def plugin_folder(root: Path, agent: str) -> Path:
    """The folder of ``agent``'s plugin (Gemini: its extension) inside a bundle."""
    return Path(root) / FOLDERS[agent]

