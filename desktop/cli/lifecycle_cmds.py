"""`engram prune | audit | delete-all | auto-memory | check-stale`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from desktop.cli.common import CliError, add_common, emit, open_project, sql_int


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the lifecycle subcommands to the parser."""
    p = sub.add_parser("prune", help="run the decay/TTL/soft-limit/grace pruning pass now")
    add_common(p)
    p.add_argument("--dry-run", action="store_true", help="only report what would change")
    p.add_argument("--soft-limit", type=sql_int, default=None, help="override the soft limit for this pass")
    p.set_defaults(func=cmd_prune)

    p = sub.add_parser("audit", help="show or export the audit log")
    add_common(p)
    p.add_argument("--limit", type=sql_int, default=50)
    p.add_argument("--action", action="append", default=[], help="only these actions (repeatable)")
    p.add_argument("--actor", action="append", default=[], help="only these actors, e.g. engram")
    p.add_argument("--memory", type=sql_int, default=None, help="only entries of this memory")
    p.add_argument("--export", type=Path, default=None, metavar="FILE",
                   help="write every matching entry to FILE (.csv for CSV, else JSON Lines)")
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser("delete-all", help="delete every memory of the project for good")
    add_common(p)
    p.add_argument("--yes", action="store_true", help="confirm; nothing is deleted without it")
    p.set_defaults(func=cmd_delete_all)

    p = sub.add_parser("auto-memory", help="turn automatic memory creation on or off for the project")
    add_common(p)
    p.add_argument("state", nargs="?", choices=["on", "off"], help="omit to show the current state")
    p.set_defaults(func=cmd_auto_memory)

    p = sub.add_parser("check-stale", help="compare memories anchored to code with the working tree")
    add_common(p)
    p.add_argument("--dry-run", action="store_true")
    p.set_defaults(func=cmd_check_stale)


def cmd_prune(args: argparse.Namespace) -> int:
    """engram prune [--dry-run] [--json]."""
    from desktop.memory.lifecycle.pruning import PruneOp, config_from_meta

    with open_project(args) as project:
        cfg = config_from_meta(project.db)
        if args.soft_limit is not None:
            cfg.soft_limit = max(1, args.soft_limit)
        report = project.db.writer.run(PruneOp(cfg, dry_run=args.dry_run), 600)

    def human() -> str:
        verb = "Would change" if report.dry_run else "Changed"
        lines = [f"{verb}: {report.decayed} decayed, {report.expired} expired (TTL), "
                 f"{report.quarantine_expired} unused candidates, {report.evicted} evicted (soft limit), "
                 f"{report.hard_deleted} hard-deleted after the grace period.",
                 f"Live memories: {report.live_before} -> {report.live_after} ({report.seconds:.2f}s)"]
        lines += [f"  #{s['id']:<6} {s['action']:<6} {s['reason']}" for s in report.sample[:10]]
        return "\n".join(lines)
    emit(args, report.as_dict(), human)
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    """engram audit [--limit N] [--json] [--export FILE]."""
    from desktop.memory.lifecycle.audit import AuditFilter, export_audit_file, read_audit

    flt = AuditFilter(actions=args.action, actors=args.actor, memory_id=args.memory)
    with open_project(args) as project:
        if args.export:
            n = export_audit_file(project.db, args.export, flt)
            emit(args, {"exported": n, "file": str(args.export)}, f"Exported {n} audit entries to {args.export}")
            return 0
        entries = read_audit(project.db, flt, limit=args.limit)

    def human() -> str:
        rows = []
        for e in entries:
            target = f"#{e['memory_id']}" if e["memory_id"] is not None else "-"
            rows.append(f"{e['at'][:19]}  {e['actor']:<8} {e['action']:<14} {target:<7} {e['reason'] or ''}")
        return "\n".join(rows) or "(the audit log is empty)"
    emit(args, entries, human)
    return 0


def cmd_delete_all(args: argparse.Namespace) -> int:
    """engram delete-all --yes."""
    if not args.yes:
        raise CliError("this deletes every memory of the project for good; add --yes to confirm")
    with open_project(args) as project:
        n = project.delete_all(actor="cli", reason="delete all from the command line")
    emit(args, {"deleted": n}, f"Deleted {n} memories for good")
    return 0


def cmd_auto_memory(args: argparse.Namespace) -> int:
    """engram auto-memory [on|off]."""
    with open_project(args) as project:
        if args.state:
            project.preferences.set(auto_memory=args.state == "on", actor="cli")
        enabled = project.preferences.auto_memory()
    emit(args, {"auto_memory": "on" if enabled else "off"},
         f"Automatic memory creation is {'on' if enabled else 'off'}")
    return 0


def cmd_check_stale(args: argparse.Namespace) -> int:
    """engram check-stale [--dry-run]."""
    from desktop.memory.lifecycle.maintenance import anchor_unanchored
    from desktop.memory.lifecycle.staleness import check_staleness

    with open_project(args) as project:
        if not args.dry_run:  # memories written before upkeep ran get their anchors now
            anchor_unanchored(project.db, project.info.root)
        rep = check_staleness(project.db, project.info.root, apply=not args.dry_run)
    data = {"checked": rep.checked, "files_hashed": rep.files_hashed, "changed": rep.changed,
            "stale": rep.stale, "git": rep.git}
    emit(args, data, lambda: f"{rep.checked} anchored memories: {len(rep.changed)} changed (need review), "
                             f"{len(rep.stale)} stale (code deleted)\n" + "\n".join(
                                 json.dumps(c) for c in rep.changed[:20]))
    sys.stdout.flush()
    return 0
