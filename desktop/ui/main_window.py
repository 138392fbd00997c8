"""The main window: project switcher, the agent session, and the memory panel (Ctrl/Cmd+Shift+M)."""

from __future__ import annotations

import gc
import logging
import sys
from pathlib import Path
from typing import Any, cast

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtGui import QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from desktop.agents.model_setup import model_setup
from desktop.composition import Engram
from desktop.memory.graph.service import GraphService
from desktop.memory.preferences import ProjectPrefs
from desktop.memory.project import Project
from desktop.memory.project_services import Started, idle_maintenance, start_background
from desktop.memory.projects import move_aside_corrupt
from desktop.memory.store.changes import ChangeSet
from desktop.memory.store.errors import CorruptDatabaseError
from desktop.ui.closing import ProjectCloser
from desktop.ui.dialogs.approval import ApprovalBridge, session_policy
from desktop.ui.flows import Flows
from desktop.ui.memory_panel import MemoryBrowser
from desktop.ui.messages import describe_error
from desktop.ui.panel.panel import MemoryPanel
from desktop.ui.session.view import SessionView
from desktop.ui.tasks import ChangeRelay, Tasks
from desktop.ui.theme import app_icon
from desktop.ui.welcome import WelcomePage
from desktop.ui.window_menus import MEMORY_PANEL_SHORTCUT, WindowMenus

# Pruning runs at most once a day and staleness checks are cheap; look every 15 minutes.
IDLE_MAINTENANCE_MS = 15 * 60 * 1000
log = logging.getLogger("engram.ui")



