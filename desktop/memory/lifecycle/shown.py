"""Which memories a session was shown: what a use must answer before it counts.

Hooks (and Engram's own agent) write a row to ``external_injections`` for every memory
they hand a session (see desktop/agents/hooks/ledger.py). A memory an agent cites
without having been given it (from a search it ran itself, from CLAUDE.md, from its own
record) gets a row too, so the app can show it, but with the event :data:`CITED_ONLY`:
such a row is a record of the agent's words, never proof that Engram showed the memory.

The feedback rules (feedback.py) count a use only for the ids this module says were
shown to that session, and only once per session: an agent cannot promote what it wrote
by citing it, searching for it, naming a session it was never part of, or reporting the
same session's use again and again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

CITED_ONLY: Final = "reply"
"""The ledger event of a memory a session cited without Engram having shown it."""


def _ids_matching(conn: Any, memory_ids: Iterable[int], session_id: str | None, sql: str,
                  params: Callable[[list[int]], tuple[Any, ...]]) -> set[int]:
    """The ids among ``memory_ids`` that ``sql`` (with ``{ids}`` for the placeholders) returns, asked
    500 at a time (SQLite's bound on variables); no session or no ids: an empty set."""
    ids = sorted({int(i) for i in memory_ids})
    if not session_id or not ids:
        return set()
    found: set[int] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        found.update(int(r[0]) for r in conn.execute(sql.format(ids=",".join("?" * len(chunk))), params(chunk)))
    return found


def shown_in_session(conn: Any, session_id: str | None, memory_ids: Iterable[int]) -> set[int]:
    """The ids among ``memory_ids`` that Engram showed to ``session_id`` (injected, not merely cited).

    ``conn`` is anything with ``execute`` (a read connection or a writer transaction).
    No session, no proof: an empty set.
    """
    return _ids_matching(conn, memory_ids, session_id,
                         "SELECT DISTINCT memory_id FROM external_injections WHERE session_id = ? AND event <> ? "
                         "AND memory_id IN ({ids})", lambda chunk: (session_id, CITED_ONLY, *chunk))


def counted_before(conn: Any, session_id: str | None, memory_ids: Iterable[int]) -> set[int]:
    """The ids among ``memory_ids`` whose use in ``session_id`` was already counted (their history says so)."""
    return _ids_matching(conn, memory_ids, session_id,
                         "SELECT DISTINCT memory_id FROM audit_log WHERE memory_id IN ({ids}) "
                         "AND action = 'use' AND json_valid(detail) AND json_extract(detail, '$.session') = ? "
                         "AND json_extract(detail, '$.counted') = 1", lambda chunk: (*chunk, session_id))
