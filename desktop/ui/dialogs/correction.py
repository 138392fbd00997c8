"""The correction dialog: say what is wrong with a memory, and it is fixed at once.

Four choices, each with a real effect through the writer (see
desktop.memory.project.Project.correct). Reachable in one click from a
citation chip's flag, the browser's "Flag wrong" and the session summary.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from desktop.memory.types import Memory
from desktop.ui.labels import type_label
from desktop.ui.tr_noop import QT_TRANSLATE_NOOP

CHOICES = (
    ("outdated", QT_TRANSLATE_NOOP("CorrectionDialog", "&Outdated — we fixed this"),
     QT_TRANSLATE_NOOP("CorrectionDialog", "The memory is retired. If you describe how it is now, that "
                                           "becomes a new memory that replaces it.")),
    ("partially_wrong", QT_TRANSLATE_NOOP("CorrectionDialog", "&Partially wrong — let me refine it"),
     QT_TRANSLATE_NOOP("CorrectionDialog", "Edit the text below. The memory keeps its history, so the old "
                                           "version stays visible.")),
    ("does_not_apply", QT_TRANSLATE_NOOP("CorrectionDialog", "&Doesn't apply to this project"),
     QT_TRANSLATE_NOOP("CorrectionDialog", "The memory is marked not applicable and is never given to "
                                           "agents in this project again.")),
    ("incorrect", QT_TRANSLATE_NOOP("CorrectionDialog", "&Incorrect information"),
     QT_TRANSLATE_NOOP("CorrectionDialog", "The memory is retired and your correction (required) replaces it.")),
)


class CorrectionDialog(QDialog):
    """Pick what is wrong; the text box adapts (required, optional, or an edit of the memory)."""

    def __init__(self, memory: Memory, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.memory = memory
        self.setWindowTitle(self.tr("Correct memory #%1").replace("%1", str(memory.id)))
        self.setMinimumWidth(520)
        quote = QLabel(f"<b>{type_label(memory.type)}</b>: {memory.content[:400]}")
        quote.setWordWrap(True)
        quote.setTextFormat(quote.textFormat())
        self.group = QButtonGroup(self)
        self.radios: dict[str, QRadioButton] = {}
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(self.tr("What is wrong with this memory?")))
        layout.addWidget(quote)
        for i, (key, label, _help) in enumerate(CHOICES):
            radio = QRadioButton(QCoreApplication.translate("CorrectionDialog", label))
            radio.setObjectName(f"correction_{key}")
            radio.setToolTip(QCoreApplication.translate("CorrectionDialog", _help))
            self.group.addButton(radio, i)
            self.radios[key] = radio
            layout.addWidget(radio)
        self.help = QLabel()
        self.help.setWordWrap(True)
        self.text = QPlainTextEdit()
        self.text.setObjectName("correctionText")
        self.text.setTabChangesFocus(True)
        layout.addWidget(self.help)
        layout.addWidget(self.text)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText(self.tr("Apply correction"))
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.group.idToggled.connect(lambda _i, _on: self._changed())
        self.text.textChanged.connect(self._validate)
        self.radios["outdated"].setChecked(True)

    def kind(self) -> str:
        """The chosen correction kind."""
        return CHOICES[max(0, self.group.checkedId())][0]

    def set_kind(self, kind: str) -> None:
        """Choose a kind (tests and keyboard shortcuts)."""
        self.radios[kind].setChecked(True)

    def correction_text(self) -> str:
        """The text typed (replacement, refinement or correction)."""
        return self.text.toPlainText().strip()

    def _changed(self) -> None:
        kind = self.kind()
        self.help.setText(QCoreApplication.translate("CorrectionDialog", CHOICES[max(0, self.group.checkedId())][2]))
        placeholders = {
            "outdated": self.tr("How is it now? (optional)"),
            "partially_wrong": "",
            "does_not_apply": "",
            "incorrect": self.tr("What is correct? (required)"),
        }
        if kind == "partially_wrong" and not self.text.toPlainText().strip():
            self.text.setPlainText(self.memory.content)
        elif kind != "partially_wrong" and self.text.toPlainText() == self.memory.content:
            self.text.clear()
        self.text.setPlaceholderText(placeholders[kind])
        self.text.setEnabled(kind != "does_not_apply")
        self._validate()

    def _validate(self) -> None:
        kind, text = self.kind(), self.correction_text()
        ok = True
        if kind == "incorrect":
            ok = bool(text)
        elif kind == "partially_wrong":
            ok = bool(text) and text != self.memory.content.strip()
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(ok)
