"""The module map: a card per module (files, dependencies, memory count) and an impact view.

Modules and dependencies come from GraphService.modules(); the impact view asks
GraphService.analyze_impact() what depends on a file, level by level. Both run on
pool threads; the cards are rebuilt only when the data arrives.
"""

from __future__ import annotations

import html
import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QScrollArea,
    QSplitter,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.memory.graph.queries import module_memory_counts
from desktop.ui.adapters.health import module_label
from desktop.ui.tasks import Tasks
from desktop.ui.theme import icon

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.ui.panel")


def load_module_map(project: Project, graph: Any) -> dict[str, Any]:
    """Modules, dependencies and memory counts per module (pool thread)."""
    data = graph.modules() if graph is not None else {"modules": [], "dependencies": []}
    conn = project.db.reads.conn()
    counts = module_memory_counts(conn)  # the same count the health dashboard shows
    for m in data["modules"]:
        m["memories"] = counts.get(m["name"], 0)
        files = m.get("files") or []
        m["label"] = module_label(m["name"], min(files), max(files)) if files else m["name"]
    return data


class ModuleCard(QFrame):
    """One module: name, counts badge, dependencies and a collapsible file list."""

    def __init__(self, module: dict[str, Any], deps_out: list[str], deps_in: list[str],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("card")
        self.name = module["name"]
        self.toggle = QToolButton()
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setCheckable(True)
        self.toggle.setToolTip(self.tr("Show the files of this module"))
        title = QLabel(f"<b>{html.escape(module.get('label') or self.name)}</b>")
        title.setToolTip(self.tr("Module %1 in the code graph").replace("%1", self.name))
        badge = QLabel(self.tr("%n files", "", module["file_count"]) + " · " +
                       self.tr("%n memories", "", module.get("memories", 0)))
        deps = QLabel(html.escape(self.tr("uses: %1").replace("%1", ", ".join(deps_out[:6]) or "—")) + "<br>" +
                      html.escape(self.tr("used by: %1").replace("%1", ", ".join(deps_in[:6]) or "—")))
        deps.setWordWrap(True)
        self.files = QListWidget()
        self.files.addItems(module["files"][:300])
        self.files.setMaximumHeight(160)
        self.files.hide()
        self.toggle.toggled.connect(self._toggled)
        head = QHBoxLayout()
        head.addWidget(self.toggle)
        head.addWidget(title, 1)
        head.addWidget(badge)
        col = QVBoxLayout(self)
        col.setContentsMargins(8, 6, 8, 6)
        col.addLayout(head)
        col.addWidget(deps)
        col.addWidget(self.files)

    def _toggled(self, on: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        self.files.setVisible(on)


class ModuleMap(QWidget):
    """Cards on top, impact analysis below."""

    def __init__(self, project: Project, tasks: Tasks, graph: Any | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.tasks = tasks
        self.graph = graph
        self.cards: list[ModuleCard] = []
        self.summary = QLabel(self.tr("Reading the module map…"))
        self.summary.setWordWrap(True)
        self.body = QWidget()
        self.cards_layout = QVBoxLayout(self.body)
        self.cards_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.body)
        self.target = QLineEdit()
        self.target.setObjectName("impactTarget")
        self.target.setPlaceholderText(self.tr("File or file:symbol, e.g. src/auth/tokens.py"))
        self.impact_button = QPushButton(icon("impact"), self.tr("&Impact"))
        self.impact_button.setObjectName("impactButton")
        self.impact_button.setToolTip(self.tr("What may break if this changes"))
        self.impact = QTreeWidget()
        self.impact.setObjectName("impactTree")
        self.impact.setHeaderLabels([self.tr("Depends on it"), self.tr("Symbols")])
        self.impact_summary = QLabel()
        self.impact_summary.setWordWrap(True)
        lower = QWidget()
        lc = QVBoxLayout(lower)
        lc.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(self.target, 1)
        row.addWidget(self.impact_button)
        lc.addLayout(row)
        lc.addWidget(self.impact_summary)
        lc.addWidget(self.impact, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(scroll)
        split.addWidget(lower)
        split.setSizes([380, 220])
        col = QVBoxLayout(self)
        col.addWidget(self.summary)
        col.addWidget(split, 1)
        self.target.returnPressed.connect(self.run_impact)
        self.impact_button.clicked.connect(self.run_impact)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(800)
        self._timer.timeout.connect(self.refresh)

    def schedule_refresh(self) -> None:
        """Refresh after a burst of graph/memory changes."""
        self._timer.start()

    def refresh(self) -> None:
        """Reload modules on a pool thread."""
        project, graph = self.project, self.graph
        self.tasks.run(lambda: load_module_map(project, graph), self._show,
                       lambda e: self.summary.setText(str(e)))

    def _show(self, data: dict[str, Any]) -> None:
        for card in self.cards:
            card.deleteLater()
        self.cards = []
        deps_out: dict[str, list[str]] = {}
        deps_in: dict[str, list[str]] = {}
        labels = {m["name"]: m.get("label") or m["name"] for m in data["modules"]}
        for d in data["dependencies"]:
            src, dst = d["from"] or ".", d["to"] or "."
            deps_out.setdefault(src, []).append(labels.get(dst, dst))
            deps_in.setdefault(dst, []).append(labels.get(src, src))
        mods = sorted(data["modules"], key=lambda m: (-m["file_count"], m["name"]))
        for m in mods[:80]:
            card = ModuleCard(m, deps_out.get(m["name"], []), deps_in.get(m["name"], []))
            card.files.itemActivated.connect(lambda it: self._pick(it.text()))
            self.cards.append(card)
            self.cards_layout.insertWidget(self.cards_layout.count() - 1, card)
        self.summary.setText(self.tr("%n modules", "", len(mods)) + " · " +
                             self.tr("%n dependencies between modules", "", len(data["dependencies"]))
                             if mods else self.tr("No code graph yet: index the project (first run) to see "
                                                  "its modules."))

    def _pick(self, path: str) -> None:
        self.target.setText(path)
        self.run_impact()

    def run_impact(self) -> None:
        """Ask the graph what depends on the target."""
        target = self.target.text().strip()
        if not target or self.graph is None:
            return
        graph = self.graph
        self.tasks.run(lambda: graph.analyze_impact(target), self._show_impact,
                       lambda e: self.impact_summary.setText(str(e)))

    def _show_impact(self, result: dict[str, Any]) -> None:
        self.impact.clear()
        if "error" in result:
            self.impact_summary.setText(self.tr("Not in the code graph: %1").replace("%1", result["target"]))
            return
        self.impact_summary.setText(self.tr("%n files may be affected", "", int(result.get("total_files", 0))))
        for lv in result.get("levels", []):
            top = QTreeWidgetItem([self.tr("Depth %1").replace("%1", str(lv["depth"])), str(len(lv["symbols"]))])
            for f in lv["files"]:
                top.addChild(QTreeWidgetItem([f, ""]))
            self.impact.addTopLevelItem(top)
            top.setExpanded(True)
        self.impact.resizeColumnToContents(0)
