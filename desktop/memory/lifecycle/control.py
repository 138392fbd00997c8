"""User control over a project's memory: auto-memory opt-out, candidate quarantine, delete all.

Opt-out is a ``project_meta`` key (``auto_memory`` = ``off``), so it travels with the
project's database and every client (GUI, CLI, MCP) sees the same answer. With
auto-memory off the agent still works: it reads and injects memories as before,
only nothing new is learned from sessions.
"""

from __future__ import annotations

import json
import logging
from typing import Any, ClassVar

from desktop.memory.lifecycle.emergency import fill_temp, purge_temp
from desktop.memory.lifecycle.leak import clear_side_tables
from desktop.memory.store.writer import FnOp, Tx, WriteOp
from desktop.memory.trust_levels import PROMOTION_PRESETS, PromotionPreset, promotion_preset
from desktop.memory.types import MemorySource

log = logging.getLogger("engram.lifecycle")

AUTO_MEMORY_KEY = "auto_memory"
#: The Trust dialog's promotion preset, stored JSON-encoded as the app's preferences store it.
PROMOTION_PRESET_KEY = "promotion_preset"
# Sources written without a person or an agent saying "remember this": quarantined.
AUTO_SOURCES = frozenset({MemorySource.OBSERVER_INFERRED.value, MemorySource.QA_AUTO.value,
                          MemorySource.MCP_AUTO.value, MemorySource.COMMIT_AUTO.value})


def auto_memory_enabled(db: Any) -> bool:
    """True unless the project opted out of automatic memory creation."""
    rows = db.reads.conn().execute("SELECT value FROM project_meta WHERE key = ?",
                                   (AUTO_MEMORY_KEY,)).fetchall()
    return not rows or str(rows[0][0]).lower() != "off"


def project_promotion_preset(db: Any) -> PromotionPreset:
    """The promotion preset this project's trust settings chose (balanced when none was chosen)."""
    rows = db.reads.conn().execute("SELECT value FROM project_meta WHERE key = ?",
                                   (PROMOTION_PRESET_KEY,)).fetchall()
    return promotion_preset(str(rows[0][0]) if rows else None)


def set_promotion_preset(db: Any, name: str, *, actor: str = "user") -> None:
    """Choose the project's promotion preset (audited); waits for the commit. Unknown names raise ValueError."""
    if name not in PROMOTION_PRESETS:
        raise ValueError(f"unknown promotion preset {name!r}")

    def write(tx: Tx) -> None:
        tx.audit("promotion_preset", None, actor=actor, reason=f"promotion preset set to {name}",
                 detail={"value": name})
        tx.execute("INSERT INTO project_meta(key, value) VALUES (?, ?) "
                   "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (PROMOTION_PRESET_KEY, json.dumps(name)))
        tx.changed("project_meta", "updated", [PROMOTION_PRESET_KEY])
    db.writer.run(FnOp("set_promotion_preset", write))


def set_auto_memory(db: Any, enabled: bool, *, actor: str = "user") -> None:
    """Turn automatic memory creation on or off for this project (audited); waits for the commit."""
    value = "on" if enabled else "off"

    def write(tx: Tx) -> None:
        tx.audit("auto_memory", None, actor=actor, reason=f"automatic memory creation turned {value}",
                 detail={"value": value})
        tx.execute("INSERT INTO project_meta(key, value) VALUES (?, ?) "
                   "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (AUTO_MEMORY_KEY, value))
        tx.changed("project_meta", "updated", [AUTO_MEMORY_KEY])
    db.writer.run(FnOp("set_auto_memory", write))


class DeleteAll(WriteOp[int]):
    """Hard-delete every memory of the project (code chunks included unless `keep_code`)."""

    name: ClassVar[str] = "delete_all_memories"

    def __init__(self, *, actor: str = "user", reason: str | None = None, keep_code: bool = False) -> None:
        self.actor = actor
        self.reason = reason
        self.keep_code = keep_code

    def apply(self, tx: Tx) -> int:
        """Scrub all audit text, remove rows, FTS tokens and vectors; one audit entry explains it."""
        where = "type <> 'code'" if self.keep_code else "1"
        ids = [int(r[0]) for r in tx.execute(f"SELECT id FROM memories WHERE {where}")]
        fill_temp(tx, "_delete_all", ids)
        n = purge_temp(tx, "_delete_all", scrub_reason=True)
        # What sessions taught the observer (commands, errors, prompts, terms, the evidence kept for
        # model synthesis) goes too.
        side = clear_side_tables(tx)
        tx.audit("delete_all", None, actor=self.actor, reason=self.reason or "delete all memories",
                 detail={"count": n, "side_rows": sum(side.values())})
        if ids:
            tx.changed("memory", "deleted", ids)
        return n


def delete_all(project: Any, *, actor: str = "user", reason: str | None = None, scrub: bool = True) -> int:
    """Delete all memories of a project for good; with `scrub`, vacuum and truncate the WAL too.

    Engram's log files go as well (they quote sessions: prompts, commands, errors).
    """
    from desktop.memory.lifecycle.emergency import ScrubDatabase
    from desktop.memory.privacy.logfiles import scrub_logs

    n = project.db.writer.run(DeleteAll(actor=actor, reason=reason), 600)
    if scrub:
        project.db.writer.run(ScrubDatabase(), 600)
    scrub_logs(getattr(getattr(project, "settings", None), "data_dir", None))
    log.info("deleted all %d memories of %s", n, getattr(project, "info", None))
    return int(n)


def gate_items(db: Any, items: list[Any]) -> list[Any]:
    """Apply opt-out and quarantine to memories about to be auto-promoted.

    With auto-memory off nothing is kept; otherwise memories from automatic
    sources become candidates (quarantined until an agent uses them).
    """
    if not items:
        return items
    if not auto_memory_enabled(db):
        log.info("auto-memory is off: %d learned memories not saved", len(items))
        return []
    for item in items:
        # The observer marks what strong evidence promoted (a user instruction, a proven fix,
        # the same lesson in another session: metadata "promoted_on"); the rest stays quarantined.
        promoted = bool((getattr(item, "metadata", None) or {}).get("promoted_on"))
        if getattr(item, "source", None) in AUTO_SOURCES and not getattr(item, "user_verified", False) \
                and not promoted:
            item.candidate = True
    return items


def gated_promoter(db: Any, **kwargs: Any) -> Any:
    """A Promoter whose output passes `gate_items` (opt-out, candidate quarantine).

    Built here rather than in the observer so the observer stays unaware of
    lifecycle policy; the composition root uses it for every project.
    """
    from desktop.memory.observer.promotion import Promoter

    class GatedPromoter(Promoter):
        """Promoter + lifecycle gate."""

        def _novelty(self, conn: Any, items: list[Any], keys: list[str]) -> tuple[list[Any], list[str], int]:
            kept, kept_keys, folded = super()._novelty(conn, items, keys)
            gated = gate_items(self.db, kept)
            if len(gated) != len(kept):
                return [], [], folded
            return gated, kept_keys, folded

    return GatedPromoter(db, **kwargs)
