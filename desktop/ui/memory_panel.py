"""The memory browser: search and filter memories; provenance, "why retrieved", history; add/edit/pin/forget."""

from __future__ import annotations

import html
import logging
from typing import Any

from PySide6.QtCore import QItemSelection, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from desktop.agents import ask as recall
from desktop.memory.project import Project
from desktop.memory.store.changes import ChangeSet
from desktop.memory.store.errors import ValidationError
from desktop.memory.store.rows import MemoryQuery
from desktop.memory.types import Memory, MemoryScope, MemorySource, MemoryStatus, MemoryType
from desktop.ui.adapters.lifecycle import supersession_chain
from desktop.ui.labels import scope_label, source_label, status_label, type_label
from desktop.ui.memory_editor import MemoryEditor
from desktop.ui.memory_model import MemoryListModel
from desktop.ui.messages import describe_error
from desktop.ui.panel.detail import render_detail
from desktop.ui.session.citations import FlowLayout
from desktop.ui.tasks import Tasks
from desktop.ui.theme import icon

log = logging.getLogger("engram.ui.panel")


class MemoryBrowser(QWidget):
    """Search box, filters, the memory table and a detail pane with provenance and history."""

    status_message = Signal(str)
    correct_requested = Signal(int)

    def __init__(self, project: Project, tasks: Tasks, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.tasks = tasks
        self.model = MemoryListModel(project.memories, tasks, self)
        self._want: int | None = None

        self._build_filters()
        self._build_table()
        self._build_buttons()
        self._lay_out()
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(180)
        self._debounce.timeout.connect(self.apply_filters)
        self.search.textChanged.connect(self._debounce.start)
        self.type_filter.currentIndexChanged.connect(self.apply_filters)
        self.status_filter.currentIndexChanged.connect(self.apply_filters)
        self.scope_filter.currentIndexChanged.connect(self.apply_filters)
        self.source_filter.currentIndexChanged.connect(self.apply_filters)
        self.flag_button.clicked.connect(self._flag_selected)
        self.detail.anchorClicked.connect(lambda url: self.show_memory(int(url.toString().split(":")[1]))
                                          if url.toString().startswith("memory:") else None)
        self.table.selectionModel().selectionChanged.connect(self._selection_changed)
        self.model.loaded.connect(self._loaded)
        self.model.dataChanged.connect(lambda *_: self._show_selected())
        self.add_button.clicked.connect(self.add_memory)
        self.edit_button.clicked.connect(self.edit_selected)
        self.pin_button.clicked.connect(self.toggle_pin)
        self.forget_button.clicked.connect(self.forget_selected)
        self.table.doubleClicked.connect(lambda _i: self.edit_selected())
        self._update_buttons()
        self.apply_filters()

    # -- construction, one part each ----------------------------------------------------------
    def _build_filters(self) -> None:
        """The search box and the type, status, scope and source filters."""
        self.search = QLineEdit()
        self.search.setObjectName("memorySearch")
        self.search.setPlaceholderText(self.tr("Search memories…"))
        self.search.setClearButtonEnabled(True)
        self.type_filter = QComboBox()
        self.type_filter.setObjectName("typeFilter")
        self.type_filter.addItem(self.tr("All memories"), None)
        for t in MemoryType:
            if t is not MemoryType.CODE:
                self.type_filter.addItem(type_label(t.value), t.value)
        # The code index is searchable here, apart: its chunks are not memories anyone taught.
        self.type_filter.insertSeparator(self.type_filter.count())
        self.type_filter.addItem(self.tr("Code index (not memories)"), MemoryType.CODE.value)
        self.status_filter = QComboBox()
        self.status_filter.setObjectName("statusFilter")
        self.status_filter.addItem(self.tr("Not forgotten"), None)
        for s in MemoryStatus:
            self.status_filter.addItem(status_label(s.value), s.value)
        self.scope_filter = QComboBox()
        self.scope_filter.setObjectName("scopeFilter")
        self.scope_filter.addItem(self.tr("All scopes"), None)
        for sc in MemoryScope:
            self.scope_filter.addItem(scope_label(sc.value), sc.value)
        self.source_filter = QComboBox()
        self.source_filter.setObjectName("sourceFilter")
        self.source_filter.addItem(self.tr("All sources"), None)
        for so in MemorySource:
            self.source_filter.addItem(source_label(so.value), so.value)
        for combo, tip in ((self.type_filter, self.tr("Filter by type")),
                           (self.status_filter, self.tr("Filter by status")),
                           (self.scope_filter, self.tr("Filter by scope")),
                           (self.source_filter, self.tr("Filter by where the memory came from"))):
            combo.setToolTip(tip)
        self.count_label = QLabel()

    def _build_table(self) -> None:
        """The memory table (rows paged by the model; the selection survives a reload) and the detail pane."""
        self.table = QTableView()
        self.table.setObjectName("memoryTable")
        self.table.setModel(self.model)
        # A reload (a write elsewhere changed which memories match) must not drop the selection.
        self._keep: int | None = None
        self.model.modelAboutToBeReset.connect(self._remember_selection)
        self.model.modelReset.connect(self._restore_selection)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.setWordWrap(False)
        self.table.setAlternatingRowColors(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        for col, width in ((0, 64), (1, 130), (3, 84), (4, 110)):
            self.table.setColumnWidth(col, width)
        self.detail = QTextBrowser()
        self.detail.setObjectName("memoryDetail")
        self.detail.setOpenLinks(False)

    def _build_buttons(self) -> None:
        """Add, edit, pin, forget, flag, and team sharing of the selected memory."""
        self.add_button = QPushButton(self.tr("&Add…"))
        self.edit_button = QPushButton(self.tr("&Edit…"))
        self.pin_button = QPushButton(self.tr("&Pin"))
        self.forget_button = QPushButton(self.tr("&Forget"))
        self.flag_button = QPushButton(icon("flag"), self.tr("Flag &wrong…"))
        self.flag_button.setObjectName("flagWrong")
        # Team sharing of one memory, over the per-type policy (Settings → Team).
        self.share_button = QPushButton(self.tr("&Team"))
        self.share_button.setObjectName("teamShare")
        share_menu = QMenu(self.share_button)
        for label, choice in ((self.tr("Share with the team"), True), (self.tr("Keep personal"), False),
                              (self.tr("Follow the shared types"), None)):
            share_menu.addAction(label).triggered.connect(lambda _c=False, v=choice: self.set_shared(v))
        self.share_button.setMenu(share_menu)
        self.flag_button.setToolTip(self.tr("Correct this memory: outdated, partly wrong, not applicable or incorrect"))
        self.add_button.setIcon(icon("teach"))
        self.pin_button.setIcon(icon("pin"))
        self.forget_button.setIcon(icon("forget"))
        self.edit_button.setIcon(icon("edit"))
        self.add_button.setToolTip(self.tr("Teach Engram something agents should know"))
        self.pin_button.setToolTip(self.tr("Pinned memories are always given to agents and never fade"))
        self.forget_button.setToolTip(self.tr("Agents will no longer see this memory"))

    def _lay_out(self) -> None:
        """Filters on two lines, the buttons (wrapping in a narrow panel), then the table over the detail."""
        filters = QHBoxLayout()
        filters.addWidget(self.search, 1)
        filters.addWidget(self.type_filter)
        filters.addWidget(self.status_filter)
        filters2 = QHBoxLayout()
        filters2.addWidget(self.scope_filter)
        filters2.addWidget(self.source_filter)
        filters2.addStretch(1)
        # The buttons wrap onto a second line in a narrow panel: the panel never widens the window.
        actions = FlowLayout(spacing=4)
        for b in (self.add_button, self.edit_button, self.pin_button, self.forget_button, self.flag_button,
                  self.share_button):
            actions.addWidget(b)
        filters2.addWidget(self.count_label)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.detail)
        split.setSizes([300, 340])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(filters)
        layout.addLayout(filters2)
        layout.addLayout(actions)
        layout.addWidget(split, 1)

    # -- filtering -------------------------------------------------------------------
    def current_query(self) -> MemoryQuery:
        """The filter the controls describe."""
        t = self.type_filter.currentData()
        s = self.status_filter.currentData()
        sc = self.scope_filter.currentData()
        so = self.source_filter.currentData()
        return MemoryQuery(types=[t] if t else [], statuses=[s] if s else [], scopes=[sc] if sc else [],
                           sources=[so] if so else [], text=self.search.text().strip() or None)

    def apply_filters(self) -> None:
        """Reload the list for the current controls."""
        self.model.set_query(self.current_query())

    def _loaded(self, count: int) -> None:
        code = self.type_filter.currentData() == MemoryType.CODE.value
        self.count_label.setText(self.tr("%n code chunks", "", count) if code else self.tr("%n memories", "", count))
        want, self._want = self._want, None
        if want is not None and (row := self.model.row_of(want)) is not None:
            self.table.selectRow(row)
        self._show_selected()

    def on_changes(self, changes: ChangeSet) -> None:
        """Writer notices, already on the GUI thread."""
        self.model.apply_changes(changes)

    # -- selection -------------------------------------------------------------------
    def _remember_selection(self) -> None:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        self._keep = self.model.id_at(rows[0].row()) if rows else None

    def _restore_selection(self) -> None:
        row = self.model.row_of(self._keep) if self._keep is not None else None
        if row is not None:
            self.table.selectRow(row)

    def selected(self) -> Memory | None:
        """The selected memory (None when nothing is selected or it is still loading)."""
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        memory = self.model.memory_at(rows[0].row())
        if memory is None:
            self.model.ensure_loaded(rows[0].row())  # a hidden table never asked for the page
        return memory

    def _selection_changed(self, _sel: QItemSelection, _old: QItemSelection) -> None:
        self._show_selected()

    def _show_selected(self) -> None:
        memory = self.selected()
        self._update_buttons()
        if memory is None:
            self.detail.setHtml("<p style='color:gray'>" + html.escape(
                self.tr("Select a memory to see where it came from.")) + "</p>")
            return
        project, query = self.project, self.search.text().strip()

        def gather() -> tuple[Any, Any, Any, Any, Any]:
            from desktop.memory.team.service import shared_by

            hit = recall.explain(project, memory, query) if query else None
            who = shared_by(project.db.reads.conn(), [memory.id]).get(memory.id)
            return (project.memories.history(memory.id), hit, supersession_chain(project, memory), who,
                    project.memories.evidence(memory.id))
        self.tasks.run(gather, lambda got: self._render_detail(memory, query, *got))

    def _render_detail(self, m: Memory, query: str, history: list[dict[str, Any]], hit: Any,
                       chain: list[Memory], who: str | None = None, evidence: list[Any] | None = None) -> None:
        current = self.selected()
        if current is None or current.id != m.id:
            return
        self.detail.setHtml(render_detail(m, history, hit, query, chain, who, evidence))

    def show_memory(self, memory_id: int) -> None:
        """Select a memory (clearing filters if it is hidden by them)."""
        row = self.model.row_of(memory_id)
        if row is None:
            # Hidden by the filters: show everything (forgotten too), then select it once loaded.
            for combo in (self.type_filter, self.status_filter, self.scope_filter, self.source_filter):
                combo.blockSignals(True)
                combo.setCurrentIndex(0)
                combo.blockSignals(False)
            self.search.blockSignals(True)
            self.search.clear()
            self.search.blockSignals(False)
            self._want = memory_id
            self.model.set_query(MemoryQuery(statuses=[s.value for s in MemoryStatus]))
            return
        self.table.selectRow(row)
        self.table.scrollTo(self.model.index(row, 0))

    def _flag_selected(self) -> None:
        m = self.selected()
        if m is not None:
            self.correct_requested.emit(m.id)

    def _update_buttons(self) -> None:
        m = self.selected()
        for b in (self.edit_button, self.pin_button, self.forget_button, self.flag_button, self.share_button):
            b.setEnabled(m is not None)
        self.pin_button.setText(self.tr("Un&pin") if m and m.pinned else self.tr("&Pin"))
        forgotten = m is not None and m.deprecated
        self.forget_button.setText(self.tr("&Restore") if forgotten else self.tr("&Forget"))

    # -- writes (all through the writer; answers come back via Tasks) ------------------------
    def _submit(self, make: Any, success: str) -> None:
        try:
            future = make()
        except ValidationError as exc:
            QMessageBox.warning(self, self.tr("Not saved"), describe_error(exc))
            return
        self.tasks.watch(future, lambda _r: self.status_message.emit(success), self._write_failed)

    def _write_failed(self, exc: BaseException) -> None:
        QMessageBox.warning(self, self.tr("Not saved"), describe_error(exc))

    def add_memory(self, preset: str = "") -> None:
        """Open the teach dialog and save the new memory."""
        dialog = MemoryEditor(self)
        if preset:
            dialog.content.setPlainText(preset)
        if not dialog.exec():
            return
        values = dialog.values()
        self._submit(lambda: self.project.teach(**values), self.tr("Memory saved"))

    def edit_selected(self) -> None:
        """Edit the selected memory."""
        m = self.selected()
        if m is None:
            return
        dialog = MemoryEditor(self, m)
        if not dialog.exec():
            return
        self._submit(lambda: self.project.memories.edit(m.id, dialog.values(), actor="user"),
                     self.tr("Memory updated"))

    def set_shared(self, shared: bool | None) -> None:
        """Share the selected memory with the team, keep it personal, or follow the type policy."""
        from desktop.memory.team.service import set_shared

        m, project = self.selected(), self.project
        if m is not None:
            self.tasks.run(lambda: set_shared(project.db, m.id, shared),
                           lambda _r: self.status_message.emit(self.tr("Team sharing updated")), self._write_failed)

    def toggle_pin(self) -> None:
        """Pin or unpin the selected memory."""
        m = self.selected()
        if m is not None:
            self._submit(lambda: self.project.memories.pin(m.id, not m.pinned),
                         self.tr("Unpinned") if m.pinned else self.tr("Pinned"))

    def forget_selected(self) -> None:
        """Forget (or restore) the selected memory."""
        m = self.selected()
        if m is None:
            return
        if m.deprecated:
            self._submit(lambda: self.project.memories.restore(m.id), self.tr("Memory restored"))
        else:
            self._submit(lambda: self.project.memories.forget(m.id, reason="forgotten in the memory panel"),
                         self.tr("Memory forgotten"))
