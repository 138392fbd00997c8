"""`engram correct | flag | confirm | feedback`: the same core ops the app's buttons call."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from desktop.cli.common import add_common, emit, open_project
from desktop.memory.lifecycle.correction import KINDS


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the feedback subcommands."""
    p = sub.add_parser("correct", help="correct a memory (outdated, partially_wrong, does_not_apply, incorrect)")
    add_common(p)
    p.add_argument("id", type=int)
    p.add_argument("--kind", required=True, choices=KINDS)
    p.add_argument("--text", default="", help="the right text (required for partially_wrong and incorrect)")
    p.set_defaults(func=cmd_correct)

    p = sub.add_parser("flag", help="say a memory is wrong: less confidence, marked for review")
    add_common(p)
    p.add_argument("id", type=int)
    p.add_argument("--reason", default=None)
    p.set_defaults(func=cmd_flag)

    p = sub.add_parser("confirm", help="say a memory is right: more confidence, quarantine and review end")
    add_common(p)
    p.add_argument("id", type=int)
    p.set_defaults(func=cmd_confirm)

    p = sub.add_parser("feedback", help="record which memories an agent was shown and what it cited (hooks)")
    add_common(p)
    p.add_argument("--shown", type=int, nargs="*", default=[], help="ids given to the agent")
    p.add_argument("--answer-file", type=Path, default=None,
                   help="the agent's answer; its [Memory #id] citations count as cited ('-' reads stdin)")
    p.add_argument("--session", default=None)
    p.add_argument("--source", default="hook")
    p.set_defaults(func=cmd_feedback)


def cmd_correct(args: argparse.Namespace) -> int:
    """engram correct ID --kind K [--text T]."""
    with open_project(args) as project:
        kept = project.correct(args.id, args.kind, args.text, actor="cli").result(30)
    emit(args, {"id": args.id, "kind": args.kind, "current": kept},
         f"Memory #{args.id} corrected ({args.kind.replace('_', ' ')})"
         + (f"; the right text is memory #{kept}" if kept != args.id else ""))
    return 0


def cmd_flag(args: argparse.Namespace) -> int:
    """engram flag ID [--reason R]."""
    with open_project(args) as project:
        project.flag(args.id, reason=args.reason, actor="cli").result(30)
        m = project.memories.get(args.id)
    emit(args, {"id": m.id, "confidence": round(m.confidence, 4), "needs_review": m.needs_review},
         f"Memory #{m.id} flagged as wrong: confidence {m.confidence:.2f}, marked for review")
    return 0


def cmd_confirm(args: argparse.Namespace) -> int:
    """engram confirm ID."""
    with open_project(args) as project:
        project.confirm(args.id, actor="cli").result(30)
        m = project.memories.get(args.id)
    emit(args, {"id": m.id, "confidence": round(m.confidence, 4), "candidate": m.candidate},
         f"Memory #{m.id} confirmed: confidence {m.confidence:.2f}")
    return 0


def cmd_feedback(args: argparse.Namespace) -> int:
    """engram feedback --shown 1 2 [--answer-file F] [--session S]."""
    from desktop.memory.lifecycle.feedback import record_feedback

    answer = None
    if args.answer_file is not None:
        answer = sys.stdin.read() if str(args.answer_file) == "-" else args.answer_file.read_text(encoding="utf-8")
    with open_project(args) as project:
        rep = record_feedback(project.db, args.shown, answer_text=answer, session_id=args.session,
                              source=args.source).result(30)
    emit(args, {"used": rep.used, "outcomes": rep.outcomes},
         ", ".join(f"#{k} {v}" for k, v in sorted(rep.outcomes.items())) or "Nothing to record")
    return 0
