"""Entry point of the `engram` command."""

from __future__ import annotations

import sys

from desktop import __version__

# `engram hook` runs on every agent event and imports as little as it can (agents/hooks/client.py):
# argparse and logging are imported where used, and typing not at all (mypy reads a module-level
# TYPE_CHECKING as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

def build_parser(*, core_only: bool = False) -> argparse.ArgumentParser:
    """The full argument parser (``core_only``: only the memory commands: add, list, get, ...).

    Command modules are imported here, not at the top: `engram hook` (run by agents on
    every event) never loads them, and `engram list` loads only the memory commands.
    """
    import argparse

    from desktop.cli import memory_cmds

    parser = argparse.ArgumentParser(prog="engram", description="Long-term memory of a codebase for AI agents.")
    parser.add_argument("--version", action="version", version=f"engram {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    sub = parser.add_subparsers(dest="command", required=True)
    memory_cmds.register(sub)
    if core_only:
        return parser
    from desktop.cli import (
        agent_cmds,
        doctor_cmds,
        feedback_cmds,
        graph_cmds,
        hook_cmds,
        lifecycle_cmds,
        observer_cmds,
        preference_cmds,
        report_cmds,
        search_cmds,
        setup_cmds,
        team_cmds,
    )

    for module in (search_cmds, graph_cmds, observer_cmds, lifecycle_cmds, preference_cmds, agent_cmds,
                   doctor_cmds, hook_cmds, team_cmds, feedback_cmds, report_cmds, setup_cmds):
        module.register(sub)
    return parser


def parser_for(args: Sequence[str]) -> argparse.ArgumentParser:
    """The core commands' parser when ``args`` run one of them, else the full parser.

    Building all ~40 subcommand parsers (argparse looks up translations for each) and importing
    every command module is a third of a cold ``engram list``; list/get/add/... need none of it.
    """
    import argparse

    command = next((a for a in args if not a.startswith("-")), None)
    core = build_parser(core_only=True)
    subs = next(a for a in core._actions if isinstance(a, argparse._SubParsersAction))
    return core if command in subs.choices else build_parser()


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; known failures print one line and exit non-zero."""
    args_in = list(sys.argv[1:] if argv is None else argv)
    if args_in[:1] == ["hook"]:
        return run_hook(args_in[1:])
    if args_in[:1] == ["mcp"] and not {"--print-config", "-h", "--help"} & set(args_in):
        # An MCP client waits for the handshake: answer it before anything heavy is imported.
        from desktop.agents.mcp_front import main as serve_mcp

        return serve_mcp(args_in[1:])
    import logging

    from desktop.cli.common import CliError
    from desktop.cli.errors import known_error_line

    log = logging.getLogger("engram.cli")

    parser = parser_for(args_in)
    args = parser.parse_args(args_in)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        return int(args.func(args) or 0)
    except CliError as exc:
        sys.stderr.write(f"engram: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("engram: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        # EngramError, EmbeddingError, ...: one line, never a traceback (desktop/cli/errors.py words
        # them). Anything it does not know is a bug and keeps its traceback.
        line = known_error_line(exc)
        if line is None:
            raise
        log.debug("known error", exc_info=True)
        sys.stderr.write(f"engram: {line}\n")
        return 2


def run_hook(argv: list[str], *, site_missing: bool = False) -> int:
    """``engram hook``: an agent runs it on every event, tool calls included.

    A warm service answers through the lean client (nothing else imported); otherwise the
    full runner answers with the payload already read. Never writes to stderr, exits 0.
    ``site_missing``: the interpreter started without ``site`` (the installed hook command,
    ``engram_hook.py``), which the full runner's dependencies need.
    """
    import os

    from desktop.agents.hooks.client import quick_hook, read_stdin, silence_stderr

    silence_stderr()
    stdin = b""
    try:
        stdin = read_stdin()
        if quick_hook(argv, stdin):
            os._exit(0)  # nothing left to wait for; skip the interpreter's shutdown
    except Exception:  # the full runner below answers (or stays silent) whatever happened here
        pass
    if site_missing:
        import site

        site.main()  # the venv's packages, after Engram's own folder (already first)
    from desktop.cli import hook_cmds

    return hook_cmds.run_hook_command(argv, stdin)


if __name__ == "__main__":
    sys.exit(main())
