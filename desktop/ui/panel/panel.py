"""The memory panel (Ctrl/Cmd+Shift+M): health dashboard, module map, browser, Ask Memory, external agents."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QTabWidget, QWidget

from desktop.memory.store.changes import ChangeSet
from desktop.ui.memory_panel import MemoryBrowser
from desktop.ui.panel.ask import AskMemory
from desktop.ui.panel.dashboard import Dashboard
from desktop.ui.panel.external import ExternalSessions
from desktop.ui.panel.module_map import ModuleMap
from desktop.ui.tasks import Tasks
from desktop.ui.theme import icon

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.ui.panel")


class MemoryPanel(QTabWidget):
    """Five tabs over one project. Change notices are routed to the tabs that show that data."""

    correct_requested = Signal(int)
    status_message = Signal(str)

    def __init__(self, project: Project, tasks: Tasks, graph: Any | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("memoryTabs")
        self.dashboard = Dashboard(project, tasks)
        self.modules = ModuleMap(project, tasks, graph)
        self.browser = MemoryBrowser(project, tasks)
        self.ask = AskMemory(project, tasks)
        self.external = ExternalSessions(project, tasks)
        self.addTab(self.dashboard, icon("dashboard"), self.tr("&Health"))
        self.addTab(self.modules, icon("map"), self.tr("Module &map"))
        self.addTab(self.browser, icon("search"), self.tr("&Browse"))
        self.addTab(self.ask, icon("ask"), self.tr("As&k Memory"))
        self.addTab(self.external, icon("memory"), self.tr("&Agents"))
        self.setTabToolTip(0, self.tr("How healthy this project's memory is"))
        self.setTabToolTip(1, self.tr("Modules of the code, their dependencies and what memory knows about them"))
        self.setTabToolTip(2, self.tr("Search, filter and correct memories"))
        self.setTabToolTip(3, self.tr("Ask a question; the answer cites memories"))
        self.setTabToolTip(4, self.tr("What Claude Code, Codex and Gemini CLI sessions were told by Engram's hooks"))
        for w in (self.dashboard, self.ask):
            w.open_memory.connect(self.open_memory)
        self.browser.correct_requested.connect(self.correct_requested)
        self.browser.status_message.connect(self.status_message)
        self.external.correct_requested.connect(self.correct_requested)
        self.external.status_message.connect(self.status_message)
        self.currentChanged.connect(self._tab_changed)
        self.dashboard.refresh()

    def open_memory(self, memory_id: int) -> None:
        """Show one memory in the browser tab."""
        self.setCurrentWidget(self.browser)
        self.browser.show_memory(memory_id)

    def on_changes(self, changes: ChangeSet) -> None:
        """Already coalesced writer notices, on the GUI thread."""
        self.browser.on_changes(changes)
        self.external.on_changes(changes)
        if changes.touches("memory"):
            self.dashboard.schedule_refresh()
        if any(c.entity.startswith("graph") for c in changes.changes):
            self.modules.schedule_refresh()

    def _tab_changed(self, index: int) -> None:
        if self.widget(index) is self.modules:
            self.modules.refresh()
        elif self.widget(index) is self.dashboard:
            self.dashboard.refresh()
