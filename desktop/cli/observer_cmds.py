"""`engram ingest` and `engram prefetch`: learn from agent transcripts, rank files to read first."""

from __future__ import annotations

import argparse
from pathlib import Path

from desktop.cli.common import CliError, add_common, emit, open_project
from desktop.composition import observer_for

# The core reports codes; the command line words them.
_INGEST_ERRORS = {
    "no_agent_records": "nothing to learn: no Claude Code, Codex or Gemini CLI records in this file",
    "file_unreadable": "cannot be read (permissions, a folder, or an I/O error)",
    "file_vanished": "disappeared before it could be read",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the observer subcommands to the parser."""
    p = sub.add_parser("ingest", help="learn from agent transcripts (Claude Code, Codex, Gemini CLI)")
    add_common(p)
    p.add_argument("files", nargs="*", type=Path,
                   help="transcript files (default: every transcript of the project found on disk)")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("prefetch", help="rank the files a new session on PROMPT should read first")
    add_common(p)
    p.add_argument("prompt")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--include-missing", action="store_true",
                   help="also list files that are no longer in the project folder")
    p.set_defaults(func=cmd_prefetch)


def cmd_ingest(args: argparse.Namespace) -> int:
    """Import transcripts once each; re-running never duplicates anything."""
    with open_project(args) as project:
        ingestor = observer_for(project)
        if args.files:
            missing = [str(f) for f in args.files if not f.exists()]
            if missing:
                raise CliError(f"not found: {', '.join(missing)}")
            reports = [ingestor.ingest_file(f) for f in args.files]
        else:
            reports = ingestor.ingest_project()
    data = [r.as_dict() for r in reports]

    def human() -> str:
        if not reports:
            return "No transcripts found for this project."
        lines = []
        for r in reports:
            detail = (f"{r.sessions} sessions, {r.new_events}/{r.events} new events, "
                      f"{r.added} memories added, {r.reinforced} reinforced") if r.status == "imported" else \
                _INGEST_ERRORS.get(r.error or "", r.error or "")
            if r.status == "empty" and r.skipped_records:
                detail += " (" + ", ".join(f"{n} {why.replace('_', ' ')}" for why, n in
                                           sorted(r.skipped_records.items())) + ")"
            lines.append(f"{r.status:<9} {r.path}  {detail}".rstrip())
        return "\n".join(lines)
    emit(args, data, human)
    return 1 if any(r.status == "failed" for r in reports) else 0


def cmd_prefetch(args: argparse.Namespace) -> int:
    """Print the ranked files (best first)."""
    if args.limit < 1:
        raise CliError("--limit must be at least 1")
    with open_project(args) as project:
        # A file deleted outside any observed session (in an editor, by git checkout) is still
        # in the learned history; a session cannot read it, so it is left out unless asked for.
        missing_under = None if args.include_missing else str(project.info.root)
        from desktop.memory.observer.prefetch import prefetch_plan

        items = prefetch_plan(project.db.reads.conn(), args.prompt, args.limit, exclude_missing_under=missing_under)
    data = [{"file": i.file, "score": i.score, "parts": i.parts} for i in items]

    def human() -> str:
        if not items:
            return "Nothing learned yet for this project (run `engram ingest` first)."
        return "\n".join(f"{n:>2}. {i.file}  ({i.score:.3f})" for n, i in enumerate(items, 1))
    emit(args, data, human)
    return 0
