"""A newer working recipe (or fact) retires the older one for the same purpose, its history kept.

When the workflow moves (pip -> uv, one port to another, ``go test`` -> ``mise run test``)
the session that shows the new way promotes a recipe memory for the same *purpose* (see
``recipes``) with a different text. Both must not be injected side by side: the older
one is deprecated, its ``relations`` say ``superseded_by`` the newer (and the newer's say
``supersedes`` it), and the audit log records why, so the change can be seen and undone.

A way supersedes another only when it is *newer*: every session that used it began after
the last session that used the other. Two ways used in turn (``pytest`` and ``pytest -x``)
both stay; a move (the last ``pip install`` before the first ``uv sync``) retires the old one.

Only what the observer learned is retired this way: a recipe a person confirmed, pinned
or taught stays until a person changes it.
"""

from __future__ import annotations

import json
from typing import cast

from desktop.memory.store.writer import Tx
from desktop.memory.types import MemorySource


def _seen(tx: Tx, signal_key: str) -> tuple[str | None, str | None]:
    """When the sessions that showed a lesson began: the first and the last (before this session)."""
    row = tx.execute("SELECT first_seen, last_seen FROM observer_signal_counts WHERE signal_key = ?",
                     (signal_key,)).fetchall()
    return (str(row[0][0]) if row[0][0] else None, str(row[0][1]) if row[0][1] else None) if row else (None, None)


def supersede_recipes(tx: Tx, current: list[tuple[int, str, str, str]], *, session_keys: set[str], started: str
                      ) -> list[tuple[int, int]]:
    """Retire, for each (memory id, signal, purpose, signal key) a session (begun at ``started``, its
    lessons ``session_keys``) just stored, the older live memories of that signal and purpose: a
    recipe for the same job, a fact about the same thing (the Go version). Older means that every
    session that showed the old one began before the first that showed the new one.

    Runs inside the promotion's transaction, before the session is counted.
    Returns (retired id, successor id) pairs.
    """
    done: list[tuple[int, int]] = []
    for new_id, signal, goal, new_key in current:
        if not goal:
            continue
        first = _seen(tx, new_key)[0] or started
        rows = cast(list[tuple[int, str, str]], tx.execute(
            "SELECT id, relations, coalesce(json_extract(metadata, '$.signal_key'), '')"
            " FROM memories WHERE deprecated = 0 AND id <> ? AND source = ?"
            " AND user_verified = 0 AND pinned = 0 AND json_extract(metadata, '$.signal') = ?"
            " AND json_extract(metadata, '$.purpose') = ?",
            (new_id, MemorySource.OBSERVER_INFERRED.value, signal, goal)).fetchall())
        retired = []
        for old_id, relations, old_key in rows:
            last = _seen(tx, old_key)[1]
            if old_key in session_keys or (last is not None and last >= first):
                continue  # both ways in use: neither is the newer
            retired.append(int(old_id))
            old_rel = [*json.loads(relations or "[]"), {"type": "superseded_by", "id": new_id, "at": tx.now}]
            tx.audit("supersede", int(old_id), actor="observer",
                     reason=f"superseded by #{new_id}: newer for the same purpose ({goal})",
                     detail={"superseded_by": new_id, "purpose": goal})
            tx.execute("UPDATE memories SET deprecated = 1, deprecated_at = ?, deprecated_reason = ?, relations = ?,"
                       " updated_at = ? WHERE id = ?",
                       (tx.now, f"superseded by #{new_id}", json.dumps(old_rel), tx.now, old_id))
            row = cast(list[tuple[str]], tx.execute("SELECT relations FROM memories WHERE id = ?",
                                                    (new_id,)).fetchall())
            new_rel = [r for r in json.loads(row[0][0] or "[]") if r.get("id") != int(old_id)]
            new_rel.append({"type": "supersedes", "id": int(old_id), "at": tx.now})
            tx.execute("UPDATE memories SET relations = ?, updated_at = ? WHERE id = ?",
                       (json.dumps(new_rel), tx.now, new_id))
            done.append((int(old_id), new_id))
        if retired:
            tx.changed("memory", "updated", [new_id, *retired])
    return done
