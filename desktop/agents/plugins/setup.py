"""``engram setup``: Engram in every agent found on this machine, in one command, reversible.

For each agent whose CLI is on ``PATH`` (Claude Code, Codex, Gemini CLI):

* **plugin** (when ``engram`` itself is on ``PATH``): the bundle (``bundle.py``) is
  written to ``<data>/plugins/`` and installed with the agent's own commands
  (``agent_cli.py``): hooks for every event and the MCP server, for every project;
* **hooks** (otherwise, e.g. the desktop app without a command on ``PATH``, or a data
  folder named on the command line): Engram's hooks in the agent's user settings and
  the MCP server in its user configuration, by this installation's absolute path.

Sessions are recorded and told memories in Engram projects only: ``setup`` also
makes the folder it is run in one (``--no-project`` leaves that out). ``remove``
takes out exactly what ``setup`` added, both kinds, and leaves every memory.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.agents.hooks import install as hooks
from desktop.agents.hooks.protocol import AGENTS
from desktop.agents.mcp_catalog import SERVER_NAME
from desktop.agents.mcp_config import user_entry
from desktop.agents.plugins import agent_cli
from desktop.agents.plugins.bundle import build
from desktop.data_location import DATA_DIR_ENV

log = logging.getLogger("engram.setup")

# Result codes (the command line and the app word them).
INSTALLED, REMOVED, NOTHING, FAILED, NOT_FOUND = "installed", "removed", "nothing", "failed", "not_found"
PLUGIN, HOOKS = "plugin", "hooks"


@dataclass
class AgentResult:
    """What setup (or remove) did for one agent."""

    agent: str
    code: str
    mode: str = ""
    detail: str = ""


def bundle_dir(data_dir: Path) -> Path:
    """Where setup writes the bundle it installs from (the agents keep a copy of what they install)."""
    return data_dir / "plugins"


def choose_mode(data_dir_named: bool) -> str:
    """plugin when ``engram`` is on PATH (what the shared plugin files call) and the data folder is the
    one a plain ``engram`` finds; hooks with absolute paths otherwise."""
    return PLUGIN if shutil.which("engram") and not data_dir_named else HOOKS


def _user_config(agent: str, home: Path) -> Path:
    return home / ".claude.json" if agent == "claude-code" else home / ".gemini" / "settings.json"


def _read_json(path: Path) -> dict[str, Any]:
    """A JSON settings file (empty when absent); an unreadable one is never overwritten."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}); fix it first, nothing was changed.") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object; nothing was changed.")
    return data


def _write_json(path: Path, data: dict[str, Any]) -> None:
    """Replace the file at once, keeping its permissions."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    tmp = path.with_name(f".{path.name}.engram.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def _user_mcp(agent: str, home: Path) -> bool:
    """Whether the agent's user configuration has an ``engram`` MCP entry (Claude Code and Gemini CLI)."""
    try:
        return SERVER_NAME in (_read_json(_user_config(agent, home)).get("mcpServers") or {})
    except ValueError:
        return False


def _add_user_mcp(agent: str, home: Path, entry: dict[str, Any]) -> None:
    """Engram's MCP entry in the agent's user configuration (Claude Code through its CLI; Gemini CLI's
    ``mcp add`` would take the entry's own options for its own, so its settings file is merged)."""
    if agent == "claude-code":
        _remove_user_mcp(agent, home)
        agent_cli.run([agent_cli.executable(agent), "mcp", "add", "--scope", "user", SERVER_NAME, "--",
                       entry["command"], *entry["args"]], cwd=home)
        return
    path = _user_config(agent, home)
    data = _read_json(path)
    found = data.get("mcpServers")
    servers: dict[str, Any] = found if isinstance(found, dict) else {}
    _write_json(path, {**data, "mcpServers": {**servers, SERVER_NAME: entry}})


def _remove_user_mcp(agent: str, home: Path) -> bool:
    """Take Engram's MCP entry out of the agent's user configuration; False when there was none."""
    if agent == "codex" or not _user_mcp(agent, home):
        return False  # agent_cli.uninstall takes Codex's entry out
    if agent == "claude-code":
        agent_cli.run([agent_cli.executable(agent), "mcp", "remove", "--scope", "user", SERVER_NAME], cwd=home)
        return True
    path = _user_config(agent, home)
    data = _read_json(path)
    servers = {k: v for k, v in data["mcpServers"].items() if k != SERVER_NAME}
    rest = {k: v for k, v in data.items() if k != "mcpServers"}
    _write_json(path, {**rest, "mcpServers": servers} if servers else rest)
    return True


def _hooks_mode(agent: str, home: Path, project: Path, data_dir: Path | None) -> str:
    """User-scope hooks and MCP entry by this installation's absolute path; the settings file written."""
    hooks.install(agent, "user", project, home, data_dir)
    entry = user_entry(data_dir)
    if agent == "codex":
        exe = agent_cli.executable(agent)
        if agent_cli.plugin_state(agent, home).mcp:
            agent_cli.run([exe, "mcp", "remove", SERVER_NAME], cwd=home)
        agent_cli.run([exe, "mcp", "add", SERVER_NAME, "--", entry["command"], *entry["args"]], cwd=home)
    else:
        _add_user_mcp(agent, home, entry)
    return str(hooks.settings_path(agent, "user", project, home))


def setup(agents: list[str] | None, home: Path, data_dir: Path, *, data_dir_named: bool = False,
          project: Path | None = None) -> list[AgentResult]:
    """Install Engram into ``agents`` (None: every agent found on PATH); a failure in one leaves the others."""
    wanted = agents if agents is not None else hooks.detected_agents()
    mode = choose_mode(data_dir_named)
    bundle = build(bundle_dir(data_dir)) if mode == PLUGIN else None
    out: list[AgentResult] = []
    for agent in wanted:
        if shutil.which(agent_cli.EXECUTABLES[agent]) is None:
            out.append(AgentResult(agent, NOT_FOUND))
            continue
        try:
            if bundle is not None:
                # Codex starts MCP servers with a filtered environment: a data folder given through
                # $ENGRAM_DATA_DIR is written into its entry
                named = data_dir if os.environ.get(DATA_DIR_ENV) else None
                agent_cli.install(agent, bundle, home, named)
                where = agent_cli.plugin_state(agent, home).where
            else:
                where = _hooks_mode(agent, home, project or home, data_dir if data_dir_named else None)
        except (agent_cli.AgentCliFailed, OSError, ValueError) as exc:
            log.warning("setup of %s failed: %s", agent, exc)
            out.append(AgentResult(agent, FAILED, mode, str(exc)))
            continue
        out.append(AgentResult(agent, INSTALLED, mode, where))
    return out


def remove(agents: list[str] | None, home: Path, project: Path | None = None) -> list[AgentResult]:
    """Take out what setup added (plugin, extension, user hooks, MCP entries) for ``agents`` (None: all)."""
    out: list[AgentResult] = []
    for agent in agents if agents is not None else list(AGENTS):
        removed = []
        try:
            if shutil.which(agent_cli.EXECUTABLES[agent]) is not None:
                removed += agent_cli.uninstall(agent, home)
            if _remove_user_mcp(agent, home):
                removed.append("mcp")
            if hooks.uninstall(agent, "user", project or home, home)[1]:
                removed.append(HOOKS)
        except (agent_cli.AgentCliFailed, OSError, ValueError) as exc:
            out.append(AgentResult(agent, FAILED, "", str(exc)))
            continue
        out.append(AgentResult(agent, REMOVED if removed else NOTHING, "+".join(removed)))
    return out
