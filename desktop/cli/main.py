"""Entry point of the `engram` command."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from desktop import __version__
from desktop.cli import memory_cmds
from desktop.cli.common import CliError
from desktop.memory.store.errors import EngramError

log = logging.getLogger("engram.cli")

# Subcommand modules register themselves; later features add to this list.
COMMAND_MODULES = [memory_cmds]


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser."""
    parser = argparse.ArgumentParser(prog="engram", description="Long-term memory of a codebase for AI agents.")
    parser.add_argument("--version", action="version", version=f"engram {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMAND_MODULES:
        module.register(sub)
    for optional in ("search_cmds", "graph_cmds", "observer_cmds", "lifecycle_cmds", "agent_cmds", "doctor_cmds",
                     "feedback_cmds"):
        try:
            mod = __import__(f"desktop.cli.{optional}", fromlist=["register"])
        except ModuleNotFoundError as exc:
            if exc.name != f"desktop.cli.{optional}":
                raise
            continue
        mod.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; known failures print one line and exit non-zero."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        return int(args.func(args) or 0)
    except CliError as exc:
        sys.stderr.write(f"engram: {exc}\n")
        return exc.exit_code
    except EngramError as exc:
        from desktop.cli.words import word

        hint = (" Nothing was changed; `engram doctor --move-aside` keeps it renamed and starts an empty memory."
                if exc.code == "corrupt_database" else "")
        said = word(exc.code, str(exc))
        detail = f" ({exc})" if said != str(exc) and exc.code not in ("corrupt_database",) else ""
        sys.stderr.write(f"engram: {said}{detail}{hint}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("engram: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
