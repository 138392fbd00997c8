"""What each external agent session (Claude Code, Codex, Gemini CLI) was told by Engram's hooks.

Above: what the warnings said at tool calls (before one, or after a check passed) did (warned /
avoided / repeated, with sample sizes and an interval; counted from the records, nothing estimated).
Left: the sessions, newest first, with how many memories each was shown, cited and
flagged. Right: per event (session start, compaction, prompt, before a tool call), the
memories as citation chips; the flag on a chip is the same one-click correction as
in Engram's own sessions. Refreshes live as hooks record rows. Above: install the
hooks for the agents found on this machine. Every read runs on a pool thread.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from desktop.agents.hooks import ledger
from desktop.memory.store.changes import ChangeSet
from desktop.memory.triggers.warn import OutcomeReport, outcome_report
from desktop.ui.dialogs.agent_hooks import AGENT_NAMES, agent_states, install_agents
from desktop.ui.labels import type_label
from desktop.ui.session.citations import CitationBar
from desktop.ui.tasks import Tasks

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.ui.panel")

POLL_MS = 3000


class ExternalSessions(QWidget):
    """Sessions list and the selected session's injections."""

    correct_requested = Signal(int)
    status_message = Signal(str)

    def __init__(self, project: Project, tasks: Tasks, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.tasks = tasks
        self.sessions = QListWidget()
        self.sessions.setObjectName("externalSessions")
        self.sessions.setAlternatingRowColors(True)
        self.sessions.setSpacing(2)
        self.sessions.currentItemChanged.connect(lambda *_: self._load_selected())
        self.detail = QWidget()
        self.detail_col = QVBoxLayout(self.detail)
        self.detail_col.setAlignment(Qt.AlignmentFlag.AlignTop)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.detail)
        split = QSplitter()
        split.addWidget(self.sessions)
        split.addWidget(scroll)
        split.setStretchFactor(1, 2)
        self.install_row = QHBoxLayout()
        self.empty = QLabel(self.tr("No external session yet. Install Engram's hooks in your agent, then start a "
                                    "session in this project: what Engram tells it appears here."))
        self.empty.setWordWrap(True)
        self.outcomes = QLabel()
        self.outcomes.setObjectName("warningOutcomes")
        self.outcomes.setWordWrap(True)
        col = QVBoxLayout(self)
        col.addLayout(self.install_row)
        col.addWidget(self.outcomes)
        col.addWidget(self.empty)
        col.addWidget(split, 1)
        self.bars: list[CitationBar] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(400)
        self._timer.timeout.connect(self.refresh)
        # Hooks run in the agents' processes (or the hook service): their writes do not pass
        # through this app's writer, so while the tab is visible it polls for new rows.
        self._seen = -1
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self._check_new)
        self._poll.start()
        self.tasks.run(self._detect, self._offer_install)
        self.refresh()

    # -- install -------------------------------------------------------------------------
    def _detect(self) -> list[tuple[str, bool]]:
        root = Path(self.project.info.root)
        return [(a, installed) for a, found, installed in agent_states(root, self.project.settings.data_dir)
                if found]

    def _offer_install(self, found: list[tuple[str, bool]]) -> None:
        for agent, installed in found:
            button = QPushButton(self.tr("Hooks installed in %1") if installed else self.tr("Install hooks in %1"))
            button.setText(button.text().replace("%1", AGENT_NAMES.get(agent, agent)))
            button.setObjectName(f"installHooks-{agent}")
            button.setEnabled(not installed)
            button.clicked.connect(lambda _c=False, a=agent, b=button: self._install(a, b))
            self.install_row.addWidget(button)
        self.install_row.addStretch(1)

    def _install(self, agent: str, button: QPushButton) -> None:
        root = Path(self.project.info.root)
        button.setEnabled(False)
        self.tasks.run(lambda: install_agents([agent], root, self.project.settings.data_dir),
                       lambda written: self._installed(agent, button, written[0]),
                       lambda exc: self._install_failed(button, exc))

    def _installed(self, agent: str, button: QPushButton, path: Path) -> None:
        button.setText(self.tr("Hooks installed in %1").replace("%1", AGENT_NAMES.get(agent, agent)))
        self.status_message.emit(self.tr("Engram's hooks were added to %1").replace("%1", str(path)))

    def _install_failed(self, button: QPushButton, exc: BaseException) -> None:
        from desktop.ui.messages import describe_error

        button.setEnabled(True)
        self.status_message.emit(describe_error(exc))

    # -- sessions --------------------------------------------------------------------------
    def _check_new(self) -> None:
        if self.isVisible():
            self.tasks.run(lambda: ledger.latest_id(self.project.db), self._maybe_refresh)

    def _maybe_refresh(self, latest: int) -> None:
        if latest != self._seen:
            self._seen = latest
            self.refresh()

    def refresh(self) -> None:
        """Reload the session list and the warnings' outcomes (pool thread)."""
        self.tasks.run(lambda: ledger.recent_sessions(self.project.db), self._show_sessions)
        self.tasks.run(lambda: outcome_report(self.project.db.reads.conn()), self._show_outcomes)

    def _show_outcomes(self, r: OutcomeReport) -> None:
        if not r.warned:
            self.outcomes.setText(self.tr("No warning has been said at a tool call yet."))
            return
        text = self.tr("Warnings at a tool call (before it, or after a check passed): %1 in %2 sessions. "
                       "Avoided %3, repeated %4, still open %5.")
        for key, count in (("%1", r.warned), ("%2", r.sessions), ("%3", r.avoided), ("%4", r.repeated),
                           ("%5", r.open)):
            text = text.replace(key, str(count))
        if r.declined:
            text += " " + self.tr("Declined by the user: %1 (they would not let run the command a warning "
                                  "recommended).").replace("%1", str(r.declined))
        if r.decided:
            low, high = r.avoided_interval()
            more = self.tr("Avoided in %1 of %2 decided (95% interval %3–%4 %); no comparison group.")
            for key, value in (("%1", str(r.avoided)), ("%2", str(r.decided)), ("%3", f"{low * 100:.0f}"),
                               ("%4", f"{high * 100:.0f}")):
                more = more.replace(key, value)
            text += " " + more
        parts = []
        for agent, n, avoided, repeated in r.by_agent:
            name = self.tr("Engram's agent") if agent == "engram" else AGENT_NAMES.get(agent, agent)
            part = self.tr("%1: warned %2, avoided %3, repeated %4")
            for key, value in (("%1", name), ("%2", str(n)), ("%3", str(avoided)), ("%4", str(repeated))):
                part = part.replace(key, value)
            parts.append(part)
        if parts:
            text += " " + self.tr("By agent: %1.").replace("%1", "; ".join(parts))
        self.outcomes.setText(text)

    def schedule_refresh(self) -> None:
        """Coalesce bursts of hook writes into one reload."""
        self._timer.start()

    def on_changes(self, changes: ChangeSet) -> None:
        """Writer notices on the GUI thread: reload when a hook recorded something."""
        if any(c.entity == "external_injections" for c in changes.changes):
            self.schedule_refresh()

    def _show_sessions(self, sessions: list[ledger.ExternalSession]) -> None:
        current = self.sessions.currentItem()
        keep = current.data(Qt.ItemDataRole.UserRole) if current is not None else None
        self.sessions.blockSignals(True)
        self.sessions.clear()
        for s in sessions:
            text = self.tr("%1 · %2\n%3 shown, %4 cited, %5 flagged")
            for key, value in (("%1", AGENT_NAMES.get(s.agent, s.agent)), ("%2", s.last_at[:16].replace("T", " ")),
                               ("%3", str(s.shown)), ("%4", str(s.cited)), ("%5", str(s.flagged))):
                text = text.replace(key, value)
            item = QListWidgetItem(text)
            item.setData(Qt.ItemDataRole.UserRole, s.session_id)
            item.setToolTip(s.session_id)
            self.sessions.addItem(item)
            if s.session_id == keep:
                self.sessions.setCurrentItem(item)
        self.sessions.blockSignals(False)
        self.empty.setVisible(not sessions)
        if self.sessions.currentItem() is None and self.sessions.count():
            self.sessions.setCurrentRow(0)
        else:
            self._load_selected()

    def _load_selected(self) -> None:
        item = self.sessions.currentItem()
        if item is None:
            return
        sid = str(item.data(Qt.ItemDataRole.UserRole))

        def load() -> tuple[str, list[ledger.Shown], dict[int, Any]]:
            rows = ledger.session_rows(self.project.db, sid)
            return sid, rows, self.project.memories.get_many({r.memory_id for r in rows})
        self.tasks.run(load, self._show_detail)

    def _event_title(self, event: str, detail: str) -> str:
        titles = {"session_start": self.tr("Session start"), "compact": self.tr("After compaction"),
                  "resume": self.tr("On resume"), "prompt": self.tr("Prompt: %1"),
                  "after_tool": self.tr("After %1"), "before_tool": self.tr("Before %1"),
                  "tool_failed": self.tr("After %1 failed"), "reply": self.tr("Cited without being shown")}
        return titles.get(event, event).replace("%1", detail[:80])

    def _show_detail(self, data: tuple[str, list[ledger.Shown], dict[int, Any]]) -> None:
        sid, rows, mems = data
        while self.detail_col.count():
            child = self.detail_col.takeAt(0)
            widget = child.widget() if child is not None else None
            if widget is not None:
                widget.deleteLater()
        self.bars = []
        groups: list[tuple[str, str, list[ledger.Shown]]] = []
        for r in rows:
            if groups and groups[-1][0] == r.event and groups[-1][1] == r.detail:
                groups[-1][2].append(r)
            else:
                groups.append((r.event, r.detail, [r]))
        for event, detail, members in groups:
            head = QLabel(f"<b>{self._event_title(event, detail)}</b> · {members[0].at[11:19]}")
            self.detail_col.addWidget(head)
            bar = CitationBar()
            for r in members:
                m = mems.get(r.memory_id)
                brief = type_label(m.type) if m else self.tr("(deleted)")  # its text is shown in full below
                marks = (" ✓" + self.tr("cited") if r.cited else "") + (" ⚑" + self.tr("flagged") if r.flagged else "")
                bar.add(r.memory_id, brief + marks, dead_end=bool(m and m.type == "dead_end"))
            bar.flag_clicked.connect(lambda mid, s=sid: self._flag(s, mid))
            self.detail_col.addWidget(bar)
            self.bars.append(bar)
            # The chip is a handle (id, flag); what the agent read is the whole text, so it is shown.
            said = QLabel("\n".join(f"#{r.memory_id} · {' '.join(mems[r.memory_id].content.split())}"
                                    for r in members if r.memory_id in mems))
            said.setObjectName("saidText")
            said.setWordWrap(True)
            said.setTextFormat(Qt.TextFormat.PlainText)
            said.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            said.setContentsMargins(8, 0, 0, 10)
            self.detail_col.addWidget(said)
        self.detail_col.addStretch(1)  # groups stay packed at the top, however few

    def _flag(self, session_id: str, memory_id: int) -> None:
        """Mark the row flagged here; the correction itself is the app's one correction flow."""
        self.tasks.watch(ledger.mark_flagged(self.project.db, session_id, memory_id))
        self.correct_requested.emit(memory_id)
