"""The memory panel: search, filter and browse memories; add, edit, pin and forget them."""

from __future__ import annotations

import html
import json
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
    QMessageBox,
    QPushButton,
    QSplitter,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from desktop.composition import ProjectServices
from desktop.memory.store.errors import ValidationError
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.rows import MemoryQuery
from desktop.memory.store.writer import ChangeSet
from desktop.memory.types import Memory, MemoryStatus, MemoryType
from desktop.ui.memory_editor import MemoryEditor
from desktop.ui.memory_model import MemoryListModel, status_label, type_label
from desktop.ui.messages import describe_error
from desktop.ui.tasks import Tasks

log = logging.getLogger("engram.ui.panel")


class MemoryBrowser(QWidget):
    """Search box, filters, the memory table and a detail pane with provenance and history."""

    status_message = Signal(str)

    def __init__(self, project: ProjectServices, tasks: Tasks, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.tasks = tasks
        self.model = MemoryListModel(project.memories, tasks, self)

        self.search = QLineEdit()
        self.search.setObjectName("memorySearch")
        self.search.setPlaceholderText(self.tr("Search memories…"))
        self.search.setClearButtonEnabled(True)
        self.type_filter = QComboBox()
        self.type_filter.setObjectName("typeFilter")
        self.type_filter.addItem(self.tr("All types"), None)
        for t in MemoryType:
            self.type_filter.addItem(type_label(t.value), t.value)
        self.status_filter = QComboBox()
        self.status_filter.setObjectName("statusFilter")
        self.status_filter.addItem(self.tr("Not forgotten"), None)
        for s in MemoryStatus:
            self.status_filter.addItem(status_label(s.value), s.value)
        self.count_label = QLabel()

        self.table = QTableView()
        self.table.setObjectName("memoryTable")
        self.table.setModel(self.model)
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

        self.add_button = QPushButton(self.tr("&Add…"))
        self.edit_button = QPushButton(self.tr("&Edit…"))
        self.pin_button = QPushButton(self.tr("&Pin"))
        self.forget_button = QPushButton(self.tr("&Forget"))
        self.add_button.setToolTip(self.tr("Teach Engram something agents should know"))
        self.pin_button.setToolTip(self.tr("Pinned memories are always given to agents and never fade"))
        self.forget_button.setToolTip(self.tr("Agents will no longer see this memory"))

        filters = QHBoxLayout()
        filters.addWidget(self.search, 1)
        filters.addWidget(self.type_filter)
        filters.addWidget(self.status_filter)
        actions = QHBoxLayout()
        for b in (self.add_button, self.edit_button, self.pin_button, self.forget_button):
            actions.addWidget(b)
        actions.addStretch(1)
        actions.addWidget(self.count_label)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.detail)
        split.setSizes([420, 220])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(filters)
        layout.addLayout(actions)
        layout.addWidget(split, 1)

        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(180)
        self._debounce.timeout.connect(self.apply_filters)
        self.search.textChanged.connect(self._debounce.start)
        self.type_filter.currentIndexChanged.connect(self.apply_filters)
        self.status_filter.currentIndexChanged.connect(self.apply_filters)
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

    # -- filtering -------------------------------------------------------------------
    def current_query(self) -> MemoryQuery:
        """The filter the controls describe."""
        t = self.type_filter.currentData()
        s = self.status_filter.currentData()
        return MemoryQuery(types=[t] if t else [], statuses=[s] if s else [],
                           text=self.search.text().strip() or None)

    def apply_filters(self) -> None:
        """Reload the list for the current controls."""
        self.model.set_query(self.current_query())

    def _loaded(self, count: int) -> None:
        self.count_label.setText(self.tr("%n memories", "", count))
        self._show_selected()

    def on_changes(self, changes: ChangeSet) -> None:
        """Writer notices, already on the GUI thread."""
        self.model.apply_changes(changes)

    # -- selection -------------------------------------------------------------------
    def selected(self) -> Memory | None:
        """The selected memory (None when nothing is selected or it is still loading)."""
        rows = self.table.selectionModel().selectedRows()
        return self.model.memory_at(rows[0].row()) if rows else None

    def _selection_changed(self, _sel: QItemSelection, _old: QItemSelection) -> None:
        self._show_selected()

    def _show_selected(self) -> None:
        memory = self.selected()
        self._update_buttons()
        if memory is None:
            self.detail.setHtml("<p style='color:gray'>" + html.escape(
                self.tr("Select a memory to see where it came from.")) + "</p>")
            return
        mid = memory.id
        self.tasks.run(lambda: self.project.memories.history(mid),
                       lambda hist: self._render_detail(memory, hist))

    def _render_detail(self, m: Memory, history: list[dict[str, Any]]) -> None:
        current = self.selected()
        if current is None or current.id != m.id:
            return
        e = html.escape
        rows = [
            (self.tr("Type"), type_label(m.type)), (self.tr("Status"), status_label(m.status.value)),
            (self.tr("Confidence"), f"{m.confidence:.2f}"), (self.tr("Source"), m.source),
            (self.tr("Scope"), m.scope), (self.tr("Files"), ", ".join(m.related_files) or "—"),
            (self.tr("Tags"), ", ".join(m.tags) or "—"), (self.tr("Created"), m.created_at),
            (self.tr("Used"), self.tr("%n time(s)", "", m.access_count)),
            (self.tr("Sessions"), ", ".join(m.provenance_session_ids) or (m.session_id or "—")),
            (self.tr("Commit"), m.commit_sha or "—"),
        ]
        parts = [f"<h3>{e(m.citation())}</h3><p>{e(m.content).replace(chr(10), '<br>')}</p><table>"]
        parts += [f"<tr><td><b>{e(k)}</b></td><td>{e(str(v))}</td></tr>" for k, v in rows]
        parts.append("</table>")
        if m.provenance:
            parts.append(f"<h4>{e(self.tr('Why this exists'))}</h4><ul>")
            for p in m.provenance[:10]:
                parts.append(f"<li>{e(json.dumps(p, ensure_ascii=False)[:300])}</li>")
            parts.append("</ul>")
        parts.append(f"<h4>{e(self.tr('History'))}</h4><ul>")
        for h in history:
            reason = f" — {h['reason']}" if h.get("reason") else ""
            parts.append(f"<li>{e(h['at'])}: <b>{e(h['action'])}</b> ({e(h['actor'])}){e(reason)}</li>")
        parts.append("</ul>")
        self.detail.setHtml("".join(parts))

    def _update_buttons(self) -> None:
        m = self.selected()
        for b in (self.edit_button, self.pin_button, self.forget_button):
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
        item = NewMemory(source="user_taught", user_verified=True, **values)  # type: ignore[arg-type]
        self._submit(lambda: self.project.memories.add(item, actor="user"), self.tr("Memory saved"))

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
