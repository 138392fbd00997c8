"""Which model runs the agent: the one chosen in Settings; the tour's scripted agent only on the tour project."""

from __future__ import annotations

from typing import cast

from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QComboBox, QWidget

from desktop.memory.project import Project
from desktop.ui.adapters.agent import PROVIDERS

NO_MODEL = "none"  # the entry shown when Settings name no model


class ProviderChoice(QComboBox):
    """The session view's provider menu; an entry that cannot run here is shown, greyed, with why."""

    def __init__(self, project: Project, tour: bool, parent: QWidget | None = None) -> None:
        """``tour``: ``project`` is the tour's sample, where the scripted agent runs and is the default."""
        super().__init__(parent)
        self.setObjectName("providerChoice")
        self.setToolTip(self.tr("Which model runs the agent (set it up in Settings)."))
        names = {"scripted": self.tr("Guided tour agent (sample project only)"),
                 "ollama": self.tr("Ollama (local)"), "openai": self.tr("OpenAI-compatible"),
                 "anthropic": self.tr("Anthropic")}
        for key in (*(k for k in PROVIDERS if k != "scripted"), "scripted"):
            self.addItem(names[key], key)
            if key == "scripted" and not tour:
                # model() is typed as the abstract base; a QComboBox's own model is a QStandardItemModel.
                item = cast(QStandardItemModel, self.model()).item(self.count() - 1)
                item.setEnabled(False)
                item.setToolTip(self.tr("The scripted tour agent changes nothing, so it runs only on the tour's "
                                        "sample project."))
        # The default is the model chosen in Settings; the tour agent only on the tour project.
        chosen = "scripted" if tour else project.settings.llm_provider
        if self.findData(chosen) >= 0:
            self.setCurrentIndex(self.findData(chosen))
        else:
            # Settings say no model: the window says the same, and Start waits for one.
            self.insertItem(0, self.tr("No model set up"), NO_MODEL)
            self.setCurrentIndex(0)

    def can_start(self) -> bool:
        """A model is chosen that can run here (never the "No model set up" entry)."""
        index = self.currentIndex()
        item = cast(QStandardItemModel, self.model()).item(index) if index >= 0 else None
        return self.currentData() not in (None, NO_MODEL) and item is not None and item.isEnabled()
