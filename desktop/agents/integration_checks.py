"""What ``engram doctor`` checks beyond the store: each agent CLI, its hooks and MCP entry, the warm service.

Read-only: the agents' own files are read, nothing is written or started and no agent
CLI is run (the service is only connected to). Every check has a stable ``code``
(the command line words it), the facts in ``detail`` and, for a problem, the command
that fixes it in ``fix``.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.agents.hooks import install as hooks
from desktop.agents.hooks.protocol import AGENTS
from desktop.agents.mcp_catalog import SERVER_NAME
from desktop.agents.plugins import agent_cli

OK, PROBLEM, NOTE = "ok", "problem", "note"


@dataclass(frozen=True)
class IntegrationCheck:
    """One finding: ``status`` ok | problem | note, a stable ``code``, the facts and the fix."""

    name: str
    status: str
    code: str
    detail: str = ""
    fix: str = ""


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _mcp_entries(agent: str, project: Path, home: Path) -> list[tuple[str, dict[str, Any]]]:
    """(where, entry) of every ``engram`` MCP entry the agent would load in ``project``."""
    found: list[tuple[str, dict[str, Any]]] = []
    if agent == "claude-code":
        files = [home / ".claude.json", project / ".mcp.json"]
        state = agent_cli.plugin_state(agent, home)
        if state.installed:
            found.append(("plugin engram@engram", {"command": "engram", "args": ["mcp"]}))
        servers = _json(home / ".claude.json").get("projects", {}).get(str(project), {}).get("mcpServers") or {}
        if SERVER_NAME in servers:
            found.append((f"{home / '.claude.json'} (this project)", servers[SERVER_NAME]))
    elif agent == "gemini":
        files = [home / ".gemini" / "settings.json", project / ".gemini" / "settings.json",
                 home / ".gemini" / "extensions" / "engram" / "gemini-extension.json"]
    else:
        import tomllib

        for path in (agent_cli.codex_home(home) / "config.toml", project / ".codex" / "config.toml"):
            try:
                servers = tomllib.loads(path.read_text(encoding="utf-8")).get("mcp_servers") or {}
            except (OSError, tomllib.TOMLDecodeError):
                continue
            if SERVER_NAME in servers:
                found.append((str(path), servers[SERVER_NAME]))
        return found
    for path in files:
        servers = _json(path).get("mcpServers") or {}
        if isinstance(servers, dict) and isinstance(servers.get(SERVER_NAME), dict):
            found.append((str(path), servers[SERVER_NAME]))
    return found


def _runnable(command: str) -> bool:
    return bool(shutil.which(command)) if not os.path.isabs(command) else os.access(command, os.X_OK)


def agent_checks(agent: str, project: Path, home: Path, data_dir: Path | None) -> list[IntegrationCheck]:
    """The CLI, the hooks and the MCP entry of one agent."""
    exe = shutil.which(agent_cli.EXECUTABLES[agent])
    plugin = agent_cli.plugin_state(agent, home)
    scopes = [hooks.status(agent, scope, project, home, data_dir) for scope in ("project", "user")]
    if exe is None and not plugin.installed and not any(s.events for s in scopes):
        return [IntegrationCheck(f"{agent}.cli", NOTE, "cli_missing", agent_cli.EXECUTABLES[agent])]
    out = [IntegrationCheck(f"{agent}.cli", OK if exe else PROBLEM, "cli_found" if exe else "cli_gone",
                            exe or agent_cli.EXECUTABLES[agent])]
    setup = f"engram setup --agent {agent}"
    full = [s for s in scopes if s.installed and not s.stale]
    partial = [s for s in scopes if s.events and (not s.installed or s.stale)]
    if plugin.installed:
        out.append(IntegrationCheck(f"{agent}.hooks", OK, "plugin", plugin.where))
        if not shutil.which("engram"):
            out.append(IntegrationCheck(f"{agent}.hooks", PROBLEM, "engram_not_on_path", "engram",
                                        "put Engram's `engram` command on PATH (pipx install engram-desktop), or "
                                        f"`engram setup --remove --agent {agent}` then `{setup}` from the app"))
    elif full:
        out.append(IntegrationCheck(f"{agent}.hooks", OK, "settings_hooks", full[0].path))
    if partial:
        s = partial[0]
        out.append(IntegrationCheck(f"{agent}.hooks", PROBLEM, "hooks_stale" if s.stale else "hooks_partial",
                                    s.path, f"engram hooks install --agent {agent} --scope {s.scope}"))
    elif not plugin.installed and not full:
        # not set up is not broken: a note with the command that sets it up
        out.append(IntegrationCheck(f"{agent}.hooks", NOTE, "hooks_missing", "", setup))
    if agent == "codex":
        feature = {s.feature for s in scopes}
        if "off" in feature:
            out.append(IntegrationCheck("codex.hooks", PROBLEM, "codex_hooks_off",
                                        str(agent_cli.codex_home(home) / "config.toml"),
                                        "delete `hooks = false` (or `codex_hooks = false`) under [features]"))
        elif "legacy" in feature:
            out.append(IntegrationCheck("codex.hooks", PROBLEM, "codex_flag_deprecated",
                                        "codex_hooks = true", f"engram hooks install --agent {agent}"))
    entries = _mcp_entries(agent, project, home)
    broken = [(where, e) for where, e in entries if not _runnable(str(e.get("command") or ""))]
    if broken:
        where, entry = broken[0]
        command = " ".join(shlex.quote(str(p)) for p in [entry.get("command"), *(entry.get("args") or [])])
        out.append(IntegrationCheck(f"{agent}.mcp", PROBLEM, "mcp_command_missing", f"{where}: {command}", setup))
    elif entries:
        out.append(IntegrationCheck(f"{agent}.mcp", OK, "mcp_entry", entries[0][0]))
    else:
        out.append(IntegrationCheck(f"{agent}.mcp", NOTE, "mcp_missing", "", setup))
    return out


def service_check(data_dir: Path) -> IntegrationCheck:
    """Whether the warm hook service listens for this data folder (connect only)."""
    from desktop.agents.hooks.client import socket_path, trusted
    from desktop.agents.hooks.peer import peer_uid

    path = socket_path(data_dir)
    if not path.exists():
        return IntegrationCheck("service", NOTE, "service_idle", str(path))
    if not trusted(path):
        return IntegrationCheck("service", PROBLEM, "service_untrusted", str(path),
                                f"remove {path} (hooks refuse it and answer without the service)")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(0.5)
    try:
        sock.connect(str(path))
        mine = peer_uid(sock) == os.getuid()
    except OSError:
        return IntegrationCheck("service", NOTE, "service_stale_socket", str(path))
    finally:
        sock.close()
    if not mine:
        return IntegrationCheck("service", PROBLEM, "service_other_user", str(path), f"remove {path}")
    return IntegrationCheck("service", OK, "service_listening", str(path))


def run_integration_checks(project: Path, home: Path, data_dir: Path,
                           data_dir_named: bool = False) -> list[IntegrationCheck]:
    """Every agent's checks, then the service's."""
    named = data_dir if data_dir_named else None
    out = [c for agent in AGENTS for c in agent_checks(agent, project, home, named)]
    out.append(service_check(data_dir))
    return out
