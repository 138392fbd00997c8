"""One implementation per action, checked on the source: audit rows only through Tx, typed change notices."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from desktop.memory.store.changes import Action, Change, ChangeSet, Entity

DESKTOP = Path(__file__).resolve().parents[2] / "desktop"


def test_audit_rows_are_written_only_by_tx() -> None:
    offenders = [str(p.relative_to(DESKTOP)) for p in DESKTOP.rglob("*.py")
                 if p.name != "writer.py" and re.search(r"INSERT\s+INTO\s+audit_log", p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_every_announced_change_is_a_known_entity_and_action() -> None:
    pattern = re.compile(r"""changed\(\s*["']([a-z_]+)["']\s*,\s*["']([a-z_]+)["']""")
    seen = {m.groups() for p in DESKTOP.rglob("*.py") for m in pattern.finditer(p.read_text(encoding="utf-8"))}
    assert seen
    for entity, action in seen:
        Entity(entity)
        Action(action)


def test_unknown_entity_fails_loudly_and_strings_still_compare() -> None:
    with pytest.raises(ValueError):
        Change("observr", "updated")  # type: ignore[arg-type]
    changes = ChangeSet([Change("memory", "added", frozenset({1}))])  # type: ignore[arg-type]
    assert changes.ids("memory", "added") == {1} and changes.changes[0].entity is Entity.MEMORY
    with pytest.raises(ValueError):
        changes.touches("memories")
