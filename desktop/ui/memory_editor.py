"""The add/edit memory dialog."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop.memory.actions import taught
from desktop.memory.store.errors import ValidationError
from desktop.memory.store.guards import guard_text, refuse_secret_fields
from desktop.memory.types import MAX_CONTENT_CHARS, Memory, MemoryScope, MemoryType
from desktop.ui.memory_model import type_label
from desktop.ui.messages import describe_error

EDITABLE_TYPES = [t.value for t in MemoryType if t.value != "code"]


class MemoryEditor(QDialog):
    """Type, scope, content, files and tags of one memory.

    No confidence to type in: what a person teaches starts where taught memories start,
    and use and feedback move it. Save checks the text as the core will (secrets, size),
    so a refusal is said here, with the text still in the box, never after it closed.
    """

    def __init__(self, parent: QWidget | None = None, memory: Memory | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Edit memory") if memory else self.tr("Teach Engram"))
        self.setMinimumWidth(520)
        self.content = QPlainTextEdit()
        self.content.setPlaceholderText(self.tr("What should agents know? e.g. “Run migrations with "
                                                "make migrate, never with alembic directly.”"))
        self.content.setTabChangesFocus(True)
        self.type = QComboBox()
        for value in EDITABLE_TYPES:
            self.type.addItem(type_label(value), value)
        self.scope = QComboBox()
        for value, label in ((MemoryScope.GLOBAL.value, self.tr("Whole project")),
                             (MemoryScope.MODULE.value, self.tr("One module")),
                             (MemoryScope.WORK_UNIT.value, self.tr("This task")),
                             (MemoryScope.SESSION.value, self.tr("This session"))):
            self.scope.addItem(label, value)
        self.files = QLineEdit()
        self.files.setPlaceholderText(self.tr("src/auth/tokens.ts, src/auth/session.ts"))
        self.tags = QLineEdit()
        self.tags.setPlaceholderText(self.tr("security, build"))
        self.error = QLabel()
        self.error.setObjectName("editorError")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b3261e;")
        self.error.hide()

        form = QFormLayout()
        form.addRow(self.tr("&Memory"), self.content)
        form.addRow(self.tr("&Type"), self.type)
        form.addRow(self.tr("&Applies to"), self.scope)
        form.addRow(self.tr("Related &files"), self.files)
        form.addRow(self.tr("Ta&gs"), self.tags)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.content.textChanged.connect(self._validate)
        if memory:
            self.content.setPlainText(memory.content)
            self._select(self.type, memory.type)
            self._select(self.scope, memory.scope)
            self.files.setText(", ".join(memory.related_files))
            self.tags.setText(", ".join(memory.tags))
        else:
            self._select(self.type, MemoryType.GOTCHA.value)
        self._validate()

    @staticmethod
    def _select(combo: QComboBox, value: str) -> None:
        i = combo.findData(value)
        if i >= 0:
            combo.setCurrentIndex(i)

    def accept(self) -> None:
        """Close only when the core would take the text; otherwise say why and keep what was typed."""
        try:
            item = taught(**self.values())
            item.validate()
            guard_text(item.content, user_taught=True)
            refuse_secret_fields(item)
        except (ValidationError, ValueError, TypeError) as exc:
            self.error.setText(describe_error(exc))
            self.error.show()
            self.content.setFocus()
            return
        super().accept()

    def _validate(self) -> None:
        self.error.hide()
        text = self.content.toPlainText()
        ok = bool(text.strip()) and len(text) <= MAX_CONTENT_CHARS
        self.save_button.setEnabled(ok)
        self.save_button.setToolTip("" if ok else self.tr("A memory needs some text (at most %n characters).",
                                                          "", MAX_CONTENT_CHARS))

    def values(self) -> dict[str, Any]:
        """The fields as entered."""
        def split(text: str) -> list[str]:
            return [p.strip() for p in text.split(",") if p.strip()]
        return {"content": self.content.toPlainText().strip(), "type": self.type.currentData(),
                "scope": self.scope.currentData(), "related_files": split(self.files.text()),
                "tags": split(self.tags.text())}