class MainWindow(QMainWindow):
    """Top-level window. Owns the open project, its views and the background task runner."""

    def __init__(self, engram: Engram, *, onboarding: bool = True, background: bool = True) -> None:
        super().__init__()
        # Conflict watcher, search indexer, learning from installed agents' transcripts,
        # and idle pruning/staleness checks start with each project unless turned off (tests).
        self.background_services = background
        self._idle_timer = QTimer(self)
        self._idle_timer.setInterval(IDLE_MAINTENANCE_MS)
        self._idle_timer.timeout.connect(self._idle_maintenance)
        # Background threads (indexer, importer, writer, sessions) run Python code; a short GIL
        # switch interval hands the GIL back to the GUI thread often enough to paint smoothly.
        sys.setswitchinterval(min(sys.getswitchinterval(), 0.001))
        self.engram = engram
        self.auto_onboarding = onboarding
        self.project: Project | None = None
        self.graph: GraphService | None = None
        self.prefs = ProjectPrefs()
        self.panel: MemoryPanel | None = None
        self.panel_wanted = True  # the user's last show/hide of the memory panel, kept across project opens
        self.browser: MemoryBrowser | None = None
        self.session: SessionView | None = None
        self.tasks = Tasks(self, max_threads=4)
        self.relay = ChangeRelay(self)
        self.closer = ProjectCloser(self.statusBar(), self)
        self.flows = Flows(self)
        self._unsubscribe: Any = None
        self._pending: list[ChangeSet] = []
        self._coalesce = QTimer(self)
        self._coalesce.setSingleShot(True)
        self._coalesce.setInterval(60)
        self._coalesce.timeout.connect(self._dispatch_changes)
        self.setWindowIcon(app_icon())
        self.resize(1360, 840)

        self.stack = QStackedWidget()
        self.welcome = WelcomePage(self)
        self.workspace = QWidget()
        self.workspace.setObjectName("workspace")
        self.workspace_layout = QVBoxLayout(self.workspace)
        self.workspace_layout.setContentsMargins(0, 0, 0, 0)
        self.stack.addWidget(self.welcome)
        self.stack.addWidget(self.workspace)
        self.setCentralWidget(self.stack)

        self.memory_dock: QDockWidget = QDockWidget(self)
        self.memory_dock.setObjectName("memoryPanel")
        self.memory_dock.setAllowedAreas(Qt.DockWidgetArea.RightDockWidgetArea | Qt.DockWidgetArea.LeftDockWidgetArea)
        # Narrow enough that the window fits a 1024-px screen with the panel open (it never widens itself).
        self.memory_dock.setMinimumWidth(360)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.memory_dock)
        self.memory_dock.hide()
        self.memory_dock.visibilityChanged.connect(lambda v: self.menus.panel_action.setChecked(v))

        self.toolbar: QToolBar = QToolBar()
        self.toolbar.setObjectName("mainToolbar")
        self.toolbar.setMovable(False)
        self.addToolBar(self.toolbar)
        self.menus: WindowMenus = WindowMenus(self)
        # An application-wide shortcut works from any widget or dialog of the app.
        self.panel_shortcut = QShortcut(QKeySequence(MEMORY_PANEL_SHORTCUT), self)
        self.panel_shortcut.setContext(Qt.ShortcutContext.ApplicationShortcut)
        self.panel_shortcut.activated.connect(self.toggle_memory_panel)
        self.relay.changed.connect(self._on_changes)
        self.welcome.refresh(self.engram.registry.recent())
        self.menus.fill_switcher()
        self.menus.retitle()
        self.statusBar().showMessage(self.tr("Open a project to begin."))
        # Said while it lasts: another Engram window has this project open, so this one may be behind.
        self.elsewhere = QLabel(self.tr("Also open in another Engram window: changes made there show here "
                                        "after you reopen the project."))
        self.elsewhere.setObjectName("openElsewhere")
        self.elsewhere.setStyleSheet("color: #9a6700; font-weight: bold;")
        self.elsewhere.hide()
        self.statusBar().addPermanentWidget(self.elsewhere)

    # -- projects ----------------------------------------------------------------------------
    def forget_recent(self, folder: Path) -> None:
        """Take a folder off the recent projects (pool thread); its memory is kept in the data folder."""
        registry = self.engram.registry

        def done(_r: object) -> None:
            self.welcome.refresh(registry.recent())
            self.menus.fill_switcher()
            self.statusBar().showMessage(self.tr("Removed %1 from the recent projects").replace("%1", folder.name),
                                         4000)
        self.tasks.run(lambda: registry.forget(folder), done)

    def forget_current_project(self) -> None:
        """Close the open project and take it off the recent list (a folder with nothing to index)."""
        if self.project is not None:
            folder = Path(self.project.info.root)
            self.close_project()
            self.forget_recent(folder)

    def choose_project(self) -> None:
        """Ask for a folder and open it."""
        folder = QFileDialog.getExistingDirectory(self, self.tr("Open a project folder"), str(Path.home()))
        if folder:
            self.open_project(Path(folder))

    def open_project(self, folder: Path) -> None:
        """Open a project in the background (migrations, graph set-up and preferences never block the window)."""
        self.statusBar().showMessage(self.tr("Opening %1…").replace("%1", str(folder)))

        def work() -> tuple[Project, GraphService | None, ProjectPrefs]:
            from desktop.tour import seed_sample, tour_root

            tour = Path(folder).resolve() == tour_root(self.engram.settings.data_dir).resolve()
            project = self.engram.open_project(folder, remember=not tour)  # the tour is not a recent project
            project.lock_instance()  # released when the project closes
            if tour:
                seed_sample(project)
            graph: GraphService | None = None
            try:
                graph = project.graph
            except Exception:  # the app works without a code graph
                log.exception("code graph unavailable")
            return project, graph, project.preferences.load()
        self.tasks.run(work, self._project_opened, lambda exc: self._open_failed(folder, exc))

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

    def _project_opened(self, opened: tuple[Project, GraphService | None, ProjectPrefs]) -> None:
        self.close_project()
        self.project, self.graph, self.prefs = opened
        self._unsubscribe = self.project.db.writer.subscribe(self.relay.listener)
        self._build_views()
        self.stack.setCurrentWidget(self.workspace)
        self.menus.retitle()
        self.menus.fill_switcher()
        self.welcome.refresh(self.engram.registry.recent())
        self.set_memory_panel_visible(self.panel_wanted)
        self.statusBar().showMessage(self.tr("Opened %1").replace("%1", self.project.info.name), 4000)
        self.elsewhere.setVisible(self.project.open_elsewhere)
        # Long-lived objects (modules, Qt wrappers, the project's services) move out of the
        # collector's reach: a full collection then scans only new objects, so one triggered
        # by a busy worker thread no longer holds the GIL long enough to stall painting.
        gc.freeze()
        if self.auto_onboarding and not self.prefs.onboarding_done:
            self.flows.start_onboarding()
        if self.background_services:
            project = self.project
            self.tasks.run(lambda: start_background(project), self._services_started,
                           lambda exc: log.warning("background services: %s", exc))
            self._idle_timer.start()

    def _services_started(self, started: Started) -> None:
        learned = started.learned()
        if learned:
            self.statusBar().showMessage(
                self.tr("Learned %n memories from past agent sessions", "", learned), 6000)

    def _idle_maintenance(self) -> None:
        if self.project is not None:
            project = self.project
            self.tasks.run(lambda: idle_maintenance(project))

    def _build_views(self) -> None:
        project = self.project
        assert project is not None
        self.panel = MemoryPanel(project, self.tasks, self.graph, self)
        self.browser = self.panel.browser
        self.panel.correct_requested.connect(self.flows.correct)
        self.panel.status_message.connect(lambda text: self.statusBar().showMessage(text, 4000))
        self.memory_dock.setWidget(self.panel)
        self.approvals = ApprovalBridge(project.info.root, self)
        self.session = SessionView(project, lambda: self.prefs, lambda: self.graph, self.workspace,
                                   approval=lambda: session_policy(self.approvals, self.prefs.trust_level))
        self.session.notice.settings_requested.connect(self.flows.settings)
        self.session.notice.tour_requested.connect(self.open_tour)
        settings = self.engram.settings
        self.tasks.run(lambda: model_setup(settings), self._model_setup_known)
        self.session.teach_requested.connect(self.flows.teach)
        self.session.correct_requested.connect(self.flows.correct)
        self.session.open_memory.connect(self.open_memory)
        self.session.remember.connect(self.flows.remember)
        self.session.session_finished.connect(self.flows.session_finished)
        self.workspace_layout.addWidget(self.session)

    def _rebuild_panel(self) -> None:
        """Only the memory panel anew (the language changed while a session runs)."""
        project = self.project
        assert project is not None
        if self.panel is not None:
            self.panel.hide()
            self.panel.setParent(None)
            self.panel.deleteLater()
        self.panel = MemoryPanel(project, self.tasks, self.graph, self)
        self.browser = self.panel.browser
        self.panel.correct_requested.connect(self.flows.correct)
        self.panel.status_message.connect(lambda text: self.statusBar().showMessage(text, 4000))
        self.memory_dock.setWidget(self.panel)

    def _drop_views(self) -> Any:
        """Remove the project's views at once; returns a still-running session thread (or None)."""
        running = None
        if self.session is not None:
            running = self.session.shutdown()
            self.workspace_layout.removeWidget(self.session)
            # Hide and unparent now: a deferred delete waits for the event loop to come round.
            self.session.hide()
            self.session.setParent(None)
            self.session.deleteLater()
            self.session = None
        self.memory_dock.setWidget(QWidget())
        if self.panel is not None:
            self.panel.hide()
            self.panel.setParent(None)
            self.panel.deleteLater()
            self.panel = None
            self.browser = None
        return running

    def close_project(self) -> None:
        """Close the open project; the waits (session, index, flush, writer) run off the GUI thread.

        The views go at once; the status bar shows what is being stopped until it is done.
        """
        if self.project is None:
            return
        self._idle_timer.stop()
        if self._unsubscribe:
            self._unsubscribe()
            self._unsubscribe = None
        running = self._drop_views()
        self.closer.close(self.project, self.tasks, running)
        self.project = None
        self.graph = None
        self.elsewhere.hide()
        self.stack.setCurrentWidget(self.welcome)
        self.menus.retitle()

    def _model_setup_known(self, setup: Any) -> None:
        if self.session is not None:
            self.session.show_model_setup(setup)

    def open_tour(self) -> None:
        """Create (once) and open the guided tour's sample project; the user's projects are not touched."""
        from desktop.tour import create_sample

        data_dir = self.engram.settings.data_dir
        def failed(exc: BaseException) -> None:
            QMessageBox.critical(self, self.tr("Cannot open the tour"), describe_error(exc))
        self.tasks.run(lambda: create_sample(data_dir), self.open_project, failed)

    def wait_closed(self, timeout: float = 120.0) -> bool:
        """Block until closed projects are fully closed (app exit and tests only)."""
        return self.closer.wait(timeout)

    def open_memory(self, memory_id: int) -> None:
        """Show one memory in the panel's browser."""
        self.set_memory_panel_visible(True)
        if self.panel is not None:
            self.panel.open_memory(memory_id)

    # -- change notices (coalesced) -----------------------------------------------------------
    @Slot(object)
    def _on_changes(self, changes: ChangeSet) -> None:
        self._pending.append(changes)
        if not self._coalesce.isActive():
            self._coalesce.start()

    def _dispatch_changes(self) -> None:
        merged = ChangeSet([c for cs in self._pending for c in cs.changes])
        self._pending = []
        if self.panel is not None:
            self.panel.on_changes(merged)

    # -- language --------------------------------------------------------------------------------
    def switch_language(self, language: str) -> None:
        """Install the new translators and rebuild the visible UI in that language."""
        from PySide6.QtWidgets import QApplication

        from desktop.ui.app import install_translators

        # instance() is typed as the base QCoreApplication; this window runs in a QApplication.
        install_translators(cast(QApplication, QApplication.instance()), language)
        self.menus.build()
        self.stack.removeWidget(self.welcome)
        self.welcome.deleteLater()
        self.welcome = WelcomePage(self)
        self.stack.insertWidget(0, self.welcome)
        self.welcome.refresh(self.engram.registry.recent())
        if self.project is not None:
            # The session's transcript, chips and typed text survive the rebuild in the new language.
            kept = self.session.keep() if self.session is not None else None
            running = self.session is not None and self.session.runner.is_running()
            if running:
                self._rebuild_panel()  # a running session keeps its view; it is relabelled when it ends
            else:
                self._drop_views()
                self._build_views()
                if kept is not None and self.session is not None:
                    self.session.restore(kept)
        else:
            self.stack.setCurrentWidget(self.welcome)
        self.menus.fill_switcher()
        self.menus.retitle()
        self.statusBar().showMessage(self.tr("Language changed. Dialogs already open keep the old language "
                                             "until reopened."), 6000)

    # -- memory panel ----------------------------------------------------------------------------
    def toggle_memory_panel(self) -> None:
        """Show or hide the memory panel (Ctrl+Shift+M, Cmd+Shift+M on macOS); the choice holds for the next project."""
        self.panel_wanted = not self.memory_dock.isVisible()
        self.set_memory_panel_visible(self.panel_wanted)

    def set_memory_panel_visible(self, visible: bool) -> None:
        """Show/hide the panel and keep the menu check in step."""
        self.memory_dock.setVisible(visible)
        self.menus.panel_action.setChecked(visible)
        if visible and self.browser is not None and self.panel is not None \
                and self.panel.currentWidget() is self.browser:
            self.browser.search.setFocus()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Close the project; the window goes once its last changes are written (progress shown)."""
        self.close_project()
        if self.closer.busy:
            event.ignore()
            self.closer.finished.connect(self.close, Qt.ConnectionType.SingleShotConnection)
            return
        super().closeEvent(event)
