"""Installing the bundle with each agent's own commands, and reading back what is installed.

Installing goes through the agent's CLI (it knows its own caches, scopes and
trust records); reading what is installed only reads the agent's files, so
``engram doctor`` stays read-only and fast:

* Claude Code: ``claude plugin marketplace add <bundle>`` and ``claude plugin install
  engram@engram`` (user scope); installed when ``enabledPlugins["engram@engram"]`` is
  true in ``~/.claude/settings.json``.
* Gemini CLI: ``gemini extensions install <bundle>/gemini --consent``; installed when
  ``~/.gemini/extensions/engram/gemini-extension.json`` exists. The CLI asks whether to
  trust the folder it installs from: that folder is the bundle Engram just wrote for
  this command, so that one command runs with ``GEMINI_CLI_TRUST_WORKSPACE=true``.
* Codex: ``codex plugin marketplace add <bundle>``, ``codex plugin add engram@engram``
  and, for the MCP server, ``codex mcp add engram -- <this engram> mcp`` (the user's
  own entry: a plugin's server would start in the plugin cache and not know the
  project); installed when ``$CODEX_HOME/config.toml`` enables ``engram@engram``.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.agents.mcp_catalog import SERVER_NAME
from desktop.agents.mcp_config import user_entry
from desktop.agents.plugins.bundle import MARKETPLACE, NAME, plugin_folder
from desktop.memory.privacy.boundary import redact_then_cut

log = logging.getLogger("engram.setup")

EXECUTABLES = {"claude-code": "claude", "codex": "codex", "gemini": "gemini"}
PLUGIN_ID = f"{NAME}@{MARKETPLACE}"
CLI_TIMEOUT_S = 180.0


class AgentCliFailed(RuntimeError):
    """An agent's own command failed; the message quotes it and what it said."""


@dataclass
class PluginState:
    """What one agent has of Engram's plugin, read from its files."""

    agent: str
    installed: bool
    where: str  # the file that says so
    mcp: bool  # an MCP entry for Engram is configured for the user (Codex: its own entry)


def codex_home(home: Path) -> Path:
    """``$CODEX_HOME``, else ``~/.codex``."""
    env = os.environ.get("CODEX_HOME")
    return Path(env) if env else home / ".codex"


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def plugin_state(agent: str, home: Path) -> PluginState:
    """Whether Engram's plugin (or extension) is installed and enabled for ``agent`` (reads files only)."""
    if agent == "claude-code":
        settings = home / ".claude" / "settings.json"
        on = _json(settings).get("enabledPlugins", {}).get(PLUGIN_ID) is True
        return PluginState(agent, on, str(settings), on)  # the plugin carries the MCP server
    if agent == "gemini":
        manifest = home / ".gemini" / "extensions" / NAME / "gemini-extension.json"
        on = manifest.is_file() and SERVER_NAME in (_json(manifest).get("mcpServers") or {})
        return PluginState(agent, manifest.is_file(), str(manifest), on)
    config = codex_home(home) / "config.toml"
    data = _toml(config)
    on = (data.get("plugins") or {}).get(PLUGIN_ID, {}).get("enabled") is True
    return PluginState(agent, on, str(config), SERVER_NAME in (data.get("mcp_servers") or {}))


def run(argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    """Run one of an agent's commands (no terminal, nothing on stdin); its output, or AgentCliFailed."""
    log.info("running %s", " ".join(argv))
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=CLI_TIMEOUT_S, check=False,
                              stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})}, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AgentCliFailed(f"`{' '.join(argv[:4])}` could not run: {exc}") from exc
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or [""]
        raise AgentCliFailed(f"`{' '.join(argv[:4])}` failed (exit {done.returncode}): {redact_then_cut(said[0], 300)}")
    return done.stdout


def executable(agent: str) -> str:
    """The agent's CLI on PATH, or AgentCliFailed."""
    found = shutil.which(EXECUTABLES[agent])
    if found is None:
        raise AgentCliFailed(f"{EXECUTABLES[agent]} is not on PATH.")
    return found


def install(agent: str, bundle: Path, home: Path, data_dir: Path | None = None) -> None:
    """Install (or bring up to date) Engram's plugin for ``agent`` from a built bundle."""
    exe = executable(agent)
    if agent == "claude-code":
        run([exe, "plugin", "marketplace", "add", str(bundle)], cwd=home)
        run([exe, "plugin", "marketplace", "update", MARKETPLACE], cwd=home)
        run([exe, "plugin", "install", PLUGIN_ID], cwd=home)
        run([exe, "plugin", "update", PLUGIN_ID], cwd=home)
    elif agent == "gemini":
        if plugin_state(agent, home).installed:
            run([exe, "extensions", "uninstall", NAME], cwd=home)
        run([exe, "extensions", "install", str(plugin_folder(bundle, agent)), "--consent"], cwd=home,
            env={"GEMINI_CLI_TRUST_WORKSPACE": "true"})
    else:
        run([exe, "plugin", "marketplace", "add", str(bundle)], cwd=home)
        run([exe, "plugin", "add", PLUGIN_ID], cwd=home)
        if plugin_state(agent, home).mcp:
            run([exe, "mcp", "remove", SERVER_NAME], cwd=home)
        entry = user_entry(data_dir)
        run([exe, "mcp", "add", SERVER_NAME, "--", entry["command"], *entry["args"]], cwd=home)


def uninstall(agent: str, home: Path) -> list[str]:
    """Remove Engram's plugin (and Codex's MCP entry); what was removed ("plugin", "mcp")."""
    state = plugin_state(agent, home)
    removed: list[str] = []
    if state.installed:
        exe = executable(agent)
        if agent == "claude-code":
            run([exe, "plugin", "uninstall", PLUGIN_ID], cwd=home)
            run([exe, "plugin", "marketplace", "remove", MARKETPLACE], cwd=home)
        elif agent == "gemini":
            run([exe, "extensions", "uninstall", NAME], cwd=home)
        else:
            run([exe, "plugin", "remove", PLUGIN_ID], cwd=home)
            run([exe, "plugin", "marketplace", "remove", MARKETPLACE], cwd=home)
        removed.append("plugin")
    if agent == "codex" and state.mcp:
        run([executable(agent), "mcp", "remove", SERVER_NAME], cwd=home)
        removed.append("mcp")
    return removed
