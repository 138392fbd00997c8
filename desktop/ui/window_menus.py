"""The main window's menus, toolbar and project switcher, rebuilt whole when the language changes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QIcon, QKeySequence
from PySide6.QtWidgets import QComboBox, QMessageBox

from desktop import APP_NAME, __version__
from desktop.ui.theme import icon

if TYPE_CHECKING:
    from desktop.ui.main_window import MainWindow

# Qt maps "Ctrl" to the Command key on macOS, so this is Cmd+Shift+M there.
MEMORY_PANEL_SHORTCUT = "Ctrl+Shift+M"


class WindowMenus(QObject):
    """File, Project, View and Help, the toolbar with its project switcher; actions need a project to run."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self.build()

    def _action(self, text: str, slot: Callable[[], Any], *, icon_name: str = "", shortcut: Any = None,
                tip: str = "") -> QAction:
        action = QAction(icon(icon_name) if icon_name else QIcon(), text, self.w)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setToolTip(tip)
            action.setStatusTip(tip)
        action.triggered.connect(lambda _c=False: slot())
        return action

    def build(self) -> None:
        """(Re)build the menus, the toolbar and the switcher (after a language change too)."""
        w = self.w
        w.menuBar().clear()
        w.toolbar.clear()
        file_menu = w.menuBar().addMenu(self.tr("&File"))
        file_menu.addAction(self._action(self.tr("&Open Project…"), w.choose_project, icon_name="folder",
                                         shortcut=QKeySequence.StandardKey.Open))
        self.recent_menu = file_menu.addMenu(self.tr("Open &Recent"))
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        file_menu.addAction(self._action(self.tr("&Settings…"), w.flows.settings, icon_name="settings",
                                         shortcut=QKeySequence.StandardKey.Preferences))
        file_menu.addSeparator()
        file_menu.addAction(self._action(self.tr("&Quit"), w.close, shortcut=QKeySequence.StandardKey.Quit))
        project_menu = w.menuBar().addMenu(self.tr("&Project"))
        self.teach_action = self._action(self.tr("&Teach Engram…"), w.flows.teach, icon_name="teach",
                                         shortcut="Ctrl+T", tip=self.tr("Write down something agents should know"))
        self.review_action = self._action(self.tr("&Review Memories…"), w.flows.review_pending,
                                          icon_name="check", shortcut="Ctrl+R",
                                          tip=self.tr("Confirm or forget memories that wait for review"))
        self.conflicts_action = self._action(self.tr("Resolve &Conflicts…"), w.flows.resolve_conflicts,
                                             icon_name="shield", tip=self.tr("Decide between memories that disagree"))
        self.onboarding_action = self._action(self.tr("&Get to Know This Project…"), w.flows.start_onboarding,
                                              icon_name="import",
                                              tip=self.tr("Index the code and import agent rule files"))
        for a in (self.teach_action, self.review_action, self.conflicts_action, self.onboarding_action):
            project_menu.addAction(a)
        view_menu = w.menuBar().addMenu(self.tr("&View"))
        self.panel_action: QAction = QAction(icon("memory"), self.tr("&Memory Panel"), w)
        self.panel_action.setCheckable(True)
        self.panel_action.setToolTip(self.tr("Show or hide the memory panel (%1)").replace(
            "%1", QKeySequence(MEMORY_PANEL_SHORTCUT).toString(QKeySequence.SequenceFormat.NativeText)))
        # Shown in the menu; the QShortcut does the work so it fires app-wide.
        self.panel_action.setShortcut(QKeySequence(MEMORY_PANEL_SHORTCUT))
        self.panel_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.panel_action.triggered.connect(w.toggle_memory_panel)
        view_menu.addAction(self.panel_action)
        view_menu.addAction(self._action(self.tr("Last Session &Summary…"), w.flows.show_summary))
        help_menu = w.menuBar().addMenu(self.tr("&Help"))
        self.tour_action = self._action(self.tr("Guided &Tour (Sample Project)"), w.open_tour,
                                        tip=self.tr("Open a sample project Engram creates, with a scripted "
                                                    "agent; your projects are not touched"))
        help_menu.addAction(self.tour_action)
        help_menu.addAction(self._action(self.tr("&About Engram"), lambda: QMessageBox.about(
            w, APP_NAME, self.tr("Engram %1\nLong-term memory for AI coding agents.").replace("%1", __version__))))
        # toolbar.clear() deleted the previous switcher, so each (re)build makes a new one.
        self.switcher = QComboBox()
        self.switcher.setObjectName("projectSwitcher")
        self.switcher.setMinimumWidth(240)
        self.switcher.activated.connect(self._switch_chosen)
        self.switcher.setToolTip(self.tr("Switch project"))
        w.toolbar.addWidget(self.switcher)
        w.toolbar.addSeparator()
        for a in (self.teach_action, self.review_action, self.conflicts_action, self.panel_action):
            w.toolbar.addAction(a)
        w.toolbar.addAction(self._action(self.tr("Settings"), w.flows.settings, icon_name="settings",
                                            tip=self.tr("Models, keys, data, language, trust")))

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        for path in self.w.engram.registry.recent():
            action = self.recent_menu.addAction(str(path))
            action.triggered.connect(lambda _=False, p=path: self.w.open_project(p))

    def fill_switcher(self) -> None:
        """List the recent projects (and the open one, also when it is not recent: the tour)."""
        project = self.w.project
        self.switcher.blockSignals(True)
        self.switcher.clear()
        current = project.info.root if project else None
        recent = self.w.engram.registry.recent()
        if project is not None and all(Path(p) != Path(project.info.root) for p in recent):
            # The open project is not a recent one (the guided tour): the switcher still names it.
            from desktop.tour import is_tour_project

            name = self.tr("Guided tour (sample project)") if is_tour_project(project) \
                else project.info.root.name
            self.switcher.addItem(icon("folder"), name, str(project.info.root))
            self.switcher.setCurrentIndex(0)
        for path in recent:
            self.switcher.addItem(icon("folder"), path.name, str(path))
            self.switcher.setItemData(self.switcher.count() - 1, str(path), Qt.ItemDataRole.ToolTipRole)
            if current is not None and Path(path) == Path(current):
                self.switcher.setCurrentIndex(self.switcher.count() - 1)
        if current is None:
            self.switcher.insertItem(0, self.tr("No project open"), None)
            self.switcher.setCurrentIndex(0)
        self.switcher.addItem(self.tr("Open another folder…"), "__open__")
        self.switcher.blockSignals(False)

    def _switch_chosen(self, index: int) -> None:
        data, project = self.switcher.itemData(index), self.w.project
        if data == "__open__":
            self.fill_switcher()
            self.w.choose_project()
        elif data and (project is None or Path(data) != Path(project.info.root)):
            self.w.open_project(Path(data))

    def retitle(self) -> None:
        """Enable what needs a project, and name the window after the open one."""
        # What needs a project says so instead of doing nothing without one.
        w = self.w
        for action in (self.teach_action, self.review_action, self.conflicts_action, self.onboarding_action):
            action.setEnabled(w.project is not None)
        w.memory_dock.setWindowTitle(self.tr("Memory"))
        name = w.project.info.name if w.project else None
        w.setWindowTitle(f"{name} — {APP_NAME}" if name else APP_NAME)
