"""Settings → Team: connect the project to a team's PostgreSQL server, test it, choose what is shared.

The panel never touches the network or the database: it emits signals, and the
flows run the core's team actions (desktop.memory.team.service) on pool threads,
then call `show_state` / `show_message` with the answer.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.memory.team.state import NEVER_SHARED_TYPES, TeamState
from desktop.memory.types import MemoryType
from desktop.ui.labels import type_label


def error_words(code: str, detail: str = "") -> str:
    """A team error code in words (the UI's one table, ``ui/messages``); the core's detail otherwise."""
    from desktop.ui.messages import error_words as words

    return words().get(code, detail or code)


class TeamPanel(QWidget):
    """Connect / test / leave, and the per-type sharing policy."""

    test_requested = Signal(str)
    join_requested = Signal(str, str)  # url, display name
    leave_requested = Signal()
    types_changed = Signal(list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state_label = QLabel(self.tr("Reading the team settings…"))
        self.state_label.setObjectName("teamState")
        self.state_label.setWordWrap(True)
        self.url = QLineEdit()
        self.url.setObjectName("teamUrl")
        self.url.setEchoMode(QLineEdit.EchoMode.Password)  # it holds the team's password
        self.url.setPlaceholderText(self.tr("postgresql://team-role:password@host/database?sslmode=verify-full"))
        self.name = QLineEdit()
        self.name.setObjectName("teamMemberName")
        self.name.setPlaceholderText(self.tr("How teammates see you"))
        self.test_button = QPushButton(self.tr("&Test"))
        self.test_button.setObjectName("teamTest")
        self.test_button.clicked.connect(lambda: self.test_requested.emit(self.url.text().strip()))
        self.join_button = QPushButton(self.tr("&Connect"))
        self.join_button.setObjectName("teamJoin")
        self.join_button.clicked.connect(
            lambda: self.join_requested.emit(self.url.text().strip(), self.name.text().strip()))
        self.leave_button = QPushButton(self.tr("&Leave the team"))
        self.leave_button.setObjectName("teamLeave")
        self.leave_button.setToolTip(self.tr("Stops syncing; the memories on this computer are kept"))
        self.leave_button.clicked.connect(self.leave_requested.emit)
        self.message = QLabel()
        self.message.setObjectName("teamMessage")
        self.message.setWordWrap(True)
        buttons = QHBoxLayout()
        for b in (self.test_button, self.join_button, self.leave_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        form = QFormLayout()
        form.addRow(self.tr("Server &URL"), self.url)
        form.addRow(self.tr("Your &name"), self.name)
        share = QGroupBox(self.tr("Shared with the team"))
        grid = QGridLayout(share)
        self.type_boxes: dict[str, QCheckBox] = {}
        types = [t.value for t in MemoryType if t.value not in NEVER_SHARED_TYPES]
        for i, t in enumerate(types):
            box = QCheckBox(type_label(t))
            box.setObjectName(f"share_{t}")
            box.toggled.connect(self._types_toggled)
            self.type_boxes[t] = box
            grid.addWidget(box, i // 3, i % 3)
        note = QLabel(self.tr("Personal memories never leave this computer. Secrets are redacted before anything "
                              "is sent. One memory can be shared or kept personal with the Team button of the "
                              "memory browser."))
        note.setWordWrap(True)
        col = QVBoxLayout(self)
        col.addWidget(self.state_label)
        col.addLayout(form)
        col.addLayout(buttons)
        col.addWidget(self.message)
        col.addWidget(share)
        col.addWidget(note)
        col.addStretch(1)
        self._filling = False

    def show_state(self, state: TeamState) -> None:
        """Show the project's team connection and sharing policy."""
        self._filling = True
        if state.joined:
            self.state_label.setText(self.tr("Connected to team %1 on %2 as %3.").replace("%1", state.team_name)
                                     .replace("%2", state.server).replace("%3", state.member_name))
        else:
            self.state_label.setText(self.tr("Not connected to a team. Paste the join URL your team admin gave you."))
        self.leave_button.setEnabled(state.joined)
        for t, box in self.type_boxes.items():
            box.setChecked(t in state.shared_types)
        self._filling = False

    def show_message(self, text: str) -> None:
        """One line of feedback (test result, error in words)."""
        self.message.setText(text)

    def show_error(self, exc: BaseException) -> None:
        """A failed action, in words."""
        self.show_message(error_words(str(getattr(exc, "code", "")), str(exc)))

    def chosen_types(self) -> list[str]:
        """The checked memory types."""
        return [t for t, box in self.type_boxes.items() if box.isChecked()]

    def _types_toggled(self, _checked: Any) -> None:
        if not self._filling:
            self.types_changed.emit(self.chosen_types())
