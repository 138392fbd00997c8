"""`engram report`: did Engram's warnings help, from the product's own records (issue 25).

For each warning said at a tool call (before it, or right after a check passed): did the warned
failure happen anyway later in that session? Counts with their sample sizes and a 95 % interval;
nothing estimated, and no claim beyond what the records show (there is no comparison group of
unwarned sessions).
"""

from __future__ import annotations

import argparse

from desktop.cli.common import add_common, emit, open_project
from desktop.cli.doctor_cmds import AGENT_NAMES
from desktop.memory.triggers.warn import OutcomeReport, outcome_report


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``engram report``."""
    p = sub.add_parser("report", help="what Engram's warnings did: warned, avoided, repeated, declined "
                                      "(with sample sizes)")
    add_common(p)
    p.add_argument("--limit", type=int, default=10, help="memories listed, most warned first")
    p.set_defaults(func=cmd_report)


def _words(r: OutcomeReport, contents: dict[int, str]) -> str:
    if not r.warned:
        return "No warning has been said at a tool call yet."
    sessions = f"{r.sessions} session{'s' if r.sessions != 1 else ''}"
    lines = [f"Warnings said at a tool call (before it, or after a check passed): {r.warned} in {sessions}.",
             f"  avoided (what it warned of did not happen later in that session): {r.avoided}",
             f"  repeated (it happened anyway, later in the session: the failure again, or the user asking "
             f"for what the habit said): {r.repeated}",
             f"  open (the session has not ended): {r.open}"]
    if r.declined:
        lines.insert(3, f"  declined (the user would not let run the command it recommended): {r.declined}")
    if r.decided:
        low, high = r.avoided_interval()
        lines.append(f"Avoided: {r.avoided} of {r.decided} decided warnings ({r.avoided / r.decided:.0%}; "
                     f"95% interval {low:.0%}-{high:.0%}). No comparison group: this says what followed each "
                     f"warning, not what would have happened without it.")
    if r.by_agent:
        lines.append("  by agent: " + "; ".join(
            f"{AGENT_NAMES.get(a, a)} warned {n}, avoided {av}, repeated {rep}" for a, n, av, rep in r.by_agent))
    lines.append("Most warned memories:")
    for mid, n, avoided, repeated in r.by_memory:
        text = " ".join(contents.get(mid, "").split())
        lines.append(f"  #{mid:<6} warned {n}, avoided {avoided}, repeated {repeated}  {text[:90]}")
    return "\n".join(lines)


def cmd_report(args: argparse.Namespace) -> int:
    """Print the outcome counts."""
    with open_project(args, read_only=True) as project:
        report = outcome_report(project.db.reads.conn(), limit=max(1, args.limit))
        found = project.memories.get_many([m for m, *_ in report.by_memory])
        contents = {i: m.content for i, m in found.items()}
    low, high = report.avoided_interval()
    data = {"warned": report.warned, "avoided": report.avoided, "repeated": report.repeated, "open": report.open,
            "declined": report.declined,
            "sessions": report.sessions, "decided": report.decided,
            "avoided_interval_95": [round(low, 4), round(high, 4)] if report.decided else None,
            "agents": [{"agent": a, "warned": n, "avoided": av, "repeated": rep} for a, n, av, rep in report.by_agent],
            "memories": [{"id": m, "warned": n, "avoided": a, "repeated": r, "content": contents.get(m, "")}
                         for m, n, a, r in report.by_memory]}
    emit(args, data, lambda: _words(report, contents))
    return 0
