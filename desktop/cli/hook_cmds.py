"""`engram hooks install|uninstall|status`, `engram hook EVENT` and `engram serve`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a hook answering inline imports no argument parser (~15 ms a process)
    import argparse

AGENT_CHOICES = ("claude-code", "codex", "gemini")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the hook commands."""
    hooks = sub.add_parser("hooks", help="install Engram's hooks into Claude Code, Codex or Gemini CLI")
    hooks.add_argument("action", choices=("install", "uninstall", "status"))
    hooks.add_argument("--agent", choices=(*AGENT_CHOICES, "all"), default="all",
                       help="which agent (default: every agent found on this machine; status: all)")
    hooks.add_argument("--scope", choices=("project", "user"), default="project",
                       help="the project's settings (default) or the user's settings for every project")
    hooks.add_argument("--project", type=Path, default=None, help="project folder (default: current directory)")
    hooks.add_argument("--data-dir", type=Path, default=None,
                       help="where Engram keeps its databases (written into the hook command)")
    hooks.add_argument("--json", action="store_true", help="print JSON")
    hooks.set_defaults(func=cmd_hooks)

    hook = sub.add_parser("hook", help="run one hook (called by the agent, reads its JSON on stdin)")
    _hook_options(hook)

    serve = sub.add_parser("serve", help="the warm local service hooks ask (Unix socket, stops when idle)")
    serve.add_argument("--data-dir", type=Path, default=None)
    serve.add_argument("--idle", type=float, default=900.0, help="seconds without a request before it stops")
    serve.add_argument("--no-warm-search", action="store_true", help="keyword search only (no model)")
    serve.set_defaults(func=cmd_serve)


def _hook_options(hook: argparse.ArgumentParser) -> None:
    hook.add_argument("event", help="session-start | prompt | after-tool | stop | session-end (or the agent's name)")
    hook.add_argument("--agent", default="claude-code", help="claude-code | codex | gemini")
    hook.add_argument("--data-dir", type=Path, default=None)
    hook.add_argument("--budget", type=float, default=None, help="hard time budget in seconds")
    hook.add_argument("--tokens", type=int, default=None, help="token budget of the session-start context")
    hook.set_defaults(func=cmd_hook)


def run_hook_command(argv: list[str], stdin: bytes) -> int:
    """``engram hook ...`` (its payload already read) without building the whole command-line parser:
    the usual command line is read by hand, as the service's client reads it; anything else
    (help, an unknown option) goes through ``argparse``."""
    from desktop.agents.hooks.client import hook_options

    found = hook_options(argv)
    args: argparse.Namespace | SimpleNamespace
    if found is not None:
        try:
            args = SimpleNamespace(
                event=found["event"], agent=found.get("agent", "claude-code"),
                data_dir=Path(found["data-dir"]) if found.get("data-dir") else None,
                budget=float(found["budget"]) if found.get("budget") else None,
                tokens=int(found["tokens"]) if found.get("tokens") else None)
        except ValueError:
            found = None
    if found is None:
        import argparse

        parser = argparse.ArgumentParser(prog="engram hook", add_help=True)
        _hook_options(parser)
        try:
            args, _unknown = parser.parse_known_args(argv)
        except SystemExit:  # a broken command line in the agent's settings: still nothing to the model
            os._exit(0)
    return cmd_hook(args, stdin)


def _data_dir(arg: Path | None) -> Path:
    from desktop.data_location import default_data_dir

    return Path(arg).expanduser() if arg else default_data_dir()


def cmd_hook(args: argparse.Namespace | SimpleNamespace, stdin: bytes | None = None) -> int:
    """Never fails: prints the agent's JSON or nothing, exits 0 (even on a hard timeout).

    ``stdin``: the payload when already read (``engram hook`` reads it before trying the service).
    """
    from desktop.agents.hooks.client import read_stdin, silence_stderr

    code = 0
    silence_stderr()  # diagnostics go to hooks.log (redacted); stderr stays empty whatever happens
    try:
        from desktop.agents.hooks.runner import run, setup_logging

        data_dir = _data_dir(args.data_dir)
        setup_logging(data_dir)
        tokens = args.tokens  # None: the settings' budget, read where the hook is answered
        if stdin is None:
            stdin = read_stdin()
        out = run(args.agent, args.event, stdin, data_dir, token_budget=tokens, budget_s=args.budget)
        if out:
            sys.stdout.write(out + "\n")
        sys.stdout.flush()
    except BaseException:
        code = 0
    # Threads still running past the budget (a locked database) must not hold the agent up.
    os._exit(code)


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve until idle."""
    from desktop.agents.hooks.runner import setup_logging
    from desktop.agents.hooks.service import HookService

    data_dir = _data_dir(args.data_dir)
    setup_logging(data_dir)
    HookService(data_dir, idle=args.idle, warm_search=not args.no_warm_search).serve()
    return 0


def cmd_hooks(args: argparse.Namespace) -> int:
    """Install, uninstall or report the hooks of one agent or of every agent."""
    from desktop.agents.hooks import install as hk
    from desktop.cli.common import CliError, emit

    project = (args.project or Path.cwd()).resolve()
    home = Path.home()
    if args.agent != "all":
        agents = [args.agent]
    elif args.action == "install":
        agents = hk.detected_agents()
        if not agents:
            raise CliError("No Claude Code, Codex or Gemini CLI found on PATH; name one with --agent.")
    else:
        agents = list(AGENT_CHOICES)
    if args.action == "status":
        states = [hk.status(a, args.scope, project, home, args.data_dir) for a in agents]
        emit(args, [s.__dict__ | {"installed": s.installed} for s in states], lambda: "\n".join(
            f"{s.agent:<12} {s.scope:<8} {'installed' if s.installed else ('partial' if s.events else 'not installed')}"
            f"{' (out of date: ' + ', '.join(s.stale) + ')' if s.stale else ''}"
            f"{' [hooks are turned off in Codex config.toml]' if s.feature == 'off' else ''}  {s.path}"
            for s in states))
        return 0
    if args.action == "install":
        if args.scope == "project":
            _ensure_project(project, args.data_dir)
        done = [(a, *hk.install(a, args.scope, project, home, args.data_dir)) for a in agents]
        verb = "installed in"
    else:
        done = [(a, *hk.uninstall(a, args.scope, project, home)) for a in agents]
        verb = "removed from"
    emit(args, [{"agent": a, "path": str(p), "changed": c} for a, p, c in done], lambda: "\n".join(
        f"{a}: hooks {verb} {p}" if c else f"{a}: nothing to change in {p}" for a, p, c in done))
    return 0


def _ensure_project(project: Path, data_dir: Path | None) -> None:
    """Hooks only act in folders Engram knows: installing for a project creates its memory."""
    from desktop.composition import Engram

    Engram.for_data_dir(data_dir).open_project(project, remember=True).close()
