"""`engram doctor`: check a project's database and the installation, and move a damaged database aside when asked."""

from __future__ import annotations

import argparse
from pathlib import Path

from desktop.cli.common import CliError, add_common, emit, engram_from
from desktop.memory.diagnostics import InstallCheck, run_install_checks
from desktop.memory.projects import move_aside_corrupt
from desktop.memory.store.errors import CorruptDatabaseError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the doctor subcommand."""
    p = sub.add_parser("doctor", help="check the project's memory database and that the model, tokenizer, "
                                      "vector search and grammars load")
    add_common(p)
    p.add_argument("--move-aside", action="store_true",
                   help="if the database is damaged, keep it renamed (.corrupt-N) and start an empty one")
    p.add_argument("--redact", action="store_true",
                   help="pass every text already stored (any table) through the secret scanner again")
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
        if args.redact:
            from desktop.memory.lifecycle.leak import redact_existing

            rows = redact_existing(project, actor="cli")
            emit(args, {"ok": True, "redacted_rows": rows},
                 f"Redacted secrets in {sum(rows.values())} stored row(s)" + (
                     f": {', '.join(f'{t} {n}' for t, n in sorted(rows.items()))}" if rows else ""))
        counts = project.memories.counts()
    finally:
        project.close()
    checks = run_install_checks()
    ok = all(c.ok for c in checks)
    emit(args, {"ok": ok, "database": str(project.info.db_path), "memories": counts.memories,
                "needs_review": counts.needs_review, "code_chunks": counts.code_chunks,
                "checks": [{"name": c.name, "ok": c.ok, "detail": c.detail} for c in checks]},
         lambda: _human(f"{project.info.db_path} ({_n(counts.memories, 'memory', 'memories')}, "
                        f"{counts.needs_review} waiting for review; code index: "
                        f"{_n(counts.code_chunks, 'chunk', 'chunks')})", checks))
    return 0 if ok else 1


def _n(count: int, one: str, many: str) -> str:
    return f"{count:,} {one if count == 1 else many}"


_LABELS = {"tokenizer": "tokenizer", "embedding_model": "embedding model", "vec0": "vector search (vec0)",
           "grammars": "code grammars"}


def _human(database: str, checks: list[InstallCheck]) -> str:
    """One line per check, then a verdict a user can act on."""
    lines = [f"OK      database: {database}"]
    lines += [f"{'OK' if c.ok else 'FAILED':<7} {_LABELS.get(c.name, c.name)}: {c.detail}" for c in checks]
    if not all(c.ok for c in checks):
        lines.append("Engram is not installed completely: reinstall it (pip install --force-reinstall engram-desktop).")
    return "\n".join(lines)
