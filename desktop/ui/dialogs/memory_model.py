"""Onboarding: let the agent CLI the user is logged into write memories (opt-in, its cost stated).

The rules learn without any model. With one, each finished session's evidence is also
turned into a few candidate memories by the model: here, through an agent CLI found on
this machine (``claude``, ``codex``, ``gemini``). Nothing is chosen by default; the cost
(one request of at most N tokens per session on the user's own account) is said before
anything is sent. The same choice is in Settings, Models.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtWidgets import QButtonGroup, QGroupBox, QLabel, QRadioButton, QVBoxLayout, QWidget

from desktop.agents.cli_model import AGENT_CLIS, detected_clis
from desktop.ui.tasks import Tasks

log = logging.getLogger("engram.ui")


class MemoryModelChooser(QGroupBox):
    """Rules only (ticked), or one of the agent CLIs found on PATH."""

    def __init__(self, token_cap: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTitle(self.tr("Learn with a model you already use (optional)"))
        self.setObjectName("memoryModelChooser")
        self.token_cap = token_cap
        self.group = QButtonGroup(self)
        self.col = QVBoxLayout(self)
        note = QLabel(self.tr("Engram's rules learn from your sessions for free. An agent you are logged into can "
                              "also write memories from each finished session: every one is checked against what "
                              "the session showed and waits for your review. You can change this in Settings."))
        note.setWordWrap(True)
        self.col.addWidget(note)
        self.rules_only = QRadioButton(self.tr("Rules only (nothing is sent, nothing is spent)"))
        self.rules_only.setObjectName("memoryModel-none")
        self.rules_only.setChecked(True)
        self.group.addButton(self.rules_only)
        self.col.addWidget(self.rules_only)
        self.buttons: dict[str, QRadioButton] = {}
        self.hide()  # until an agent CLI is found

    def detect(self, tasks: Tasks) -> None:
        """Look for the agent CLIs on a pool thread; the box appears when one is found."""
        tasks.run(detected_clis, self._show, lambda exc: log.warning("agent CLIs: %s", exc))

    def _show(self, kinds: list[str]) -> None:
        for kind in kinds:
            name = AGENT_CLIS[kind][1]
            button = QRadioButton(self.tr("%1: one request of at most %2 tokens per finished session, on your "
                                          "account").replace("%1", name).replace("%2", f"{self.token_cap:,}"))
            button.setObjectName(f"memoryModel-{kind}")
            self.group.addButton(button)
            self.buttons[kind] = button
            self.col.addWidget(button)
        self.setVisible(bool(self.buttons))

    def chosen(self) -> str | None:
        """The agent CLI ticked, or None (rules only)."""
        return next((kind for kind, b in self.buttons.items() if b.isChecked()), None)

    def apply(self, settings: Any, tasks: Tasks) -> None:
        """Store the choice in the settings (saved on a pool thread) when an agent CLI was ticked."""
        kind = self.chosen()
        if kind is None:
            return
        settings.memory_model = kind
        tasks.run(settings.save, None, lambda exc: log.warning("settings not saved: %s", exc))
