"""Resolve conflicting memories: keep new, keep old, or keep both (superseded-by chains recorded)."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QGridLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.adapters.lifecycle import Conflict


class ConflictCard(QFrame):
    """Old and new side by side with the three choices."""

    chosen = Signal(object, str)  # (Conflict, choice)

    def __init__(self, conflict: Conflict, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("card")
        self.conflict = conflict
        grid = QGridLayout(self)
        for col, (title, m) in enumerate(((self.tr("Older"), conflict.old), (self.tr("Newer"), conflict.new))):
            label = QLabel(f"<b>{html.escape(title)} · #{m.id}</b><br>{html.escape(m.content[:500])}"
                           f"<br><small>{html.escape(m.updated_at[:16])}</small>")
            label.setWordWrap(True)
            grid.addWidget(label, 0, col)
        self.buttons: dict[str, QPushButton] = {}
        for col, (key, text, tip) in enumerate((
                ("keep_new", self.tr("Keep &new"), self.tr("The newer memory replaces the older one")),
                ("keep_old", self.tr("Keep &old"), self.tr("The older memory stays; the newer one is retired")),
                ("keep_both", self.tr("Keep &both"), self.tr("Both are right (for different cases)")))):
            b = QPushButton(text)
            b.setObjectName(key)
            b.setToolTip(tip)
            b.clicked.connect(lambda _c, k=key: self.chosen.emit(self.conflict, k))
            self.buttons[key] = b
            grid.addWidget(b, 1, col)


class ConflictsDialog(QDialog):
    """Every open conflict of the project; resolving one removes its card."""

    resolve = Signal(object, str)

    def __init__(self, conflicts: list[Conflict], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Conflicting memories"))
        self.setMinimumSize(640, 420)
        self.cards: list[ConflictCard] = []
        body = QWidget()
        self.col = QVBoxLayout(body)
        self.empty = QLabel(self.tr("No conflicting memories. Nothing to decide."))
        self.col.addWidget(self.empty)
        for c in conflicts:
            card = ConflictCard(c)
            card.chosen.connect(self._chosen)
            self.cards.append(card)
            self.col.addWidget(card)
        self.col.addStretch(1)
        self.empty.setVisible(not conflicts)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        # The heading counts what is on screen, and says nothing disagrees when nothing does.
        self.heading = QLabel()
        self.heading.setObjectName("conflictsHeading")
        self.heading.setWordWrap(True)
        layout.addWidget(self.heading)
        layout.addWidget(scroll, 1)
        layout.addWidget(buttons)
        self._retitle()

    def _retitle(self) -> None:
        self.heading.setText(self.tr("%n pairs of memories disagree. For each, decide which one agents should "
                                     "believe.", "", len(self.cards)))
        self.heading.setVisible(bool(self.cards))
        self.empty.setVisible(not self.cards)

    def _chosen(self, conflict: Any, choice: str) -> None:
        self.resolve.emit(conflict, choice)
        for card in list(self.cards):
            if card.conflict is conflict:
                self.cards.remove(card)
                card.hide()
                card.deleteLater()
        self._retitle()
