"""The main window: project switcher, the workspace, and the memory panel (Ctrl/Cmd+Shift+M)."""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from desktop import APP_NAME, __version__
from desktop.composition import Engram, ProjectServices
from desktop.memory.projects import move_aside_corrupt
from desktop.memory.store.errors import CorruptDatabaseError
from desktop.ui.memory_panel import MemoryBrowser
from desktop.ui.messages import describe_error
from desktop.ui.tasks import ChangeRelay, Tasks

log = logging.getLogger("engram.ui")

# Qt maps "Ctrl" to the Command key on macOS, so this is Cmd+Shift+M there.
MEMORY_PANEL_SHORTCUT = "Ctrl+Shift+M"


class WelcomePage(QWidget):
    """Shown while no project is open: open a folder or pick a recent one."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window_ = window
        title = QLabel(f"<h1>{APP_NAME}</h1>")
        blurb = QLabel(self.tr("Long-term memory of your codebase for AI coding agents.\n"
                               "Open a project folder to start."))
        blurb.setWordWrap(True)
        self.open_button = QPushButton(self.tr("&Open a project folder…"))
        self.open_button.setObjectName("openProject")
        self.open_button.clicked.connect(window.choose_project)
        self.recent = QListWidget()
        self.recent.setObjectName("recentProjects")
        self.recent.itemActivated.connect(lambda item: window.open_project(Path(item.data(Qt.ItemDataRole.UserRole))))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(48, 36, 48, 36)
        layout.addWidget(title)
        layout.addWidget(blurb)
        layout.addWidget(self.open_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(QLabel(self.tr("Recent projects")))
        layout.addWidget(self.recent, 1)

    def refresh(self, recent: list[Path]) -> None:
        """Show the recent projects list."""
        self.recent.clear()
        for path in recent:
            item = QListWidgetItem(f"{path.name}   —   {path}")
            item.setData(Qt.ItemDataRole.UserRole, str(path))
            self.recent.addItem(item)


class MainWindow(QMainWindow):
    """Top-level window. Owns the open project and the background task runner."""

    def __init__(self, engram: Engram) -> None:
        super().__init__()
        self.engram = engram
        self.project: ProjectServices | None = None
        self.tasks = Tasks(self)
        self.relay = ChangeRelay(self)
        self._unsubscribe = None
        self.setWindowTitle(APP_NAME)
        self.resize(1280, 800)

        self.stack = QStackedWidget()
        self.welcome = WelcomePage(self)
        self.workspace = QLabel()
        self.workspace.setObjectName("workspace")
        self.workspace.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.workspace.setWordWrap(True)
        self.stack.addWidget(self.welcome)
        self.stack.addWidget(self.workspace)
        self.setCentralWidget(self.stack)

        self.memory_dock = QDockWidget(self.tr("Memory"), self)
        self.memory_dock.setObjectName("memoryPanel")
        self.memory_dock.setAllowedAreas(Qt.DockWidgetArea.RightDockWidgetArea | Qt.DockWidgetArea.LeftDockWidgetArea)
        self.memory_dock.setMinimumWidth(520)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.memory_dock)
        self.memory_dock.hide()
        self.browser: MemoryBrowser | None = None

        self._build_menus()
        # An application-wide shortcut works from any widget or dialog of the app.
        self.panel_shortcut = QShortcut(QKeySequence(MEMORY_PANEL_SHORTCUT), self)
        self.panel_shortcut.setContext(Qt.ShortcutContext.ApplicationShortcut)
        self.panel_shortcut.activated.connect(self.toggle_memory_panel)
        self.relay.changed.connect(self._on_changes)
        self.welcome.refresh(self.engram.registry.recent())
        self.statusBar().showMessage(self.tr("Open a project to begin."))

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu(self.tr("&File"))
        open_action = QAction(self.tr("&Open Project…"), self)
        open_action.setShortcut(QKeySequence.StandardKey.Open)
        open_action.triggered.connect(self.choose_project)
        file_menu.addAction(open_action)
        self.recent_menu = file_menu.addMenu(self.tr("Open &Recent"))
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        file_menu.addSeparator()
        quit_action = QAction(self.tr("&Quit"), self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        view_menu = self.menuBar().addMenu(self.tr("&View"))
        self.panel_action = QAction(self.tr("&Memory Panel"), self)
        self.panel_action.setCheckable(True)
        # Shown in the menu; the QShortcut above does the work so it fires app-wide.
        self.panel_action.setShortcut(QKeySequence(MEMORY_PANEL_SHORTCUT))
        self.panel_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.panel_action.triggered.connect(self.toggle_memory_panel)
        view_menu.addAction(self.panel_action)
        help_menu = self.menuBar().addMenu(self.tr("&Help"))
        about = QAction(self.tr("&About Engram"), self)
        about.triggered.connect(lambda: QMessageBox.about(
            self, APP_NAME, self.tr("Engram %1\nLong-term memory for AI coding agents.").replace("%1", __version__)))
        help_menu.addAction(about)

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        for path in self.engram.registry.recent():
            action = self.recent_menu.addAction(str(path))
            action.triggered.connect(lambda _=False, p=path: self.open_project(p))

    # -- projects ----------------------------------------------------------------------
    def choose_project(self) -> None:
        """Ask for a folder and open it."""
        folder = QFileDialog.getExistingDirectory(self, self.tr("Open a project folder"), str(Path.home()))
        if folder:
            self.open_project(Path(folder))

    def open_project(self, folder: Path) -> None:
        """Open a project in the background (migrations and checks never block the window)."""
        self.statusBar().showMessage(self.tr("Opening %1…").replace("%1", str(folder)))
        self.tasks.run(lambda: self.engram.open_project(folder), self._project_opened,
                       lambda exc: self._open_failed(folder, exc))

    def _open_failed(self, folder: Path, exc: BaseException) -> None:
        self.statusBar().clearMessage()
        if isinstance(exc, CorruptDatabaseError):
            answer = QMessageBox.question(
                self, self.tr("Damaged memory"),
                describe_error(exc) + "\n\n" + self.tr(
                    "Move the damaged file aside (it is kept, renamed) and start with an empty memory?"),
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
            if answer == QMessageBox.StandardButton.Yes:
                moved = move_aside_corrupt(exc)
                self.statusBar().showMessage(self.tr("Damaged file kept as %1").replace("%1", str(moved)))
                self.open_project(folder)
            return
        QMessageBox.critical(self, self.tr("Cannot open project"), describe_error(exc))

    def _project_opened(self, project: ProjectServices) -> None:
        self.close_project()
        self.project = project
        self._unsubscribe = project.db.writer.subscribe(self.relay.listener)
        self.browser = MemoryBrowser(project, self.tasks, self)
        self.browser.status_message.connect(lambda text: self.statusBar().showMessage(text, 4000))
        self.memory_dock.setWidget(self.browser)
        self.workspace.setText(self.tr("<h2>%1</h2><p>%2</p><p>Press %3 to show or hide the memory panel.</p>")
                               .replace("%1", project.info.name).replace("%2", str(project.info.root))
                               .replace("%3", QKeySequence(MEMORY_PANEL_SHORTCUT).toString(
                                   QKeySequence.SequenceFormat.NativeText)))
        self.stack.setCurrentWidget(self.workspace)
        self.setWindowTitle(f"{project.info.name} — {APP_NAME}")
        self.set_memory_panel_visible(True)
        self.statusBar().showMessage(self.tr("Opened %1").replace("%1", project.info.name), 4000)

    def close_project(self) -> None:
        """Close the open project (queued writes are flushed first)."""
        if self.project is None:
            return
        if self._unsubscribe:
            self._unsubscribe()
        self.memory_dock.setWidget(QWidget())
        if self.browser:
            self.browser.deleteLater()
            self.browser = None
        self.tasks.wait_idle()
        self.project.close()
        self.project = None

    @Slot(object)
    def _on_changes(self, changes: object) -> None:
        if self.browser is not None:
            self.browser.on_changes(changes)  # type: ignore[arg-type]

    # -- memory panel --------------------------------------------------------------------
    def toggle_memory_panel(self) -> None:
        """Show or hide the memory panel (Ctrl+Shift+M, Cmd+Shift+M on macOS)."""
        self.set_memory_panel_visible(not self.memory_dock.isVisible())

    def set_memory_panel_visible(self, visible: bool) -> None:
        """Show/hide the panel and keep the menu check in step."""
        self.memory_dock.setVisible(visible)
        self.panel_action.setChecked(visible)
        if visible and self.browser is not None:
            self.browser.search.setFocus()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Flush and close the project before the window goes."""
        self.close_project()
        super().closeEvent(event)
