"""`engram ingest` and `engram prefetch`: learn from agent transcripts, rank files to read first."""

from __future__ import annotations

import argparse
from pathlib import Path

from desktop.cli.common import CliError, add_common, emit, open_project, sql_int

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
                   help="transcript files or folders of them (default: every transcript of the project found on disk)")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("prefetch", help="rank the files a new session on PROMPT should read first")
    add_common(p)
    p.add_argument("prompt")
    p.add_argument("--limit", type=sql_int, default=10)
    p.add_argument("--include-missing", action="store_true",
                   help="also list files that are no longer in the project folder")
    p.add_argument("--history-only", action="store_true",
                   help="rank from the learned history alone (ignore the slash command's text, git state"
                        " and handoff/progress files)")
    p.set_defaults(func=cmd_prefetch)

    p = sub.add_parser("consolidate", help="with the chat model chosen in Settings, merge what recent sessions"
                                           " showed into a few candidate memories now (it also runs every"
                                           " ten sessions)")
    add_common(p)
    p.set_defaults(func=cmd_consolidate)


def cmd_ingest(args: argparse.Namespace) -> int:
    """Import transcripts once each; re-running never duplicates anything."""
    with open_project(args) as project:
        ingestor = project.observer
        if args.files:
            missing = [str(f) for f in args.files if not f.exists()]
            if missing:
                raise CliError(f"not found: {', '.join(missing)}")
            from desktop.memory.observer.discover import expand_transcript_paths

            files = expand_transcript_paths(args.files)
            if not files:
                raise CliError(f"no transcript files (*.jsonl, session-*.json) in: {', '.join(map(str, args.files))}")
            reports = [ingestor.ingest_file(f) for f in files]
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
        from desktop.memory.observer.start_context import start_context

        # What the session start knows besides history: the command's expansion, git, handoff notes.
        context = None if args.history_only else start_context(args.prompt, Path(project.info.root),
                                                               home=Path.home())
        items = prefetch_plan(project.db.reads.conn(), args.prompt, args.limit, exclude_missing_under=missing_under,
                              context=context)
    data = [{"file": i.file, "score": i.score, "parts": {k: v for k, v in i.parts.items() if v}} for i in items]

    def human() -> str:
        if not items:
            return "Nothing learned yet for this project (run `engram ingest` first)."
        return "\n".join(f"{n:>2}. {i.file}  ({i.score:.3f})" for n, i in enumerate(items, 1))
    emit(args, data, human)
    return 0


# Why a synthesis pass learned nothing, in words (the core reports codes).
_SYNTHESIS_STATUS = {
    "written": "memories written as candidates",
    "none": "the model proposed nothing that the sessions show",
    "empty": "no session evidence yet (sessions are recorded once a model is configured)",
    "malformed": "the model's reply was not JSON; nothing learned",
    "off_schema": "the model's reply did not follow the memory schema; nothing learned",
    "failed": "the model could not be reached or timed out; nothing learned",
    "off": "automatic memory is off for this project",
}


def cmd_consolidate(args: argparse.Namespace) -> int:
    """Run the model's consolidation pass over the recent sessions' evidence."""
    with open_project(args) as project:
        synthesizer = project.observer.synthesizer
        if synthesizer is None or not synthesizer.available():
            raise CliError("no model is configured for memory: choose one in Settings (an agent CLI you are "
                           "logged into, Ollama, OpenAI-compatible or Anthropic)")
        report = synthesizer.consolidate()
    data = {"status": report.status, "memory_ids": report.memory_ids, "proposed": report.proposed,
            "dropped": [{"content": c, "reason": r} for c, r in report.dropped], "error": report.error}

    def human() -> str:
        lines = [f"{report.status}: {_SYNTHESIS_STATUS.get(report.status, report.status)}"
                 + (f" ({', '.join(f'#{i}' for i in report.memory_ids)})" if report.memory_ids else "")]
        lines += [f"  dropped: {c[:70]} — {r}" for c, r in report.dropped]
        return "\n".join(lines)
    emit(args, data, human)
    return 0 if report.status in ("written", "none", "empty") else 1
