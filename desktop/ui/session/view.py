"""The agent session view: choose a provider, start and stop, watch the answer stream in.

Citations become amber chips (red for dead ends) with a flag button; tool calls are
folded into a tree; `/remember TEXT` teaches a memory; selected output or a file
(right-click) can be taught; a prompt starting "Actually…" offers a correction.
"""

from __future__ import annotations

import html
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QDir, QPoint, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QTextCursor
from PySide6.QtWidgets import (
    QFileSystemModel,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QTreeView,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.memory.citations import find_citations
from desktop.memory.preferences import ProjectPrefs
from desktop.memory.project import Project
from desktop.tour import is_tour_project
from desktop.ui.adapters.agent import SessionEvent, SessionRequest
from desktop.ui.session.citations import CitationBar, chip_html
from desktop.ui.session.provider_choice import ProviderChoice
from desktop.ui.session.runner import SessionRunner
from desktop.ui.session.setup_notice import ModelNotice
from desktop.ui.theme import icon

log = logging.getLogger("engram.ui.session")

ACTUALLY = re.compile(r"^\s*(actually|en fait|no,|non,)\b", re.IGNORECASE)
REMEMBER = re.compile(r"^\s*/remember\s+(.+)$", re.IGNORECASE | re.DOTALL)


@dataclass
class SessionState:
    """A session view's visible state, kept across a rebuild."""

    output_html: str
    input_text: str
    chips: list[tuple[int, str, bool, str]]
    types: dict[int, str]
    metrics: dict[str, Any]


class SessionView(QWidget):
    """One project's agent session: provider, prompt, streaming output, citations, tool calls."""

    teach_requested = Signal(str, list)     # text, related files
    correct_requested = Signal(int)          # memory id
    open_memory = Signal(int)
    remember = Signal(str)                   # /remember TEXT
    session_finished = Signal(dict)          # metrics of the session that ended

    def __init__(self, project: Project, prefs: Callable[[], ProjectPrefs],
                 graph: Callable[[], Any], parent: QWidget | None = None, *,
                 approval: Callable[[], Any] | None = None) -> None:
        """``approval()`` gives each session its approval policy (the window's dialog, per trust level)."""
        super().__init__(parent)
        self.project = project
        self._approval = approval
        self._prefs = prefs
        self._graph = graph
        self.runner = SessionRunner(self)
        self.runner.session_event.connect(self.on_event)
        self.runner.running_changed.connect(self._running_changed)
        self.types: dict[int, str] = {}
        self.shared_by: dict[int, str] = {}  # memory id -> teammate who shared it
        self._pending = ""
        self.metrics: dict[str, Any] = {}

        tour = is_tour_project(project)
        self.provider = ProviderChoice(project, tour)
        top = self._build_controls()
        self._build_file_tree()
        self._build_transcript(tour)
        self._build_banner()
        self._build_input(tour)
        self._lay_out(top)
        self.start_button.clicked.connect(self.submit)
        self.stop_button.clicked.connect(self.runner.stop)
        self.provider.currentIndexChanged.connect(lambda _i: self._update_start())
        self._update_start()
        run = QShortcut(QKeySequence("Ctrl+Return"), self.input)
        run.activated.connect(self.submit)
        self.input.textChanged.connect(self._check_actually)

    # -- construction, one part each ----------------------------------------------------------
    def _build_controls(self) -> QHBoxLayout:
        """The model notice, Start and Stop, and the session's state, in the row above the transcript."""
        self.notice = ModelNotice(self)
        self.start_button = QPushButton(icon("play"), self.tr("&Start"))
        self.start_button.setObjectName("startSession")
        self.start_button.setToolTip(self.tr("Run the agent on the task (Ctrl+Enter)"))
        self.stop_button = QPushButton(icon("stop"), self.tr("S&top"))
        self.stop_button.setObjectName("stopSession")
        self.stop_button.setToolTip(self.tr("Stop the agent after its current step"))
        self.stop_button.setEnabled(False)
        self.state = QLabel(self.tr("Ready"))
        top = QHBoxLayout()
        provider_label = QLabel(self.tr("&Provider:"))
        provider_label.setBuddy(self.provider)
        top.addWidget(provider_label)
        top.addWidget(self.provider)
        top.addWidget(self.start_button)
        top.addWidget(self.stop_button)
        top.addStretch(1)
        top.addWidget(self.state)
        return top

    def _build_file_tree(self) -> None:
        """The project's files: right-click one to teach Engram something about it."""
        self.files = QTreeView()
        self.files.setObjectName("fileTree")
        self.fs = QFileSystemModel(self)
        self.fs.setFilter(QDir.Filter.AllDirs | QDir.Filter.Files | QDir.Filter.NoDotAndDotDot)
        self.fs.setRootPath(str(self.project.info.root))
        self.files.setModel(self.fs)
        self.files.setRootIndex(self.fs.index(str(self.project.info.root)))
        for col in (1, 2, 3):
            self.files.hideColumn(col)
        self.files.setHeaderHidden(True)
        self.files.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.files.customContextMenuRequested.connect(self._file_menu)
        self.files.setToolTip(self.tr("Right-click a file to teach Engram something about it"))

    def _build_transcript(self, tour: bool) -> None:
        """The streamed answer, its citation chips and the folded tool calls."""
        self.output = QTextBrowser()
        self.output.setObjectName("sessionOutput")
        self.output.setOpenLinks(False)
        self.output.anchorClicked.connect(lambda url: self._link(url.toString()))
        self.output.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.output.customContextMenuRequested.connect(self._output_menu)
        self.output.setPlaceholderText(self.tr("The agent's answer streams here. Memories it cites "
                                               "appear as chips you can flag."))
        self.chips = CitationBar()
        self.chips.flag_clicked.connect(self.correct_requested)
        self.chips.open_clicked.connect(self.open_memory)
        self.tools = QTreeWidget()
        self.tools.setObjectName("toolCalls")
        self.tools.setHeaderLabels([self.tr("Tool calls")])
        self.tools.setMaximumHeight(130)
        self.tools.setToolTip(self.tr("Tools the agent called; unfold one to see its arguments and result"))
        if tour:
            self.output.setPlaceholderText(self.tr(
                "Guided tour: press Start to run the suggested task. The tour's agent reads the sample "
                "project's memories and cites them as chips: click a chip to open the memory, flag it if "
                "it is wrong. It changes no file."))

    def _build_banner(self) -> None:
        """'Actually…' typed in the input: offer to save it as a correction."""
        self.banner = QFrame()
        self.banner.setObjectName("banner")
        self.banner_label = QLabel(self.tr("Sounds like a correction. Create a correction memory?"))
        self.banner_teach = QPushButton(self.tr("Create &correction…"))
        self.banner_close = QPushButton(self.tr("Dismiss"))
        row = QHBoxLayout(self.banner)
        row.addWidget(self.banner_label, 1)
        row.addWidget(self.banner_teach)
        row.addWidget(self.banner_close)
        self.banner.hide()
        self.banner_teach.clicked.connect(self._teach_from_banner)
        self.banner_close.clicked.connect(self.banner.hide)

    def _build_input(self, tour: bool) -> None:
        """Where the task is typed (the tour suggests one its sample memories answer)."""
        self.input = QPlainTextEdit()
        self.input.setObjectName("sessionInput")
        self.input.setTabChangesFocus(True)
        self.input.setMaximumHeight(90)
        self.input.setPlaceholderText(self.tr("Describe a task, then Ctrl+Enter. “/remember TEXT” teaches "
                                              "a memory right away."))
        if tour:
            # The tour says what to try: a task its sample memories answer, ready to run.
            from desktop.tour import SUGGESTED_TASK

            self.input.setPlainText(SUGGESTED_TASK)
            self.input.setPlaceholderText(self.tr("Try a task such as “%1”, then Ctrl+Enter.")
                                          .replace("%1", SUGGESTED_TASK))

    def _lay_out(self, top: QHBoxLayout) -> None:
        """Files on the left; the transcript, chips, tool calls, banner and input on the right."""
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.output, 1)
        rl.addWidget(self.chips)
        rl.addWidget(self.tools)
        rl.addWidget(self.banner)
        rl.addWidget(self.input)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.files)
        split.addWidget(right)
        split.setSizes([220, 760])
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.notice)
        layout.addWidget(split, 1)

    # -- input -----------------------------------------------------------------------------
    def submit(self) -> None:
        """Run the typed prompt, or teach when it is `/remember TEXT`."""
        text = self.input.toPlainText().strip()
        if not text:
            return
        taught = REMEMBER.match(text)
        if taught:
            self.remember.emit(taught.group(1).strip())
            self.input.clear()
            return
        if not self.can_start():
            self.state.setText(self.tr("Set up a model in Settings first"))
            return
        self.start(text)

    def start(self, prompt: str) -> bool:
        """Start a session on `prompt` with the chosen provider."""
        request = SessionRequest(self.project, prompt, self.provider.currentData(), self._prefs(), self._graph(),
                                 approval=self._approval() if self._approval is not None else None)
        if not self.runner.start(request):
            return False
        self.output.clear()
        self.chips.clear()
        self.tools.clear()
        self.types.clear()
        self.shared_by.clear()
        self._pending = ""
        self.metrics = {}
        you = self.tr("You")
        self.output.append(f"<p><b>{html.escape(you)}:</b> {html.escape(prompt)}</p>")
        self.output.append("")  # the answer streams into its own paragraph
        self.input.clear()
        return True

    def _check_actually(self) -> None:
        if ACTUALLY.match(self.input.toPlainText()):
            self.banner.show()

    def _teach_from_banner(self) -> None:
        self.banner.hide()
        self.teach_requested.emit(self.input.toPlainText().strip(), [])

    # -- events ----------------------------------------------------------------------------
    def on_event(self, ev: SessionEvent) -> None:
        """Show one session event (GUI thread)."""
        if ev.kind == "status":
            self.state.setText(self.tr("Recalling memories…"))
        elif ev.kind in ("injected", "shown"):
            self.types.update({int(k): v for k, v in ev.data.get("types", {}).items()})
            self.shared_by.update({int(k): v for k, v in ev.data.get("shared_by", {}).items()})
            if ev.kind == "injected":
                self.state.setText(self.tr("%n memories given to the agent", "", len(ev.data.get("ids", []))))
        elif ev.kind == "tool_call":
            item = QTreeWidgetItem([self.tr("Called %1").replace("%1", ev.text)])
            item.addChild(QTreeWidgetItem([json.dumps(ev.data.get("arguments", {}), ensure_ascii=False)[:400]]))
            self.tools.addTopLevelItem(item)
        elif ev.kind == "tool_result":
            top = self.tools.topLevelItem(self.tools.topLevelItemCount() - 1)
            if top is not None:
                top.addChild(QTreeWidgetItem([json.dumps(ev.data.get("result"), ensure_ascii=False,
                                                         default=str)[:600]]))
        elif ev.kind == "text":
            self._stream(ev.text)
        elif ev.kind == "error":
            failed = self.tr("The session failed:")
            self.output.append(f"<p><b>{html.escape(failed)}</b> "
                               f"{html.escape(ev.text)}</p>")
        elif ev.kind == "done":
            self._stream("", flush=True)
            self.metrics = dict(ev.data)
            self.state.setText(self.tr("Stopped") if ev.data.get("cancelled") else
                               self.tr("Failed") if ev.data.get("error") else self.tr("Finished"))
            self.session_finished.emit(self.metrics)

    def _stream(self, chunk: str, *, flush: bool = False) -> None:
        # Hold back an unfinished "[Memory #…" so a citation split across chunks still becomes a chip.
        self._pending += chunk
        cut = len(self._pending)
        open_at = self._pending.rfind("[")
        if not flush and open_at > self._pending.rfind("]"):
            cut = open_at
        ready, self._pending = self._pending[:cut], self._pending[cut:]
        if not ready:
            return
        parts, last = [], 0
        for c in find_citations(ready):
            parts.append(html.escape(ready[last:c.start]))
            dead = self.types.get(c.memory_id) == "dead_end"
            parts.append(chip_html(c.memory_id, c.brief, dead))
            self.chips.add(c.memory_id, c.brief, dead_end=dead, shared_by=self.shared_by.get(c.memory_id, ""))
            last = c.end
        parts.append(html.escape(ready[last:]))
        cursor = self.output.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertHtml("".join(parts).replace("\n", "<br>"))
        self.output.setTextCursor(cursor)

    def can_start(self) -> bool:
        """A model is chosen that can run here (never the "No model set up" entry)."""
        return self.provider.can_start()

    def _update_start(self, running: bool | None = None) -> None:
        busy = self.runner.is_running() if running is None else running
        ready = self.can_start() and not busy
        self.start_button.setEnabled(ready)
        self.start_button.setToolTip(self.tr("Run the agent on the task (Ctrl+Enter)") if self.can_start()
                                     else self.tr("Set up a model in Settings first"))

    def _running_changed(self, running: bool) -> None:
        self._update_start(running)
        self.stop_button.setEnabled(running)
        self.provider.setEnabled(not running)
        if running:
            self.state.setText(self.tr("Running…"))

    def _link(self, url: str) -> None:
        if url.startswith("memory:"):
            self.open_memory.emit(int(url.split(":", 1)[1]))

    # -- teach from output or files -----------------------------------------------------------
    def _output_menu(self, pos: QPoint) -> None:
        menu = self.output.createStandardContextMenu()
        selected = self.output.textCursor().selectedText().replace("\u2029", "\n").strip()
        teach = menu.addAction(icon("teach"), self.tr("Teach Engram this…"))
        teach.setEnabled(bool(selected))
        teach.triggered.connect(lambda: self.teach_requested.emit(selected, []))
        menu.exec(self.output.mapToGlobal(pos))

    def file_path_at(self, index: Any) -> str:
        """Project-relative path of a file-tree index."""
        full = Path(self.fs.filePath(index))
        try:
            return str(full.relative_to(self.project.info.root))
        except ValueError:
            return str(full)

    def _file_menu(self, pos: QPoint) -> None:
        index = self.files.indexAt(pos)
        if not index.isValid():
            return
        rel = self.file_path_at(index)
        menu = QMenu(self)
        action = menu.addAction(icon("teach"), self.tr("Teach Engram about %1…").replace("%1", rel))
        action.triggered.connect(lambda: self.teach_requested.emit("", [rel]))
        menu.exec(self.files.viewport().mapToGlobal(pos))

    def show_model_setup(self, setup: Any) -> None:
        """Show how to connect a model when none is set up (the tour project never needs one)."""
        if not is_tour_project(self.project):
            self.notice.show_setup(setup)

    def keep(self) -> SessionState:
        """What a rebuild of this view must not lose (a language switch): transcript, chips, typed text."""
        return SessionState(self.output.toHtml() if self.output.toPlainText().strip() else "",
                            self.input.toPlainText(), self.chips.entries(), dict(self.types), dict(self.metrics))

    def restore(self, kept: SessionState) -> None:
        """Put back what :meth:`keep` saved."""
        if kept.output_html:
            self.output.setHtml(kept.output_html)
        self.input.setPlainText(kept.input_text)
        self.types.update(kept.types)
        for mid, brief, dead, shared in kept.chips:
            self.chips.add(mid, brief, dead_end=dead, shared_by=shared)
        self.metrics = kept.metrics

    def shutdown(self) -> Any:
        """Stop a running session (project closing); returns its thread, for the closer to wait on."""
        self.runner.stop()
        return self.runner.detach()
