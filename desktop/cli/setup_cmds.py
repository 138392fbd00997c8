"""`engram setup`: Engram in every coding agent found on this machine, and `engram setup --remove`."""

from __future__ import annotations

import argparse
from pathlib import Path

from desktop.cli.common import CliError, emit

AGENT_NAMES = {"claude-code": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI"}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the setup command."""
    p = sub.add_parser("setup", help="install Engram into Claude Code, Codex and Gemini CLI (plugins, hooks, MCP) "
                                     "and make this folder an Engram project")
    p.add_argument("--agent", action="append", choices=sorted(AGENT_NAMES),
                   help="only this agent (repeatable; default: every agent found on PATH)")
    p.add_argument("--remove", action="store_true", help="take out everything setup added (memories stay)")
    p.add_argument("--project", type=Path, default=None, help="the project (default: the current directory)")
    p.add_argument("--no-project", action="store_true", help="do not make the folder an Engram project")
    p.add_argument("--data-dir", type=Path, default=None,
                   help="where Engram keeps its databases (written into the agents' settings)")
    p.add_argument("--bundle", type=Path, default=None, metavar="DIR",
                   help="only write the plugins (a Claude Code and Codex marketplace, a Gemini CLI extension) "
                        "into DIR, to share or install by hand")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_setup)


def _line(r: object) -> str:
    from desktop.agents.plugins import setup as core

    agent, code, mode, detail = (getattr(r, k) for k in ("agent", "code", "mode", "detail"))
    name = AGENT_NAMES[agent]
    how = "as a plugin" if mode == core.PLUGIN else "through its user settings (hooks and MCP)"
    return {core.INSTALLED: f"{name}: Engram installed {how} ({detail})",
            core.REMOVED: f"{name}: Engram removed ({mode})",
            core.NOTHING: f"{name}: nothing of Engram's to remove",
            core.NOT_FOUND: f"{name}: not found on PATH, skipped",
            core.FAILED: f"{name}: not installed: {detail}"}[code]


def cmd_setup(args: argparse.Namespace) -> int:
    """Install (or remove) Engram in the agents; exit 1 when one of them failed."""
    from desktop.agents.plugins import setup as core
    from desktop.agents.plugins.bundle import build
    from desktop.data_location import default_data_dir

    if args.bundle is not None:
        folder = build(args.bundle.expanduser().resolve())
        emit(args, {"bundle": str(folder)}, f"Plugins written to {folder}: `claude plugin marketplace add {folder}`, "
                                            f"`codex plugin marketplace add {folder}`, "
                                            f"`gemini extensions install {folder / 'gemini'}`.")
        return 0
    home = Path.home()
    project = (args.project or Path.cwd()).resolve()
    if args.remove:
        results = core.remove(args.agent, home, project)
    else:
        if args.agent is None and not core.hooks.detected_agents():
            raise CliError("No Claude Code, Codex or Gemini CLI found on PATH; install one, or name one with --agent.")
        data_dir = args.data_dir.expanduser().resolve() if args.data_dir else default_data_dir()
        results = core.setup(args.agent, home, data_dir, data_dir_named=args.data_dir is not None, project=project)
        if not args.no_project and any(r.code == core.INSTALLED for r in results):
            _ensure_project(project, args.data_dir)
    lines = [_line(r) for r in results]
    if not args.remove and not args.no_project and any(r.code == core.INSTALLED for r in results):
        lines.append(f"{project} is an Engram project: sessions there are recorded and told what Engram remembers.")
    emit(args, [r.__dict__ for r in results], "\n".join(lines))
    return 1 if any(r.code == core.FAILED for r in results) else 0


def _ensure_project(project: Path, data_dir: Path | None) -> None:
    """Hooks and the MCP server act in Engram projects only: setup makes the folder one."""
    from desktop.cli.hook_cmds import _ensure_project as ensure

    ensure(project, data_dir)
