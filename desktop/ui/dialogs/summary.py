"""The session-end summary: what the agent used, what it learned, and your verdict on each.

[ok] raises confidence by 0.1 and marks the memory verified, [edit] opens an inline
editor, [forget] retires it. "Save all confirmed" confirms every new memory you did
not forget; "Review later" keeps the undecided ones flagged for review. How much
is shown follows the trust level and the dismissal rule (desktop.ui.trust).
"""

from __future__ import annotations

import html
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from desktop.memory.types import Memory
from desktop.ui.labels import type_label
from desktop.ui.theme import icon

if TYPE_CHECKING:
    from desktop.memory.project import Project


class LearnedRow(QFrame):
    """One new memory: position, type, files, content and ok / edit / forget."""

    changed = Signal()

    def __init__(self, index: int, total: int, memory: Memory, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("card")
        self.memory = memory
        self.decision = ""  # "", "ok", "edit", "forget"
        where = ", ".join(memory.related_files[:2]) or self.tr("global")
        head = QLabel(f"<b>{index}/{total}</b>&nbsp;&nbsp;<b>{html.escape(type_label(memory.type).upper())}</b>"
                      f"&nbsp;&nbsp;{html.escape(where)}")
        self.text = QLabel(memory.content)
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.setWordWrap(True)
        self.editor = QPlainTextEdit(memory.content)
        self.editor.setTabChangesFocus(True)
        self.editor.setMaximumHeight(80)
        self.editor.hide()
        self.ok = QPushButton(icon("check"), self.tr("OK"))
        self.ok.setCheckable(True)
        self.ok.setToolTip(self.tr("Right: keep it and raise its confidence"))
        self.edit = QPushButton(icon("edit"), self.tr("Edit"))
        self.edit.setCheckable(True)
        self.edit.setToolTip(self.tr("Almost right: fix the wording"))
        self.forget = QPushButton(icon("forget"), self.tr("Forget"))
        self.forget.setCheckable(True)
        self.forget.setToolTip(self.tr("Wrong or useless: agents will not see it"))
        for b in (self.ok, self.edit, self.forget):
            b.clicked.connect(lambda _c, b=b: self._choose(b))
        buttons = QHBoxLayout()
        buttons.addWidget(head, 1)
        for b in (self.ok, self.edit, self.forget):
            buttons.addWidget(b)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.text)
        layout.addWidget(self.editor)

    def _choose(self, button: QPushButton) -> None:
        for b in (self.ok, self.edit, self.forget):
            b.setChecked(b is button and button.isChecked())
        self.decision = {self.ok: "ok", self.edit: "edit", self.forget: "forget"}[button] \
            if button.isChecked() else ""
        self.editor.setVisible(self.decision == "edit")
        self.text.setVisible(self.decision != "edit")
        if self.decision == "edit":
            self.editor.setFocus()
        self.changed.emit()


class SessionSummary(QDialog):
    """The summary dialog. `result_action` is "save", "later" or "" (closed)."""

    correct_requested = Signal(int)

    def __init__(self, used: list[Memory], learned: list[Memory], *, mode: str = "full",
                 title: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Session complete"))
        self.setMinimumSize(640, 480)
        self.mode = mode
        self.interacted = False
        self.result_action = ""
        shown = [m for m in learned if m.needs_review or m.candidate] if mode == "review_only" else learned
        self.rows: list[LearnedRow] = []
        body = QWidget()
        col = QVBoxLayout(body)
        col.addWidget(QLabel("<h2>" + html.escape(title or self.tr("Session complete")) + "</h2>"))
        col.addWidget(QLabel("<h3>" + html.escape(self.tr("What the agent remembered")) + "</h3>"))
        if not used:
            col.addWidget(QLabel(self.tr("No memory was used.")))
        for m in used:
            row = QHBoxLayout()
            label = QLabel(m.citation())
            label.setTextFormat(Qt.TextFormat.PlainText)
            label.setWordWrap(True)
            flag = QPushButton(icon("flag"), self.tr("Flag"))
            flag.setToolTip(self.tr("This memory was wrong — correct it"))
            flag.clicked.connect(lambda _c, mid=m.id: self._flag(mid))
            row.addWidget(label, 1)
            row.addWidget(flag)
            col.addLayout(row)
        heading = self.tr("What the agent learned (%n new memories)", "", len(shown))
        if mode == "review_only":
            heading = self.tr("New memories that need your review (%n)", "", len(shown))
        col.addWidget(QLabel(f"<h3>{html.escape(heading)}</h3>"))
        for i, m in enumerate(shown, 1):
            r = LearnedRow(i, len(shown), m)
            r.changed.connect(self._touched)
            self.rows.append(r)
            col.addWidget(r)
        col.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        self.save_button = QPushButton(self.tr("&Save all confirmed"))
        self.save_button.setObjectName("saveAllConfirmed")
        self.save_button.setToolTip(self.tr("Keep every new memory you did not forget, as confirmed"))
        self.save_button.setDefault(True)
        self.later_button = QPushButton(self.tr("&Review later"))
        self.later_button.setObjectName("reviewLater")
        self.later_button.setToolTip(self.tr("Apply what you decided; the rest waits in “Needs review”"))
        self.save_button.clicked.connect(lambda: self._finish("save"))
        self.later_button.clicked.connect(lambda: self._finish("later"))
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.later_button)
        buttons.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.addWidget(scroll, 1)
        layout.addLayout(buttons)

    def _touched(self) -> None:
        self.interacted = True

    def _flag(self, memory_id: int) -> None:
        self.interacted = True
        self.correct_requested.emit(memory_id)

    def _finish(self, action: str) -> None:
        self.result_action = action
        if action == "save":
            self.interacted = True
        self.accept()

    def decisions(self) -> dict[int, tuple[str, str]]:
        """memory id -> (decision, edited text). Undecided rows are "ok" after "Save all confirmed"."""
        out: dict[int, tuple[str, str]] = {}
        for r in self.rows:
            decision = r.decision or ("ok" if self.result_action == "save" else "")
            if decision:
                out[r.memory.id] = (decision, r.editor.toPlainText().strip())
        return out


def apply_decisions(project: Project, learned: dict[int, Memory], decisions: dict[int, tuple[str, str]]
                    ) -> list[Future[Any]]:
    """Write the summary's verdicts through the writer; returns the futures."""
    svc = project.memories
    futures: list[Future[Any]] = []
    for mid, (decision, text) in decisions.items():
        m = learned.get(mid)
        if m is None:
            continue
        if decision == "forget":
            futures.append(svc.deprecate(mid, reason="rejected in the session summary"))
            continue
        changes: dict[str, Any] = {"confidence": round(min(1.0, m.confidence + 0.1), 2)}
        if decision == "edit" and text and text != m.content:
            changes["content"] = text
        futures.append(svc.edit(mid, changes, reason="session summary"))
        futures.append(svc.verify(mid))
    return futures
