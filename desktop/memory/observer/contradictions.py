"""Lessons a later session proved wrong: "this command fails" when it then worked (issue 25/26).

A lesson that says a command of some shape fails here (a flag git does not take, a tool not on
the PATH) or is refused (a hook's rule) stays true only until that shape runs fine. Agents' tools
get installed, hooks get relaxed, a one-off install problem goes away; a warning about a command
that now works costs the agent's trust in every other warning. So each finished session's
successful commands are matched against those lessons' triggers, and a lesson one of them
contradicts is retired (audited, with the command that worked), unless a person confirmed or
pinned it, in which case it is marked for their review instead.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from desktop.memory.observer.signals import COMMAND_FIX, HOOK_BLOCK
from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.store.writer import Tx
from desktop.memory.triggers.index import candidates
from desktop.memory.triggers.model import COMMAND, matches, shape_of

log = logging.getLogger("engram.observer")

#: Lessons whose claim is "a call of this shape fails / is refused".
FAILS_SIGNALS: Final = frozenset({COMMAND_FIX, HOOK_BLOCK})
MAX_SUCCEEDED: Final = 400


@dataclass(frozen=True)
class Contradiction:
    """A lesson and the command of this session that ran fine although the lesson says it fails."""

    memory_id: int
    command: str
    person_kept: bool


def contradicted(conn: Any, session_id: str, commands: list[str], root: Path | None = None) -> list[Contradiction]:
    """The live "this fails" lessons that a successful command of this session contradicts."""
    found: dict[int, Contradiction] = {}
    for command in commands[:MAX_SUCCEEDED]:
        shape = shape_of("Bash", {"command": command}, [])
        for armed in candidates(conn, shape):
            if armed.memory_id in found or armed.trigger.kind != COMMAND or not matches(armed.trigger, shape, root):
                continue
            row = conn.execute(
                "SELECT json_extract(metadata, '$.signal'), provenance_session_ids, user_verified, pinned "
                "FROM memories WHERE id = ?", (armed.memory_id,)).fetchall()
            if not row or row[0][0] not in FAILS_SIGNALS or session_id in str(row[0][1]):
                continue
            found[armed.memory_id] = Contradiction(armed.memory_id, command, bool(row[0][2] or row[0][3]))
    return list(found.values())


def retire(tx: Tx, session_id: str, items: list[Contradiction]) -> int:
    """Inside the session's promotion: retire (or, a person's, mark for review) each contradicted lesson."""
    for c in items:
        said = redact_then_cut(c.command, 300)  # redact first, then cut
        reason = f"`{redact_then_cut(said, 120)}` ran fine in session {session_id[:8]}"
        if c.person_kept:
            tx.audit("stale", c.memory_id, actor="observer", reason=reason, detail={"command": said})
            tx.execute("UPDATE memories SET needs_review = 1, updated_at = ? WHERE id = ?", (tx.now, c.memory_id))
        else:
            tx.audit("deprecate", c.memory_id, actor="observer", reason=reason, detail={"command": said})
            tx.execute("UPDATE memories SET deprecated = 1, deprecated_at = ?, deprecated_reason = ?, updated_at = ? "
                       "WHERE id = ? AND deprecated = 0", (tx.now, reason, tx.now, c.memory_id))
        tx.changed("memory", "updated", [c.memory_id])
    if items:
        log.info("session %s contradicted %d lesson(s)", session_id, len(items))
    return len(items)
