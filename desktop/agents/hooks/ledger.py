"""What each external agent session was told: the ``external_injections`` table.

Every memory a hook hands to Claude Code, Codex or Gemini CLI gets a row (session,
agent, event, memory, when, what triggered it). The rows serve three purposes: a
memory is never shown twice in one session, a compaction re-injects what the
session had been shown, and the app shows per session what the agent was told,
which memories it cited and which were flagged. Writes go through the writer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.store.writer import FnOp, Tx

ENGRAM_AGENT = "engram"
"""The ledger's agent name for Engram's own agent (its sessions have their own view in the app)."""


@dataclass(frozen=True)
class Shown:
    """One memory shown to one external session."""

    session_id: str
    agent: str
    event: str
    memory_id: int
    at: str
    detail: str
    cited: bool
    flagged: bool


@dataclass(frozen=True)
class ExternalSession:
    """Summary of one external session for the app's list."""

    session_id: str
    agent: str
    first_at: str
    last_at: str
    shown: int
    cited: int
    flagged: int


def record_shown(db: Any, session_id: str, agent: str, event: str, memory_ids: Iterable[int],
                 detail: str = "") -> Any:
    """Queue the rows for memories just shown; returns the writer future."""
    ids = list(dict.fromkeys(int(i) for i in memory_ids))
    kept = redact_then_cut(detail, 300)  # redact first: a cut can split a secret the scanner then misses

    def write(tx: Tx) -> int:
        tx.conn.executemany(
            "INSERT INTO external_injections(session_id, agent, event, memory_id, at, detail) VALUES (?,?,?,?,?,?)",
            [(session_id, agent, event, i, tx.now, kept) for i in ids])
        tx.changed("external_injections", "added", ids)
        return len(ids)
    return db.writer.submit(FnOp("record_external_injection", write))


def mark_cited(db: Any, session_id: str, memory_ids: Iterable[int]) -> Any:
    """Mark memories the session cited (only ones it was shown); the future gives the ids marked."""
    ids = sorted({int(i) for i in memory_ids})

    def write(tx: Tx) -> list[int]:
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        hit = [int(r[0]) for r in tx.execute(
            f"SELECT DISTINCT memory_id FROM external_injections WHERE session_id = ? AND cited = 0 "
            f"AND memory_id IN ({marks})", (session_id, *ids))]
        if hit:
            tx.execute(f"UPDATE external_injections SET cited = 1 WHERE session_id = ? AND memory_id IN ({marks})",
                       (session_id, *ids))
            tx.changed("external_injections", "updated", hit)
        return hit
    return db.writer.submit(FnOp("mark_external_cited", write))


def mark_flagged(db: Any, session_id: str, memory_id: int) -> Any:
    """Mark a memory of a session as flagged wrong (the one-click correction in the app)."""
    def write(tx: Tx) -> int:
        tx.execute("UPDATE external_injections SET flagged = 1 WHERE session_id = ? AND memory_id = ?",
                   (session_id, memory_id))
        tx.changed("external_injections", "updated", [memory_id])
        return 1
    return db.writer.submit(FnOp("mark_external_flagged", write))


def shown_ids(db: Any, session_id: str, *, injected_only: bool = False) -> list[int]:
    """Memories this session was already shown, in the order it saw them.

    ``injected_only``: leave out the memories it only cited without Engram showing them
    (what a compaction may re-inject: never what the agent merely named).
    """
    from desktop.memory.lifecycle.shown import CITED_ONLY

    rows = db.reads.conn().execute(
        "SELECT memory_id FROM external_injections WHERE session_id = ? AND (? = 0 OR event <> ?) ORDER BY id",
        (session_id, int(injected_only), CITED_ONLY)).fetchall()
    return list(dict.fromkeys(int(r[0]) for r in rows))


def session_rows(db: Any, session_id: str) -> list[Shown]:
    """Everything one session was told, oldest first."""
    rows = db.reads.conn().execute(
        "SELECT session_id, agent, event, memory_id, at, detail, cited, flagged FROM external_injections "
        "WHERE session_id = ? ORDER BY id", (session_id,)).fetchall()
    return [Shown(str(r[0]), str(r[1]), str(r[2]), int(r[3]), str(r[4]), str(r[5]), bool(r[6]), bool(r[7]))
            for r in rows]


def recent_sessions(db: Any, limit: int = 50) -> list[ExternalSession]:
    """The most recent external sessions, newest first."""
    rows = db.reads.conn().execute(
        "SELECT session_id, min(agent), min(at), max(at), count(DISTINCT memory_id), "
        "count(DISTINCT CASE WHEN cited THEN memory_id END), count(DISTINCT CASE WHEN flagged THEN memory_id END) "
        "FROM external_injections WHERE agent <> ? GROUP BY session_id ORDER BY max(at) DESC LIMIT ?",
        (ENGRAM_AGENT, limit)).fetchall()
    return [ExternalSession(str(r[0]), str(r[1]), str(r[2]), str(r[3]), int(r[4]), int(r[5]), int(r[6]))
            for r in rows]


def latest_id(db: Any) -> int:
    """The newest row's id (0 when none): a cheap "did another process record something?" check."""
    rows = db.reads.conn().execute("SELECT coalesce(max(id), 0) FROM external_injections").fetchall()
    return int(rows[0][0])
