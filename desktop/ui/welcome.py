"""The welcome page: shown while no project is open, to open a folder or pick a recent project."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QMenu, QPushButton, QVBoxLayout, QWidget

from desktop import APP_NAME
from desktop.ui.theme import icon

if TYPE_CHECKING:
    from desktop.ui.main_window import MainWindow


class WelcomePage(QWidget):
    """Shown while no project is open: open a folder or pick a recent one."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        title = QLabel(f"<h1>{APP_NAME}</h1>")
        blurb = QLabel(self.tr("Long-term memory of your codebase for AI coding agents.\n"
                               "Open a project folder to start."))
        blurb.setWordWrap(True)
        self.open_button = QPushButton(icon("folder"), self.tr("&Open a project folder…"))
        self.open_button.setObjectName("openProject")
        self.open_button.clicked.connect(window.choose_project)
        self.recent = QListWidget()
        self.recent.setObjectName("recentProjects")
        self.recent.setToolTip(self.tr("Double-click to open; right-click or Delete to remove from this list"))
        self.recent.itemActivated.connect(lambda item: window.open_project(Path(item.data(Qt.ItemDataRole.UserRole))))
        self.recent.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.recent.customContextMenuRequested.connect(self._recent_menu)
        self.remove_recent = QAction(self.tr("&Remove from Recent Projects"), self.recent)
        self.remove_recent.setShortcut(QKeySequence.StandardKey.Delete)
        self.remove_recent.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.remove_recent.triggered.connect(self._remove_selected)
        self.recent.addAction(self.remove_recent)
        self.main = window
        layout = QVBoxLayout(self)
        layout.setContentsMargins(48, 36, 48, 36)
        layout.addWidget(title)
        layout.addWidget(blurb)
        layout.addWidget(self.open_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(QLabel(self.tr("Recent projects")))
        layout.addWidget(self.recent, 1)

    def _recent_menu(self, pos: Any) -> None:
        if self.recent.itemAt(pos) is not None:
            menu = QMenu(self.recent)
            menu.addAction(self.remove_recent)
            menu.exec(self.recent.mapToGlobal(pos))

    def _remove_selected(self) -> None:
        item = self.recent.currentItem()
        if item is not None:
            self.main.forget_recent(Path(item.data(Qt.ItemDataRole.UserRole)))

    def refresh(self, recent: list[Path]) -> None:
        """Show the recent projects list."""
        self.recent.clear()
        for path in recent:
            item = QListWidgetItem(f"{path.name}   —   {path}")
            item.setData(Qt.ItemDataRole.UserRole, str(path))
            self.recent.addItem(item)
