"""The health dashboard: totals, activity, review load, measured effect of memory, health score, coverage, feed."""

from __future__ import annotations

import html
import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from desktop.agents.effect import MemoryEffect, memory_effect
from desktop.ui.adapters.health import Health, compute_health, score_parts
from desktop.ui.labels import action_label, type_label
from desktop.ui.panel.charts import HBars, ScoreRing, Sparkline
from desktop.ui.tasks import Tasks

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.ui.panel")



def coverage_word(level: str) -> str:
    """Translated coverage level."""
    words = {"unknown": QCoreApplication.translate("Dashboard", "unknown"),
             "shallow": QCoreApplication.translate("Dashboard", "shallow"),
             "partial": QCoreApplication.translate("Dashboard", "partial"),
             "mapped": QCoreApplication.translate("Dashboard", "mapped")}
    return words.get(level, level)


class StatTile(QFrame):
    """A number with a caption."""

    def __init__(self, title: str, tip: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("statTile")
        self.setToolTip(tip)
        self.value = QLabel("–")
        self.value.setObjectName("statValue")
        caption = QLabel(title)
        caption.setObjectName("statTitle")
        caption.setWordWrap(True)
        self.detail = QLabel()  # sample sizes and what a test says, for a tile that shows a difference
        self.detail.setObjectName("statDetail")
        self.detail.setWordWrap(True)
        self.detail.hide()
        col = QVBoxLayout(self)
        col.setContentsMargins(10, 6, 10, 6)
        col.addWidget(self.value)
        col.addWidget(caption)
        col.addWidget(self.detail)

    def set_detail(self, text: str) -> None:
        """The line under the caption ('' hides it)."""
        self.detail.setText(text)
        self.detail.setVisible(bool(text))


class Dashboard(QScrollArea):
    """Reads its numbers on a pool thread; refreshes (coalesced) after writes."""

    open_memory = Signal(int)

    def __init__(self, project: Project, tasks: Tasks, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.tasks = tasks
        self.health: Health | None = None
        self.effect: MemoryEffect | None = None
        self.setWidgetResizable(True)
        body = QWidget()
        self.setWidget(body)
        self.total = StatTile(self.tr("memories"), self.tr("What was taught, imported and learned (forgotten ones "
                                                           "and the code index excluded)"))
        self.active = StatTile(self.tr("active in the last 30 days"), self.tr("Used or created in the last 30 days"))
        self.review = StatTile(self.tr("need review"), self.tr("New or flagged memories waiting for your OK"))
        self.effect_tile = StatTile(self.tr("steps per session, with / without memory"),
                                    self.tr("Measured on finished sessions of Engram's agent: the A/B control "
                                            "group, chosen at random, gets no memory"))
        tiles = QGridLayout()
        for i, t in enumerate((self.total, self.active, self.review, self.effect_tile)):
            tiles.addWidget(t, i // 2, i % 2)
        self.ring = ScoreRing()
        self.ring.setToolTip(self.tr("How much agents can rely on this memory: how confident its memories are, "
                                     "how many modules they cover, and how little waits for your review. "
                                     "The lines beside it say what would raise it."))
        self.score_text = QLabel()
        self.score_text.setWordWrap(True)
        head = QHBoxLayout()
        head.addWidget(self.ring)
        head.addWidget(self.score_text, 1)
        self.spark = Sparkline()
        self.spark.setToolTip(self.tr("Memories added per day over the last two weeks"))
        self.types = HBars()
        self.coverage = HBars()
        self.coverage_note = QLabel()
        self.coverage_note.setWordWrap(True)
        self.attention = QListWidget()
        self.attention.setObjectName("needsAttention")
        self.attention.setMaximumHeight(150)
        self.attention.itemActivated.connect(lambda it: self.open_memory.emit(int(it.data(Qt.ItemDataRole.UserRole))))
        self.activity = QListWidget()
        self.activity.setObjectName("activityFeed")
        self.activity.setMaximumHeight(180)
        # Team sync: last sync, queued changes, the error in words (hidden outside a team).
        self.team_line = QLabel()
        self.team_line.setObjectName("teamSync")
        self.team_line.setWordWrap(True)
        self.team_line.setVisible(False)
        col = QVBoxLayout(body)
        col.addWidget(self.team_line)
        col.addLayout(head)
        col.addLayout(tiles)
        for title, w in ((self.tr("Added per day"), self.spark), (self.tr("By type"), self.types),
                         (self.tr("Module coverage"), self.coverage), ("", self.coverage_note),
                         (self.tr("Needs attention"), self.attention), (self.tr("Recent activity"), self.activity)):
            if title:
                col.addWidget(QLabel(f"<b>{html.escape(title)}</b>"))
            col.addWidget(w)
        col.addStretch(1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(400)
        self._timer.timeout.connect(self.refresh)
        # Sync errors and the queue change without a local write: poll the (local) status.
        self._team_timer = QTimer(self)
        self._team_timer.setInterval(5000)
        self._team_timer.timeout.connect(self._poll_team)
        self._team_timer.start()

    def schedule_refresh(self) -> None:
        """Refresh soon; many change notices in a row cost one refresh."""
        self._timer.start()

    def refresh(self) -> None:
        """Recompute on a pool thread."""
        project = self.project
        self.tasks.run(lambda: compute_health(project), self._show, lambda e: log.warning("health: %s", e))
        self.tasks.run(lambda: memory_effect(project.db), self._show_effect,
                       lambda e: log.warning("memory effect: %s", e))
        self.refresh_team()

    def _poll_team(self) -> None:
        # Nobody reads the line while the dashboard is hidden; showing it refreshes everything.
        if self.isVisible():
            self.refresh_team()

    def refresh_team(self) -> None:
        """Read the team sync status on a pool thread (local database only, never the network)."""
        from desktop.memory.team.service import team_status

        project = self.project
        self.tasks.run(lambda: team_status(project.db, project.team_if_started()), self._show_team,
                       lambda e: log.warning("team status: %s", e))

    def _show_team(self, status: Any) -> None:
        from desktop.ui.team_flow import sync_status_text

        text = sync_status_text(status)
        self.team_line.setText(text)
        self.team_line.setVisible(bool(text))

    def _show_effect(self, effect: MemoryEffect) -> None:
        self.effect = effect
        tile, c = self.effect_tile, effect.compare("steps")
        if c is None:
            tile.value.setText("—")
            tile.set_detail(self.tr("Not enough sessions yet"))
            tile.setToolTip(self.tr("Not measured yet: %1 sessions with memory and %2 without have finished; %3 "
                                    "of each are needed.").replace("%1", str(effect.with_memory.n("steps")))
                            .replace("%2", str(effect.without.n("steps"))).replace("%3", str(effect.min_sessions)))
            return
        tile.value.setText(f"{c.with_mean:.1f} / {c.without_mean:.1f}")
        verdict = self.tr("a difference beyond chance") if c.distinguishable else \
            self.tr("no difference distinguishable from chance")
        tile.set_detail(self.tr("n = %1 / %2 · p = %3: %4").replace("%1", str(c.n_with))
                        .replace("%2", str(c.n_without)).replace("%3", f"{c.p_value:.2f}").replace("%4", verdict))
        tile.setToolTip(self.tr("Mean steps of finished sessions: %1 with memory (n=%2), %3 without (n=%4). "
                                "A permutation test of the two groups gives p = %5.")
                        .replace("%1", f"{c.with_mean:.1f}").replace("%2", str(c.n_with))
                        .replace("%3", f"{c.without_mean:.1f}").replace("%4", str(c.n_without))
                        .replace("%5", f"{c.p_value:.3f}"))

    def _show(self, h: Health) -> None:
        self.health = h
        self.total.value.setText(f"{h.total:,}")
        self.active.value.setText(f"{h.active_30d:,}")
        self.review.value.setText(f"{h.needs_review:,}")
        self.ring.set_value(h.score)
        confidence = score_parts(h)[0]
        covered = sum(1 for m in h.modules if m.memories)
        lines = [self.tr("Health %1 / 100").replace("%1", str(h.score))]
        if h.total:
            lines.append(self.tr("Memories are %1 % confident on average.").replace("%1", str(round(100 * confidence))))
            if h.modules:
                lines.append(self.tr("%1 of %n modules have a memory about them.", "", len(h.modules))
                             .replace("%1", str(covered)))
            waiting = h.needs_review + h.stale
            lines.append(self.tr("%n memories wait for your review.", "", waiting) if waiting
                         else self.tr("Nothing waits for your review."))
        else:
            lines.append(self.tr("No memories yet: teach one, import your rule files, or run an agent."))
        self.score_text.setText("<b>" + html.escape(lines[0]) + "</b><br>" + "<br>".join(
            html.escape(x) for x in lines[1:]) + "<br>" + html.escape(
            self.tr("%1 pinned · %2 stale").replace("%1", str(h.pinned)).replace("%2", str(h.stale))))
        self.spark.set_values(h.daily)
        top = max(h.by_type.values(), default=1)
        self.types.set_rows([(type_label(t), n / top, str(n)) for t, n in list(h.by_type.items())[:8]])
        # Modules with memories first, named as people know them (a folder, not "pkg#6"); modules with
        # none are counted in one line rather than listed as a wall of zeros.
        shown = [m for m in h.modules if m.memories][:12]
        self.coverage.set_rows([(m.label if m.label not in (".", "") else self.tr("(project root)"), m.fraction,
                                 self.tr("%n memories", "", m.memories) + f" · {coverage_word(m.level)}")
                                for m in shown])
        self.coverage.setVisible(bool(shown))
        if not h.modules:
            note = self.tr("Module coverage appears once the code is indexed.")
        elif not shown:
            note = self.tr("No memory is about a particular module yet (%n modules indexed). Memories about "
                           "files, taught or learned from sessions, fill this in.", "", len(h.modules))
        elif len(shown) < len(h.modules):
            note = self.tr("%n other modules have no memory yet.", "", len(h.modules) - len(shown))
        else:
            note = ""
        self.coverage_note.setText(note)
        self.coverage_note.setVisible(bool(note))
        self.attention.clear()
        for a in h.attention:
            why = self.tr("stale") if a["why"] == "stale" else self.tr("needs review")
            item = QListWidgetItem(f"#{a['id']} · {why} · {' '.join(a['content'].split())[:90]}")
            item.setData(Qt.ItemDataRole.UserRole, a["id"])
            self.attention.addItem(item)
        if not h.attention:
            self.attention.addItem(self.tr("Nothing needs your attention."))
        self.activity.clear()
        for e in h.activity:
            who = {"user": self.tr("you"), "agent": self.tr("an agent"), "import": self.tr("an import")}.get(
                e["actor"], e["actor"])
            self.activity.addItem(f"{e['at'][:16].replace('T', ' ')} · {who} · {action_label(e['action'])}"
                                  + (f" #{e['memory_id']}" if e.get("memory_id") else ""))
