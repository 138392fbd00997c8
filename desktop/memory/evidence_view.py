"""What a learned memory was learned from, session by session, for the people who check it.

A memory the observer learned keeps two records of its evidence: ``provenance`` on the
memory (per session: agent, signal, steps, short excerpts of what was seen) and the
``memory_evidence`` links to the transcript events themselves (``0012_memory_evidence``).
This module joins them into one list the memory browser, ``engram get`` and any other door
show the same way: the user checks a candidate against what it came from before confirming it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["SessionContribution", "evidence_json", "evidence_of"]


@dataclass(frozen=True)
class SessionContribution:
    """One session's contribution to a memory."""

    session_id: str
    agent: str
    signal: str
    """The kind of lesson (``user_rule``, ``command_fix``, ``recipe``, ``error_fix``, ...)."""
    events: int
    """How many transcript events of this session are linked to the memory."""
    excerpts: tuple[str, ...]
    """What was seen, shortened and redacted when it was recorded."""
    first_linked: str
    """When the first event of this session was linked (ISO time), or '' when none is."""


def evidence_of(conn: Any, memory_id: int, provenance: list[dict[str, Any]]) -> list[SessionContribution]:
    """Every session a memory was learned or reinforced from, oldest link first.

    ``conn`` is a read connection; ``provenance`` is the memory's own provenance list. Sessions
    that only appear in one of the two records are still listed (older memories have no event
    links; a link without provenance has no excerpt).
    """
    links: dict[str, tuple[int, str, str]] = {}
    for session_id, signal, count, first in conn.execute(
            "SELECT session_id, max(signal), count(*), min(added_at) FROM memory_evidence"
            " WHERE memory_id = ? GROUP BY session_id", (memory_id,)).fetchall():
        links[str(session_id)] = (int(count), str(signal or ""), str(first or ""))
    out: list[SessionContribution] = []
    seen: set[str] = set()
    for entry in provenance:
        if not isinstance(entry, dict) or not entry.get("session_id"):
            continue
        sid = str(entry["session_id"])
        if sid in seen:
            continue
        seen.add(sid)
        count, signal, first = links.get(sid, (0, "", ""))
        excerpts = tuple(str(e) for e in entry.get("evidence", []) if str(e).strip())[:3]
        out.append(SessionContribution(sid, str(entry.get("agent", "")), str(entry.get("signal") or signal),
                                   count, excerpts, first))
    for sid, (count, signal, first) in links.items():
        if sid not in seen:
            out.append(SessionContribution(sid, "", signal, count, (), first))
    return sorted(out, key=lambda e: (e.first_linked == "", e.first_linked))


def evidence_json(items: list[SessionContribution]) -> list[dict[str, Any]]:
    """The JSON form (``engram get --json``)."""
    return [{**asdict(e), "excerpts": list(e.excerpts)} for e in items]
