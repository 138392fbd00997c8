"""`engram add | list | get | forget | pin | import | export`."""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path
from typing import Any

from desktop.cli.common import (
    CliError,
    add_common,
    emit,
    memory_json,
    memory_line,
    open_project,
    sql_int,
    terminal_safe,
)
from desktop.memory.lifecycle.format_names import EXPORT_FORMATS, IMPORT_FORMATS
from desktop.memory.store.rows import MemoryQuery
from desktop.memory.types import MemoryScope, MemoryType


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the memory subcommands to the parser."""
    p = sub.add_parser("add", help="add a memory")
    add_common(p)
    p.add_argument("text")
    p.add_argument("--type", default=MemoryType.NOTE.value,
                   choices=[t.value for t in MemoryType if t is not MemoryType.CODE])
    p.add_argument("--scope", default=MemoryScope.GLOBAL.value, choices=[s.value for s in MemoryScope])
    p.add_argument("--file", action="append", default=[], help="a related file (repeatable)")
    p.add_argument("--tag", action="append", default=[])
    p.add_argument("--pin", action="store_true")
    p.set_defaults(func=cmd_add)

    p = sub.add_parser("list", help="list memories (the code index only with --type code)")
    add_common(p)
    p.add_argument("--type", action="append", default=[],
                   help="only this type (repeatable); 'code' lists the code index, which is not memories")
    p.add_argument("--scope", action="append", default=[])
    p.add_argument("--source", action="append", default=[])
    p.add_argument("--status", action="append", default=[])
    p.add_argument("--file", action="append", default=[])
    p.add_argument("--text", default=None)
    p.add_argument("--limit", type=sql_int, default=50)
    p.add_argument("--offset", type=sql_int, default=0)
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("get", help="show one memory with its history")
    add_common(p)
    p.add_argument("id", type=sql_int)
    p.set_defaults(func=cmd_get)

    p = sub.add_parser("forget", help="forget a memory (--hard deletes it for good)")
    add_common(p)
    p.add_argument("id", type=sql_int)
    p.add_argument("--hard", action="store_true", help="emergency delete: no trace left")
    p.add_argument("--leaked", action="append", default=[], metavar="TEXT",
                   help="with --hard: also erase TEXT from every memory, history entry and side table")
    p.add_argument("--reason", default=None)
    p.set_defaults(func=cmd_forget)

    p = sub.add_parser("pin", help="pin a memory (--off to unpin)")
    add_common(p)
    p.add_argument("id", type=sql_int)
    p.add_argument("--off", action="store_true")
    p.set_defaults(func=cmd_pin)

    p = sub.add_parser("import", help="import memories: Engram JSON/JSONL/Markdown, CLAUDE.md, AGENTS.md, "
                                      "Claude Code MEMORY.md, Cline memory-bank/, Cursor rules, Copilot")
    add_common(p)
    p.add_argument("file", type=Path, help="a file, or a folder (memory-bank/, .cursor/rules/)")
    p.add_argument("--format", default=None, choices=list(IMPORT_FORMATS),
                   help="default: guessed from the name")
    p.add_argument("--trusted", action="store_true",
                   help="JSON export only: this is your own backup; keep its pinned/verified flags, sources "
                        "and confidences (otherwise imports are 'imported' memories at import confidence)")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("export", help="export memories")
    add_common(p)
    p.add_argument("--format", default="json", choices=list(EXPORT_FORMATS))
    p.add_argument("--output", "-o", type=Path, default=None,
                   help="file to write (claude-md/agents-md: only Engram's block in it is replaced)")
    p.add_argument("--limit", type=sql_int, default=200, help="claude-md/agents-md: at most this many memories")
    p.set_defaults(func=cmd_export)


def cmd_add(args: argparse.Namespace) -> int:
    """engram add."""
    with open_project(args) as project:
        result = project.teach(args.text, type=args.type, scope=args.scope, related_files=args.file,
                               tags=args.tag, pinned=args.pin, actor="cli").result()
        memory = project.memories.get(result.id)
    emit(args, memory_json(memory, created=result.created),
         f"{'Added' if result.created else 'Already known, reinforced'} memory #{result.id}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """engram list."""
    query = MemoryQuery(types=args.type, scopes=args.scope, sources=args.source, statuses=args.status,
                        files=args.file, text=args.text)
    with open_project(args, read_only=True) as project:
        items = project.memories.list(query, limit=args.limit, offset=args.offset)
        total = project.memories.count(query)
    what = "code chunks" if MemoryType.CODE.value in args.type else "memories"
    emit(args, {"total": total, "memories": [memory_json(m) for m in items]},
         lambda: "\n".join([memory_line(m) for m in items] + [f"({len(items)} of {total} {what})"]))
    return 0


def cmd_get(args: argparse.Namespace) -> int:
    """engram get."""
    # Here, not at the top: the record's writer loads the import/export machinery, which every
    # `engram list` would pay for (issue 16's 250 ms).
    from desktop.memory.evidence_view import evidence_json
    from desktop.memory.lifecycle.portable import memory_to_record

    with open_project(args, read_only=True) as project:
        memory = project.memories.get(args.id)
        history = project.memories.history(args.id)
        evidence = project.memories.evidence(args.id)
    record = memory_to_record(memory)
    record["history"] = history
    record["evidence"] = evidence_json(evidence)
    emit(args, record, lambda: memory_page(record))
    return 0


def memory_page(record: dict[str, Any]) -> str:
    """``engram get`` for a person: the text, what it is, where it came from, what happened to it."""
    status = "candidate" if record.get("candidate") else "forgotten" if record.get("deprecated") else "active"
    if record.get("stale_at"):
        status += ", stale"
    if record.get("needs_review"):
        status += ", needs review"
    lines = [f"#{record['id']} {record['type']} · {status} · confidence {record['confidence']:.2f}"
             + (" · pinned" if record.get("pinned") else ""), "", record["content"], ""]
    if record.get("related_files"):
        lines.append("files: " + ", ".join(record["related_files"]))
    lines.append(f"source: {record['source']}")
    if record["evidence"]:
        lines += ["", f"evidence ({len(record['evidence'])} session(s)):"]
        for ev in record["evidence"]:
            head = " · ".join(x for x in (ev["session_id"], ev["agent"], ev["signal"],
                                          f"{ev['events']} event(s)" if ev["events"] else "") if x)
            lines.append(f"  {head}")
            lines += [f"    “{x}”" for x in ev["excerpts"]]
    if record["history"]:
        lines += ["", "history:"]
        for h in record["history"]:
            reason = f" — {h['reason']}" if h.get("reason") else ""
            lines.append(f"  {str(h['at'])[:19].replace('T', ' ')} {h['action']} by {h['actor']}{reason}")
    return "\n".join(lines)


def cmd_forget(args: argparse.Namespace) -> int:
    """engram forget [--hard]."""
    with open_project(args) as project:
        if args.hard:
            from desktop.memory.lifecycle.emergency import emergency_delete

            reason = args.reason or "emergency delete from CLI"
            if args.leaked:
                from desktop.memory.lifecycle.leak import erase_text

                # First the leaked text everywhere (the memory itself may quote it), then the memory.
                erase_text(project, list(args.leaked), actor="cli", reason=reason)
                if not project.memories.get_many([args.id]):
                    emit(args, {"id": args.id, "hard": True}, f"Deleted for good memory #{args.id}")
                    return 0
            emergency_delete(project, [args.id], reason=reason)
            word = "Deleted for good"
        else:
            project.memories.forget(args.id, reason=args.reason, actor="cli").result()
            word = "Forgot"
    emit(args, {"id": args.id, "hard": args.hard}, f"{word} memory #{args.id}")
    return 0


def cmd_pin(args: argparse.Namespace) -> int:
    """engram pin."""
    with open_project(args) as project:
        project.memories.pin(args.id, not args.off, actor="cli").result()
    emit(args, {"id": args.id, "pinned": not args.off}, f"{'Unpinned' if args.off else 'Pinned'} #{args.id}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """engram import FILE [--format ...]."""
    if not args.file.exists():
        raise CliError(f"no such file: {args.file}")
    with open_project(args) as project:
        report = project.import_file(args.file, args.format, trusted=args.trusted)
    data = {"added": report.added, "unchanged": report.unchanged, "ids": report.ids,
            "rejected": [{"line": n, "reason": r} for n, r in report.rejected]}
    emit(args, data, f"Imported {report.added} new, {report.unchanged} already known, "
                     f"{len(report.rejected)} rejected")
    if report.rejected:
        n, reason = report.rejected[0]
        raise CliError(f"{len(report.rejected)} line(s) rejected; line {n}: {reason}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """engram export [--format json|markdown|claude-md|agents-md] [-o FILE]."""
    try:
        return _export(args)
    except BrokenPipeError:
        raise  # a closed pipe (| head) is not an error; main() ends quietly
    except OSError as exc:  # a folder that does not exist, a read-only place: one line, nothing half-done
        raise CliError(f"cannot write {args.output}: {exc.strerror or exc}") from exc


def _export(args: argparse.Namespace) -> int:
    with open_project(args) as project:
        if args.output is not None:
            result = project.export(args.format, args.output, limit=args.limit)
        elif args.format != "json" and sys.stdout.isatty():
            # On a terminal, control characters are shown, not obeyed; a pipe gets the bytes as they are.
            buffer = io.StringIO()
            result = project.export(args.format, buffer, limit=args.limit)
            sys.stdout.write(terminal_safe(buffer.getvalue()))
        else:
            result = project.export(args.format, sys.stdout, limit=args.limit)
    if args.output is None:
        return 0
    if args.format in ("claude-md", "agents-md"):
        sys.stderr.write(f"{'Updated' if result.changed else 'Unchanged'}: Engram block in {args.output}\n")
    else:
        sys.stderr.write(f"Exported {result.count} memories to {args.output}\n")
    return 0
