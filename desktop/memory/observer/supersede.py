"""A newer working recipe (or fact) retires the older one for the same purpose, its history kept.

When the workflow moves (pip -> uv, one port to another, ``go test`` -> ``mise run test``)
the session that shows the new way promotes a recipe memory for the same *purpose* (see
``recipes``) with a different text. Both must not be injected side by side: the older
one is deprecated, its ``relations`` say ``superseded_by`` the newer (and the newer's say
``supersedes`` it), and the audit log records why, so the change can be seen and undone.

A way supersedes another when it is *newer*: every session that used it began after the last
session that used the other; a move (the last ``pip install`` before the first ``uv sync``)
retires the old one, however often the old one was used. Of recipes used in turn for one purpose,
one is the project's way: a developer tells a new colleague one way to run the tests, not four
(BookMinder's sessions gave five live test recipes at once: `pytest --spec`, the same after
``source .venv/bin/activate``, `pytest --cov=…`, `pytest -xvs` and bare `pytest`). A way in use
beside a stored one is stored only once it was shown in more sessions than each of them, and then
retires them, their history kept; a tie keeps the stored one, so two ways used as often do not take
turns. A stored way that is only the toolchain's default (``known_already.unprompted_recipe``, from
before such recipes stopped being stored) never holds another back, and the project's way retires it.

Only what the observer learned is retired this way: a recipe a person confirmed, pinned
or taught stays until a person changes it.
"""

from __future__ import annotations

import json
from typing import Any, cast

from desktop.memory.observer import cross_session as xs
from desktop.memory.observer.known_already import unprompted_recipe
from desktop.memory.observer.signal_kinds import RECIPE
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.writer import Tx
from desktop.memory.types import MemorySource


def _seen(tx: Tx | Any, signal_key: str) -> tuple[str | None, str | None]:
    """When the sessions that showed a lesson began: the first and the last (before this session)."""
    row = tx.execute("SELECT first_seen, last_seen FROM observer_signal_counts WHERE signal_key = ?",
                     (signal_key,)).fetchall()
    return (str(row[0][0]) if row[0][0] else None, str(row[0][1]) if row[0][1] else None) if row else (None, None)


def _sessions(conn: Any, signal_key: str, now: dict[str, int]) -> int:
    """The sessions that showed a lesson once this one is counted: ``now`` holds this session's keys
    with their counts (the promoter's, which count a grown transcript or a sub-agent's parent once);
    another key's count is as stored."""
    if signal_key in now:
        return now[signal_key]
    return xs.signal_session_counts(conn, [signal_key]).get(signal_key, 0)


def _in_turn(conn: Any, other: str, since: str, now: dict[str, int]) -> bool:
    """Whether ``other`` was in use since ``since`` (when the way it is compared with was first
    shown): shown this session, or after. Otherwise the other way is the newer one (a move), and
    ``other`` goes whatever its count."""
    last = _seen(conn, other)[1]
    return other in now or (last is not None and last >= since)


def _ways(conn: Any, signal: str, goal: str, but: int = 0) -> list[tuple[int, str, str]]:
    """The live learned memories (id, signal key, text) of one signal and purpose, but ``but``."""
    return [(int(i), str(k), str(c)) for i, k, c in conn.execute(
        "SELECT id, coalesce(json_extract(metadata, '$.signal_key'), ''), content FROM memories"
        " WHERE deprecated = 0 AND id <> ? AND source = ? AND user_verified = 0 AND pinned = 0"
        " AND json_extract(metadata, '$.signal') = ? AND json_extract(metadata, '$.purpose') = ?",
        (but, MemorySource.OBSERVER_INFERRED.value, signal, goal)).fetchall()]


def less_used_ways(conn: Any, items: list[NewMemory], keys: list[str], now: dict[str, int], started: str
                   ) -> list[bool]:
    """For each memory about to be stored: True when it is a learned recipe not stored yet, used in
    turn with a stored recipe for the same purpose that was shown in as many sessions or more (this
    one counted): that one stays the purpose's way, and this one is not stored while it does not lead."""
    out = []
    for item, key in zip(items, keys, strict=True):
        goal = str(item.metadata.get("purpose", ""))
        if not key or not goal or item.metadata.get("signal") != RECIPE:
            out.append(False)
            continue
        ways = _ways(conn, RECIPE, goal)
        if any(k == key for _, k, _ in ways):
            out.append(False)  # stored already: this session reinforces it
            continue
        mine, since = _sessions(conn, key, now), _seen(conn, key)[0] or started
        out.append(any(_in_turn(conn, k, since, now) and _sessions(conn, k, now) >= mine
                       for _, k, text in ways if not unprompted_recipe(text)))
    return out


def _retire(tx: Tx, old_id: int, new_id: int, why: str, goal: str) -> None:
    """Deprecate ``old_id`` as superseded by ``new_id`` (both memories' relations say so; audited)."""
    row = cast(list[tuple[str]], tx.execute("SELECT relations FROM memories WHERE id = ?", (old_id,)).fetchall())
    old_rel = [*json.loads(row[0][0] or "[]"), {"type": "superseded_by", "id": new_id, "at": tx.now}]
    tx.audit("supersede", old_id, actor="observer", detail={"superseded_by": new_id, "purpose": goal},
             reason=f"superseded by #{new_id}: {why} for the same purpose ({goal})")
    tx.execute("UPDATE memories SET deprecated = 1, deprecated_at = ?, deprecated_reason = ?, relations = ?,"
               " updated_at = ? WHERE id = ?",
               (tx.now, f"superseded by #{new_id}", json.dumps(old_rel), tx.now, old_id))
    row = cast(list[tuple[str]], tx.execute("SELECT relations FROM memories WHERE id = ?", (new_id,)).fetchall())
    new_rel = [r for r in json.loads(row[0][0] or "[]") if r.get("id") != old_id]
    new_rel.append({"type": "supersedes", "id": old_id, "at": tx.now})
    tx.execute("UPDATE memories SET relations = ?, updated_at = ? WHERE id = ?", (json.dumps(new_rel), tx.now, new_id))
    tx.changed("memory", "updated", [new_id, old_id])


def supersede_recipes(tx: Tx, current: list[tuple[int, str, str, str]], *, now: dict[str, int], started: str
                      ) -> list[tuple[int, int]]:
    """Retire, for each (memory id, signal, purpose, signal key) a session (begun at ``started``, its
    lessons' counts ``now``) just stored, the other live memories of that signal and purpose it
    replaces: older ones (every session that showed them began before the first that showed it), and,
    for a recipe, ways in use beside it that were shown in fewer sessions, or that are only the
    toolchain's default.

    Runs inside the promotion's transaction, before the session is counted.
    Returns (retired id, successor id) pairs.
    """
    done: list[tuple[int, int]] = []
    retired: set[int] = set()  # a memory this session retired retires nothing (two ways of one session)
    for new_id, signal, goal, new_key in current:
        if not goal or new_id in retired:
            continue
        mine, since = _sessions(tx, new_key, now), _seen(tx, new_key)[0] or started
        for old_id, old_key, text in _ways(tx, signal, goal, new_id):
            if not _in_turn(tx, old_key, since, now):
                why = "newer"
            elif signal != RECIPE:
                continue  # both in use: neither is the newer
            elif unprompted_recipe(text):
                why = "the project's own way, not the toolchain's default"
            elif mine > _sessions(tx, old_key, now):
                why = "used in more sessions"
            else:
                continue
            _retire(tx, old_id, new_id, why, goal)
            done.append((old_id, new_id))
            retired.add(old_id)
    return done
