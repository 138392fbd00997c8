"""The add/edit memory dialog."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop.memory.types import MAX_CONTENT_CHARS, Memory, MemoryScope, MemoryType
from desktop.ui.memory_model import type_label

EDITABLE_TYPES = [t.value for t in MemoryType if t.value != "code"]


class MemoryEditor(QDialog):
    """Type, scope, content, files, tags and confidence of one memory."""

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
        self.confidence = QDoubleSpinBox()
        self.confidence.setRange(0.0, 1.0)
        self.confidence.setSingleStep(0.05)
        self.confidence.setValue(0.9)

        form = QFormLayout()
        form.addRow(self.tr("&Memory"), self.content)
        form.addRow(self.tr("&Type"), self.type)
        form.addRow(self.tr("&Applies to"), self.scope)
        form.addRow(self.tr("Related &files"), self.files)
        form.addRow(self.tr("Ta&gs"), self.tags)
        form.addRow(self.tr("&Confidence"), self.confidence)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)
        self.content.textChanged.connect(self._validate)
        if memory:
            self.content.setPlainText(memory.content)
            self._select(self.type, memory.type)
            self._select(self.scope, memory.scope)
            self.files.setText(", ".join(memory.related_files))
            self.tags.setText(", ".join(memory.tags))
            self.confidence.setValue(memory.confidence)
        else:
            self._select(self.type, MemoryType.GOTCHA.value)
        self._validate()

    @staticmethod
    def _select(combo: QComboBox, value: str) -> None:
        i = combo.findData(value)
        if i >= 0:
            combo.setCurrentIndex(i)

    def _validate(self) -> None:
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
                "tags": split(self.tags.text()), "confidence": round(self.confidence.value(), 2)}
