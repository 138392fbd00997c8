"""Teach Engram: the add-memory dialog, pre-filled from wherever teaching started.

Entry points: `/remember TEXT` in the session input (saved at once, no dialog),
selected agent output, a right-clicked file, the "Actually…" banner, the memory
panel's Add button and the Teach toolbar action.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from PySide6.QtWidgets import QWidget

from desktop.memory.store.memory_ops import AddResult, NewMemory
from desktop.ui.memory_editor import MemoryEditor


def teach_dialog(parent: QWidget | None, text: str = "", files: list[str] | None = None) -> MemoryEditor:
    """A MemoryEditor pre-filled with `text` and related `files`."""
    dialog = MemoryEditor(parent)
    if text:
        dialog.content.setPlainText(text)
    if files:
        dialog.files.setText(", ".join(files))
    return dialog


def taught_memory(values: dict[str, Any]) -> NewMemory:
    """The NewMemory a teach dialog's values describe (source user_taught, verified)."""
    return NewMemory(source="user_taught", user_verified=True, **values)


def remember_now(project: Any, text: str) -> Future[AddResult]:
    """`/remember TEXT`: a user-taught note saved immediately (raises ValidationError early)."""
    return project.memories.add(NewMemory(content=text, type="note", source="user_taught", user_verified=True,
                                          confidence=0.9, provenance=[{"kind": "remember_command"}]),
                                actor="user", reason="/remember")
