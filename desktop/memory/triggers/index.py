"""The trigger index: rows of ``memory_triggers`` kept in step with the memories.

Writes happen inside the writer's transaction of the memory they belong to (``index_memory``
is called by the add and edit ops), and a database whose rows were derived by an older rule
is re-derived once by :class:`ReindexTriggers` (the version is kept in ``project_meta``).
Reads (:func:`candidates`) look up only the index keys a tool call mentions.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from desktop.memory.store.live import LIVE_MEMORY_SQL
from desktop.memory.store.writer import Tx, WriteOp
from desktop.memory.triggers.model import CODE, CallShape, Trigger

log = logging.getLogger("engram.triggers")

#: Bumped whenever ``derive`` changes what it finds: the index is rebuilt once on the next open.
DERIVATION_VERSION: Final = 6
_META_KEY: Final = "triggers_version"


def index_memory(tx: Tx, memory_id: int, mtype: str, content: str, source: str, metadata: Any) -> int:
    """Replace one memory's trigger rows (inside the caller's write); returns how many it has."""
    from desktop.memory.triggers.derive import triggers_of  # only writes derive; a hook's read does not

    meta = metadata if isinstance(metadata, dict) else _json(metadata)
    tx.execute("DELETE FROM memory_triggers WHERE memory_id = ?", (memory_id,))
    found = [] if mtype == "code" else triggers_of(mtype, content, source, meta)
    for trig in found:
        tx.execute("INSERT OR IGNORE INTO memory_triggers(memory_id, kind, key, spec) VALUES (?,?,?,?)",
                   (memory_id, trig.kind, trig.key, trig.spec()))
    return len(found)


def merge_constructs(tx: Tx, memory_id: int, mtype: str, content: str, source: str, old_meta: Any,
                     new_meta: dict[str, Any]) -> None:
    """A lesson learned again with a construct it did not have (another line shape the checker
    flagged) fires on that one too from now on. Only constructs: a command trigger learned again
    stays as first learned, since a broader one would fire (and be contradicted) where the lesson
    was never shown true."""
    from desktop.memory.triggers.derive import MAX_TRIGGERS

    new = new_meta.get("triggers") if isinstance(new_meta, dict) else None
    if not isinstance(new, list) or not new:
        return
    meta = old_meta if isinstance(old_meta, dict) else _json(old_meta)
    if not meta and old_meta not in (None, "", "{}"):
        return  # unreadable metadata is kept as it is, not overwritten
    had = meta.get("triggers")
    old: list[Any] = had if isinstance(had, list) else []
    merged = old + [t for t in new if isinstance(t, dict) and t.get("kind") == CODE and t not in old]
    if len(merged) == len(old):
        return
    meta["triggers"] = merged[:MAX_TRIGGERS]
    tx.execute("UPDATE memories SET metadata = ? WHERE id = ?", (json.dumps(meta, ensure_ascii=False), memory_id))
    index_memory(tx, memory_id, mtype, content, source, meta)


def _json(value: Any) -> dict[str, Any]:
    try:
        data = json.loads(value) if isinstance(value, str) and value else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


class ReindexTriggers(WriteOp[int]):
    """Derive every live memory's triggers again (a new database version of the rules)."""

    name: ClassVar[str] = "reindex_triggers"

    def apply(self, tx: Tx) -> int:
        """Rebuild the whole index; returns the number of memories that have triggers."""
        tx.execute("DELETE FROM memory_triggers")
        rows = tx.execute(
            f"SELECT id, type, content, source, metadata FROM memories WHERE {LIVE_MEMORY_SQL}").fetchall()
        with_triggers = 0
        for mid, mtype, content, source, metadata in rows:
            if index_memory(tx, int(str(mid)), str(mtype), str(content), str(source), metadata):
                with_triggers += 1
        tx.execute("INSERT INTO project_meta(key, value) VALUES (?, ?) "
                   "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (_META_KEY, str(DERIVATION_VERSION)))
        return with_triggers


def needs_reindex(conn: Any) -> bool:
    """True when the index was derived by another version of the rules (or never)."""
    rows = conn.execute("SELECT value FROM project_meta WHERE key = ?", (_META_KEY,)).fetchall()
    return not rows or str(rows[0][0]) != str(DERIVATION_VERSION)


@dataclass(frozen=True, slots=True)
class Armed:
    """A live, injectable memory with one trigger that may fire for a call."""

    memory_id: int
    trigger: Trigger


def candidates(conn: Any, call: CallShape) -> list[Armed]:
    """Triggers of live memories (not candidates, not flagged) under the call's index keys."""
    keys = call.keys()
    if not keys:
        return []
    pairs = json.dumps([[k, v] for k, v in keys])
    rows = conn.execute(
        "SELECT t.memory_id, t.spec FROM memory_triggers t "
        "JOIN json_each(?) j ON t.kind = json_extract(j.value, '$[0]') AND t.key = json_extract(j.value, '$[1]') "
        "JOIN memories m ON m.id = t.memory_id "
        "WHERE m.deprecated = 0 AND m.candidate = 0 AND m.needs_review = 0 AND m.stale_at IS NULL",
        (pairs,)).fetchall()
    out: list[Armed] = []
    for mid, spec in rows:
        trig = Trigger.from_json(_json(spec))
        if trig is not None:
            out.append(Armed(int(mid), trig))
    return out
