"""Which memories a session was shown: what a use must answer before it counts.

Hooks (and Engram's own agent) write a row to ``external_injections`` for every memory
they hand a session (see desktop/agents/hooks/ledger.py). A memory an agent cites
without having been given it (from a search it ran itself, from CLAUDE.md, from its own
record) gets a row too, so the app can show it, but with the event :data:`CITED_ONLY`:
such a row is a record of the agent's words, never proof that Engram showed the memory.

The feedback rules (feedback.py) count a use only for the ids this module says were
shown to that session: an agent cannot promote what it wrote by citing it, searching
for it or naming a session it was never part of.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

CITED_ONLY: Final = "reply"
"""The ledger event of a memory a session cited without Engram having shown it."""


def shown_in_session(conn: Any, session_id: str | None, memory_ids: Iterable[int]) -> set[int]:
    """The ids among ``memory_ids`` that Engram showed to ``session_id`` (injected, not merely cited).

    ``conn`` is anything with ``execute`` (a read connection or a writer transaction).
    No session, no proof: an empty set.
    """
    ids = sorted({int(i) for i in memory_ids})
    if not session_id or not ids:
        return set()
    found: set[int] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        found.update(int(r[0]) for r in conn.execute(
            f"SELECT DISTINCT memory_id FROM external_injections WHERE session_id = ? AND event <> ? "
            f"AND memory_id IN ({','.join('?' * len(chunk))})", (session_id, CITED_ONLY, *chunk)))
    return found
