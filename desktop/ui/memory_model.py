"""A table model over up to hundreds of thousands of memories that never loads them all.

The model holds only the ordered list of matching ids (a few hundred KB at
100,000 rows) and a bounded cache of rows. Rows are fetched in pages, on a pool
thread, when the view first asks for them; until then the row shows a
placeholder. Writer change notices refresh only the ids that changed.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QGuiApplication, QPalette

from desktop.memory.service import MemoryService
from desktop.memory.store.changes import ChangeSet
from desktop.memory.store.rows import MemoryQuery
from desktop.memory.types import Memory
from desktop.ui.labels import status_label, type_label
from desktop.ui.tasks import Tasks

log = logging.getLogger("engram.ui.model")

PAGE = 200
CACHE_ROWS = 5000
MemoryRole = Qt.ItemDataRole.UserRole + 1
IdRole = Qt.ItemDataRole.UserRole + 2

Index = QModelIndex | QPersistentModelIndex


class MemoryListModel(QAbstractTableModel):
    """Columns: id, type, content, confidence, status."""

    loaded = Signal(int)  # number of matching memories, after each (re)load of ids

    COLUMNS = ("id", "type", "content", "confidence", "status")

    def __init__(self, service: MemoryService, tasks: Tasks, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.service = service
        self.tasks = tasks
        self.query = MemoryQuery()
        self.order = "recent"
        self._ids: list[int] = []
        self._row_of: dict[int, int] = {}
        self._cache: OrderedDict[int, Memory] = OrderedDict()
        self._pending_pages: set[int] = set()
        self._generation = 0
        self._reload_timer = QTimer(self)
        self._reload_timer.setSingleShot(True)
        self._reload_timer.setInterval(150)
        self._reload_timer.timeout.connect(self.reload)

    # -- loading ------------------------------------------------------------------
    def set_query(self, query: MemoryQuery, order: str | None = None) -> None:
        """Show the memories matching `query` (ids load in the background)."""
        self.query = query
        if order:
            self.order = order
        self.reload()

    def reload(self) -> None:
        """Re-read the id list (after adds/deletes or a new filter)."""
        self._generation += 1
        generation = self._generation
        query, order = self.query, self.order
        self.tasks.run(lambda: self.service.list_ids(query, order=order),
                       lambda ids: self._ids_loaded(generation, ids), self._failed)

    def _ids_loaded(self, generation: int, ids: list[int]) -> None:
        if generation != self._generation:
            return  # a newer filter superseded this answer
        if ids == self._ids:
            # A background write (anchoring, conflict links, feedback) left the list as it was:
            # no reset, so the user's selection and scroll position stay where they are.
            self.loaded.emit(len(ids))
            return
        self.beginResetModel()
        self._ids = ids
        self._row_of = {mid: row for row, mid in enumerate(ids)}
        self._pending_pages.clear()
        self.endResetModel()
        self.loaded.emit(len(ids))

    def _failed(self, exc: BaseException) -> None:
        log.error("loading memories failed: %s", exc)

    def _request_page(self, row: int) -> None:
        page = row // PAGE
        if page in self._pending_pages:
            return
        self._pending_pages.add(page)
        ids = self._ids[page * PAGE:(page + 1) * PAGE]
        generation = self._generation
        self.tasks.run(lambda: self.service.get_many(ids),
                       lambda found: self._page_loaded(generation, page, found), self._failed)

    def _page_loaded(self, generation: int, page: int, found: dict[int, Memory]) -> None:
        self._pending_pages.discard(page)
        if generation != self._generation:
            return
        self._store(found)
        first, last = page * PAGE, min(len(self._ids), (page + 1) * PAGE) - 1
        if last >= first:
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(self.COLUMNS) - 1))

    def _store(self, found: dict[int, Memory]) -> None:
        for mid, memory in found.items():
            self._cache[mid] = memory
            self._cache.move_to_end(mid)
        while len(self._cache) > CACHE_ROWS:
            self._cache.popitem(last=False)

    def apply_changes(self, changes: ChangeSet) -> None:
        """Refresh only what a committed write changed.

        Adds, deletes and edits can change which ids match the filter, so the id list
        is re-read, coalesced by a short timer so an import of thousands of rows costs
        a handful of reloads, not one per commit. Edited rows are re-fetched by id.
        """
        structural = {c.action for c in changes.changes if c.entity == "memory"} - {"accessed"}
        if structural:
            self._reload_timer.start()
        updated = changes.ids("memory", "updated") & set(self._row_of)
        if updated:
            ids = sorted(updated)
            generation = self._generation
            self.tasks.run(lambda: self.service.get_many(ids),
                           lambda found: self._rows_refreshed(generation, found), self._failed)

    def _rows_refreshed(self, generation: int, found: dict[int, Memory]) -> None:
        if generation != self._generation:
            return
        self._store(found)
        for mid in found:
            row = self._row_of.get(mid)
            if row is not None:
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.COLUMNS) - 1))

    # -- Qt model -------------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        """Matching memories (not the loaded ones)."""
        return 0 if parent.isValid() else len(self._ids)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        """Fixed columns."""
        return 0 if parent.isValid() else len(self.COLUMNS)

    def memory_at(self, row: int) -> Memory | None:
        """The cached memory of a row, or None while its page loads."""
        if not 0 <= row < len(self._ids):
            return None
        return self._cache.get(self._ids[row])

    def ensure_loaded(self, row: int) -> None:
        """Fetch the page of `row` if it is not cached (views that are not painted never ask)."""
        if 0 <= row < len(self._ids) and self._ids[row] not in self._cache:
            self._request_page(row)

    def id_at(self, row: int) -> int | None:
        """The id of a row (always known)."""
        return self._ids[row] if 0 <= row < len(self._ids) else None

    def row_of(self, memory_id: int) -> int | None:
        """The row showing a memory, if it matches the current filter."""
        return self._row_of.get(memory_id)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Cell contents; a placeholder (and a page request) while the row loads."""
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        mid = self._ids[row]
        if role == IdRole:
            return mid
        memory = self._cache.get(mid)
        if memory is None:
            self._request_page(row)
            if role == Qt.ItemDataRole.DisplayRole:
                return f"#{mid}" if col == 0 else ("…" if col == 2 else "")
            return None
        if role == MemoryRole:
            return memory
        column = self.COLUMNS[col]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(memory, column)
        if role == Qt.ItemDataRole.ToolTipRole and column == "content":
            return memory.content[:600]
        if role == Qt.ItemDataRole.FontRole and memory.pinned and column == "content":
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ForegroundRole and memory.status.value != "active":
            return QGuiApplication.palette().color(QPalette.ColorRole.PlaceholderText)
        if role == Qt.ItemDataRole.TextAlignmentRole and column in ("id", "confidence"):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _display(self, m: Memory, column: str) -> str:
        if column == "id":
            return f"#{m.id}"
        if column == "type":
            return type_label(m.type)
        if column == "content":
            text = " ".join(m.content.split())
            return ("📌 " if m.pinned else "") + (text[:240] + "…" if len(text) > 240 else text)
        if column == "confidence":
            return f"{m.confidence:.2f}"
        return status_label(m.status.value)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Column titles."""
        if orientation != Qt.Orientation.Horizontal or role != Qt.ItemDataRole.DisplayRole:
            return None
        return [self.tr("#"), self.tr("Type"), self.tr("Memory"), self.tr("Confidence"),
                self.tr("Status")][section]


__all__ = ["IdRole", "MemoryListModel", "MemoryRole", "status_label", "type_label"]
