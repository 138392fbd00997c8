"""A newer working recipe (or fact) retires the older one for the same purpose, its history kept.

When the workflow moves (pip -> uv, one port to another, ``go test`` -> ``mise run test``)
the session that shows the new way promotes a recipe memory for the same *purpose* (see
``recipes``) with a different text. Both must not be injected side by side: the older
one is deprecated, its ``relations`` say ``superseded_by`` the newer (and the newer's say
``supersedes`` it), and the audit log records why, so the change can be seen and undone.

A way supersedes another when it is *newer*: every session that used it began after the last
session that used the other; a move (the last ``pip install`` before the first ``uv sync``)
retires the old one. Of two recipes used in turn for one purpose, the one shown in more sessions
is the project's way and the other its variant: a developer tells a new colleague one way to run
the tests, not four. The variant is not stored while the other leads, and a stored way that another
overtakes is retired the same way, its history kept. Ways shown in as many sessions both stay.
(BookMinder's sessions gave five live test recipes at once: `pytest --spec`, the same after
``source .venv/bin/activate``, `pytest --cov=…`, `pytest -xvs` and bare `pytest`.)

Only what the observer learned is retired this way: a recipe a person confirmed, pinned
or taught stays until a person changes it.
"""

from __future__ import annotations

import json
from typing import Any, Final, cast

from desktop.memory.observer.signal_kinds import RECIPE
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.writer import Tx
from desktop.memory.types import MemorySource

_LIVE_WAYS: Final = ("SELECT id, coalesce(json_extract(metadata, '$.signal_key'), '') FROM memories"
                     " WHERE deprecated = 0 AND source = ? AND user_verified = 0 AND pinned = 0"
                     " AND json_extract(metadata, '$.signal') = ? AND json_extract(metadata, '$.purpose') = ?")


def _seen(tx: Tx, signal_key: str) -> tuple[str | None, str | None]:
    """When the sessions that showed a lesson began: the first and the last (before this session)."""
    row = tx.execute("SELECT first_seen, last_seen FROM observer_signal_counts WHERE signal_key = ?",
                     (signal_key,)).fetchall()
    return (str(row[0][0]) if row[0][0] else None, str(row[0][1]) if row[0][1] else None) if row else (None, None)


def _sessions(conn: Any, signal_key: str, session_keys: set[str]) -> int:
    """The sessions that showed a lesson, this one included (its counts are written after promotion)."""
    row = conn.execute("SELECT session_count FROM observer_signal_counts WHERE signal_key = ?",
                       (signal_key,)).fetchall()
    return (int(row[0][0]) if row else 0) + (1 if signal_key in session_keys else 0)


def less_used_ways(conn: Any, items: list[NewMemory], keys: list[str], session_keys: set[str]) -> list[bool]:
    """For each memory about to be stored: True when it is a learned recipe and a live recipe for the
    same purpose was shown in more sessions (this one counted): that one is the purpose's way, and
    this one its variant, not stored while the other leads. (A stored way cannot trail: the session
    in which another overtook it retired it, ``supersede_recipes``.)"""
    out = []
    for item, key in zip(items, keys, strict=True):
        goal = str(item.metadata.get("purpose", ""))
        if not key or not goal or item.metadata.get("signal") != RECIPE:
            out.append(False)
            continue
        mine = _sessions(conn, key, session_keys)
        rows = conn.execute(_LIVE_WAYS, (MemorySource.OBSERVER_INFERRED.value, RECIPE, goal)).fetchall()
        out.append(any(str(k) != key and _sessions(conn, str(k), session_keys) > mine for _, k in rows))
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


def supersede_recipes(tx: Tx, current: list[tuple[int, str, str, str]], *, session_keys: set[str], started: str
                      ) -> list[tuple[int, int]]:
    """Retire, for each (memory id, signal, purpose, signal key) a session (begun at ``started``, its
    lessons ``session_keys``) just stored, the older live memories of that signal and purpose: a
    recipe for the same job, a fact about the same thing (the Go version). Older means that every
    session that showed the old one began before the first that showed the new one. Of two recipes
    in use together, the one shown in fewer sessions is retired in favour of the new one.

    Runs inside the promotion's transaction, before the session is counted.
    Returns (retired id, successor id) pairs.
    """
    done: list[tuple[int, int]] = []
    retired: set[int] = set()  # a memory this session retired retires nothing (two ways of one session)
    for new_id, signal, goal, new_key in current:
        if not goal or new_id in retired:
            continue
        first = _seen(tx, new_key)[0] or started
        rows = cast(list[tuple[int, str]], tx.execute(
            "SELECT id, coalesce(json_extract(metadata, '$.signal_key'), '')"
            " FROM memories WHERE deprecated = 0 AND id <> ? AND source = ?"
            " AND user_verified = 0 AND pinned = 0 AND json_extract(metadata, '$.signal') = ?"
            " AND json_extract(metadata, '$.purpose') = ?",
            (new_id, MemorySource.OBSERVER_INFERRED.value, signal, goal)).fetchall())
        for old_id, old_key in rows:
            last = _seen(tx, old_key)[1]
            if not (old_key in session_keys or (last is not None and last >= first)):
                _retire(tx, int(old_id), new_id, "newer", goal)
                done.append((int(old_id), new_id))
                retired.add(int(old_id))
                continue
            if signal != RECIPE:
                continue  # both in use: neither is the newer
            if _sessions(tx, new_key, session_keys) > _sessions(tx, old_key, session_keys):
                _retire(tx, int(old_id), new_id, "used in more sessions", goal)
                done.append((int(old_id), new_id))
                retired.add(int(old_id))
    return done
