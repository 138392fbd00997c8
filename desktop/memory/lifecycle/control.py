"""User control over a project's memory: the auto-memory gate, candidate quarantine, delete all.

Opt-out is a project preference (``auto_memory``, see :mod:`desktop.memory.preferences`),
so it travels with the project's database and every door sees the same answer. With
auto-memory off the agent still works: it reads and injects memories as before,
only nothing new is learned from sessions.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, ClassVar

from desktop.memory.lifecycle.emergency import fill_temp, purge_temp
from desktop.memory.lifecycle.leak import clear_side_tables
from desktop.memory.preferences import Preferences
from desktop.memory.store.writer import Tx, WriteOp
from desktop.memory.types import MemorySource

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.lifecycle")

# Sources written without a person or an agent saying "remember this": quarantined.
AUTO_SOURCES = frozenset({MemorySource.OBSERVER_INFERRED.value, MemorySource.QA_AUTO.value,
                          MemorySource.MCP_AUTO.value, MemorySource.COMMIT_AUTO.value})


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


def delete_all(project: Project, *, actor: str = "user", reason: str | None = None, scrub: bool = True) -> int:
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
    if not Preferences(db).auto_memory():
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
