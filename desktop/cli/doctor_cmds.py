"""`engram doctor`: check a project's database, and move a damaged one aside when asked."""

from __future__ import annotations

import argparse
from pathlib import Path

from desktop.cli.common import CliError, add_common, emit, engram_from
from desktop.memory.projects import move_aside_corrupt
from desktop.memory.store.errors import CorruptDatabaseError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the doctor subcommand."""
    p = sub.add_parser("doctor", help="check the project's memory database")
    add_common(p)
    p.add_argument("--move-aside", action="store_true",
                   help="if the database is damaged, keep it renamed (.corrupt-N) and start an empty one")
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    """Open the project (integrity check, migrations) and report; never touches a damaged file unasked."""
    app = engram_from(args)
    folder = args.project or Path.cwd()
    try:
        project = app.open_project(folder, remember=False, maintain=False)
    except CorruptDatabaseError as exc:
        if not args.move_aside:
            raise CliError(f"{exc} Run `engram doctor --move-aside` to keep it renamed and start an "
                           "empty memory (nothing is deleted).", code=2) from exc
        moved = move_aside_corrupt(exc)
        project = app.open_project(folder, remember=False, maintain=False)
        try:
            emit(args, {"ok": True, "moved_aside": str(moved), "memories": 0},
                 f"The damaged database is kept as {moved}; this project now starts with an empty memory.")
        finally:
            project.close()
        return 0
    try:
        count = project.memories.count()
        emit(args, {"ok": True, "database": str(project.info.db_path), "memories": count},
             f"OK: {project.info.db_path} ({count} memories)")
    finally:
        project.close()
    return 0
