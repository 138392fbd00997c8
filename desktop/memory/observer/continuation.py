"""One session, one piece of evidence: recognise a transcript that continues another.

``claude --resume`` (and a fork, and a continued Codex thread) writes a new transcript
under a new session id that starts with a copy of the old session's messages. Counted
as a session of its own, every lesson of the copied part would be "seen in two
sessions" and promoted or reinforced on that alone (issue 26: 172 of 175 messages
shared reinforced three memories).

Each user message and tool call leaves a *print*: a hash of what identifies it in any
copy (a tool call's own id, which the agent's API made unique; otherwise its time and
text). A transcript whose prints are mostly known under another session is that
session continued: its copied part is skipped, and what is new is learned under the
first session's id (the *root*), exactly like a transcript that grew.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any, Final

from desktop.memory.observer.events import AgentEvent, ToolCall, UserMessage

#: A transcript is a continuation when this share of its prints (or this many) are another session's.
MIN_SHARE: Final = 0.5
MIN_SHARED: Final = 20
#: Fewer shared prints than this never make a continuation (two sessions may share a "yes").
MIN_EVIDENCE: Final = 3
#: Prints kept per session (a session's first user messages and tool calls identify it).
MAX_PRINTS: Final = 4000


def event_print(ev: AgentEvent) -> str | None:
    """The print of a user message or tool call (the same in every copy of it), or None."""
    if isinstance(ev, ToolCall):
        if len(ev.call_id) >= 12:  # toolu_..., call_...: unique ids made by the agent's API
            ident = f"c|{ev.call_id}"
        else:
            ident = f"c|{ev.timestamp:.3f}|{ev.tool}|{json.dumps(ev.args, sort_keys=True, default=str)[:300]}"
    elif isinstance(ev, UserMessage):
        ident = f"u|{ev.timestamp:.3f}|{' '.join(ev.text.split())[:300]}"
    else:
        return None
    return hashlib.sha1(ident.encode("utf-8", "surrogatepass")).hexdigest()[:20]


@dataclass
class Continuation:
    """How a transcript relates to what was learned before."""

    root: str
    """The session id its learning counts under (its own when it continues nothing)."""
    shared: int = 0
    """How many of its prints another session already had."""
    copied: frozenset[str] = frozenset()
    """Event keys of its copied part (skipped, but recorded as seen)."""


def known_root(conn: Any, session_id: str) -> str | None:
    """The root recorded for a session learned before as a continuation, or None."""
    row = conn.execute("SELECT root_id FROM observer_session_roots WHERE session_id = ?", (session_id,)).fetchall()
    return str(row[0][0]) if row else None


def _owners(conn: Any, prints: list[str], session_id: str) -> Counter[str]:
    """How many of ``prints`` each other session (by its root) already has."""
    owners: Counter[str] = Counter()
    for i in range(0, len(prints), 400):
        chunk = prints[i:i + 400]
        for (owner,) in conn.execute(
                f"SELECT coalesce(r.root_id, p.session_id) FROM observer_event_prints p"
                f" LEFT JOIN observer_session_roots r ON r.session_id = p.session_id"
                f" WHERE p.print IN ({','.join('?' * len(chunk))}) AND p.session_id <> ?", [*chunk, session_id]):
            owners[str(owner)] += 1
    owners.pop(session_id, None)
    return owners


def recognise(conn: Any, session_id: str, events: list[AgentEvent]) -> Continuation:
    """Is this session's transcript a continuation of one learned before? (reads only)"""
    root = known_root(conn, session_id)
    prints = {p: ev for ev in events if (p := event_print(ev))}
    if root is None:
        owners = _owners(conn, list(prints)[:MAX_PRINTS], session_id)
        if not owners:
            return Continuation(session_id)
        root, shared = owners.most_common(1)[0]
        if shared < MIN_EVIDENCE or (shared < MIN_SHARED and shared < MIN_SHARE * len(prints)):
            return Continuation(session_id)
    known = set(_known_prints(conn, list(prints), root))
    if not known:
        return Continuation(root, 0)
    # The copied part: everything up to the last event the root already had (a copy keeps times).
    last = max(float(getattr(ev, "timestamp", 0.0)) for p, ev in prints.items() if p in known)
    copied = frozenset(ev.event_key for ev in events
                       if ev.event_key and float(getattr(ev, "timestamp", last + 1)) <= last)
    return Continuation(root, len(known), copied)


def _known_prints(conn: Any, prints: list[str], root: str) -> list[str]:
    """Which of ``prints`` the root session (or another continuation of it) has."""
    out: list[str] = []
    for i in range(0, len(prints), 400):
        chunk = prints[i:i + 400]
        out.extend(str(r[0]) for r in conn.execute(
            f"SELECT p.print FROM observer_event_prints p LEFT JOIN observer_session_roots r"
            f" ON r.session_id = p.session_id WHERE p.print IN ({','.join('?' * len(chunk))})"
            f" AND coalesce(r.root_id, p.session_id) = ?", [*chunk, root]))
    return out


def as_root(events: list[AgentEvent], cont: Continuation) -> tuple[list[AgentEvent], list[str]]:
    """The events to learn (the new part, under the root's id) and the copied part's keys."""
    kept = [ev for ev in events if ev.event_key not in cont.copied]
    return [replace(ev, session_id=cont.root) for ev in kept], sorted(cont.copied)
