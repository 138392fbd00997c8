"""With no model set up, the session view says how to connect one (never falls back to a demo)."""

from __future__ import annotations

import html

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop.agents.model_setup import ModelSetup
from desktop.agents.providers import DEFAULT_OLLAMA_MODEL


class ModelNotice(QFrame):
    """A banner: what is missing, what was found on this machine, and the two ways forward."""

    settings_requested = Signal()
    tour_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("modelNotice")
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextFormat(self.text.textFormat().RichText)
        self.settings_button = QPushButton(self.tr("Open &Settings…"))
        self.tour_button = QPushButton(self.tr("Take the guided &tour"))
        self.tour_button.setToolTip(self.tr("A sample project Engram creates for the tour; your projects "
                                            "are not touched"))
        self.settings_button.clicked.connect(self.settings_requested)
        self.tour_button.clicked.connect(self.tour_requested)
        buttons = QHBoxLayout()
        buttons.addWidget(self.settings_button)
        buttons.addWidget(self.tour_button)
        buttons.addStretch(1)
        col = QVBoxLayout(self)
        col.addWidget(self.text)
        col.addLayout(buttons)
        self.hide()

    def show_setup(self, setup: ModelSetup) -> None:
        """Hide when a model is configured; otherwise explain how to connect one."""
        if setup.configured:
            self.hide()
            return
        lines = [self.tr("<b>No model is set up for the agent.</b>")]
        if setup.ollama_running and setup.ollama_models:
            lines.append(self.tr("Ollama is running on this machine with %1. Choose Ollama and a model in "
                                 "Settings.").replace("%1", html.escape(", ".join(setup.ollama_models[:4]))))
        elif setup.ollama_running:
            lines.append(self.tr("Ollama is running on this machine but has no model yet: run "
                                 "<code>ollama pull %1</code>, then choose it in Settings.")
                         .replace("%1", DEFAULT_OLLAMA_MODEL))
        else:
            lines.append(self.tr("Ollama was not found on this machine: install it from ollama.com and run "
                                 "<code>ollama pull %1</code>, or use a hosted model.")
                         .replace("%1", DEFAULT_OLLAMA_MODEL))
        lines.append(self.tr("For a hosted model, choose OpenAI-compatible or Anthropic in Settings and add "
                             "its API key (kept in the system keyring)."))
        self.text.setText("<br>".join(lines))
        self.show()
