"""Teach Engram: the add-memory dialog, pre-filled from wherever teaching started.

Entry points: `/remember TEXT` in the session input (saved at once, no dialog),
selected agent output, a right-clicked file, the "Actually…" banner, the memory
panel's Add button and the Teach toolbar action.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from desktop.ui.memory_editor import MemoryEditor


def teach_dialog(parent: QWidget | None, text: str = "", files: list[str] | None = None) -> MemoryEditor:
    """A MemoryEditor pre-filled with `text` and related `files`."""
    dialog = MemoryEditor(parent)
    if text:
        dialog.content.setPlainText(text)
    if files:
        dialog.files.setText(", ".join(files))
    return dialog

