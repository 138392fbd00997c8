"""A person corrects a memory: one atomic op for every door (the app's dialog, the CLI).

Each kind has a real effect, all in ONE transaction, so a failure half-way leaves
nothing half-corrected (before, the app ran deprecate, add and link as three writes):

* ``outdated``        -> deprecated; with text, a replacement that supersedes it
* ``partially_wrong`` -> content replaced by the refined text (the audit keeps the diff), verified
* ``does_not_apply``  -> tagged ``not-applicable`` and deprecated, never injected here again
* ``incorrect``       -> deprecated, the (required) correct text saved as a memory superseding it

Every kind except ``partially_wrong`` is also flagged feedback (the memory's history
says so, its confidence drops) before it is retired.
"""

from __future__ import annotations

import json
from typing import ClassVar

from desktop.memory.actions import taught
from desktop.memory.lifecycle.feedback import RecordUse
from desktop.memory.store.errors import NotFoundError, ValidationError
from desktop.memory.store.memory_ops import AddMemories, EditMemory, NewMemory, SetFlag
from desktop.memory.store.writer import Tx, WriteOp

KINDS = ("outdated", "partially_wrong", "does_not_apply", "incorrect")


def _replacement(row: dict[str, str], text: str, kind: str, old_id: int) -> NewMemory:
    """The right text a person gave: taught by them (verified), in the corrected memory's place."""
    return taught(text, type=row["type"], scope=row["scope"], related_files=json.loads(row["related_files"]),
                  related_modules=json.loads(row["related_modules"]), tags=json.loads(row["tags"]), confidence=0.9,
                  relations=[{"type": "supersedes", "id": old_id}],
                  metadata={"correction_of": old_id, "correction": kind})


class ApplyCorrection(WriteOp[int]):
    """Correct one memory; returns the id of the memory that now holds the right text."""

    name: ClassVar[str] = "apply_correction"

    def __init__(self, memory_id: int, kind: str, text: str = "", *, actor: str = "user") -> None:
        text = text.strip()
        if kind not in KINDS:
            raise ValidationError(f"Unknown correction kind '{kind}'.")
        if kind in ("partially_wrong", "incorrect") and not text:
            raise ValidationError("This correction needs the right text.")
        self.memory_id, self.kind, self.text, self.actor = memory_id, kind, text, actor

    def apply(self, tx: Tx) -> int:
        """Flag, then edit / deprecate / replace, all inside the caller's transaction."""
        cols = "type, scope, related_files, related_modules, tags, relations"
        rows = tx.execute(f"SELECT {cols} FROM memories WHERE id = ?", (self.memory_id,)).fetchall()
        if not rows:
            raise NotFoundError(f"Memory #{self.memory_id} does not exist.")
        row: dict[str, str] = {c.strip(): str(v) for c, v in zip(cols.split(","), rows[0], strict=True)}
        words = self.kind.replace("_", " ")
        if self.kind == "partially_wrong":
            return EditMemory(self.memory_id, {"content": self.text, "user_verified": True, "needs_review": False},
                              actor=self.actor, reason="correction: partially wrong").apply(tx)
        RecordUse(flagged=[self.memory_id], actor=self.actor, reason=f"correction: {words}").apply(tx)
        if self.kind == "does_not_apply":
            tags = sorted(set(json.loads(row["tags"])) | {"not-applicable"})
            EditMemory(self.memory_id, {"tags": tags}, actor=self.actor, reason="correction: does not apply").apply(tx)
            return SetFlag(self.memory_id, "deprecate", actor=self.actor,
                           reason="does not apply to this project").apply(tx)
        SetFlag(self.memory_id, "deprecate", actor=self.actor, reason=f"correction: {words}").apply(tx)
        if not self.text:
            return self.memory_id
        [added] = AddMemories([_replacement(row, self.text, self.kind, self.memory_id)], actor=self.actor,
                              reason=f"correction of #{self.memory_id}").apply(tx)
        relations = [r for r in json.loads(row["relations"] or "[]")
                     if not (r.get("type") == "superseded_by" and r.get("id") == added.id)]
        EditMemory(self.memory_id, {"relations": [*relations, {"type": "superseded_by", "id": added.id}]},
                   actor=self.actor, reason="superseded by a correction").apply(tx)
        return int(added.id)
