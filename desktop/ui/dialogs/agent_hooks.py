"""Engram's hooks in the agents found on this machine, offered by the onboarding and Settings.

Both widgets are doors to the core (``desktop.agents.hooks.install``), the same calls as
``engram hooks install|uninstall|status`` at project scope. Every call reads or writes an
agent's settings file, so it runs on a pool thread through ``Tasks``; the GUI thread only
shows answers.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QGridLayout, QGroupBox, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop.agents.hooks import install as hk
from desktop.agents.hooks.protocol import AGENTS
from desktop.ui.tasks import Tasks

log = logging.getLogger("engram.ui.hooks")

AGENT_NAMES = {"claude-code": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI"}
#: (agent, found on PATH, installed for the project)
AgentState = tuple[str, bool, bool]


def agent_states(root: Path, data_dir: Path | None) -> list[AgentState]:
    """Agents found on PATH plus any with Engram's hooks in the project (pool thread: file reads)."""
    found = set(hk.detected_agents())
    out: list[AgentState] = []
    for agent in AGENTS:
        st = hk.status(agent, "project", root, Path.home(), data_dir)
        if agent in found or st.events:
            out.append((agent, agent in found, st.installed))
    return out


def install_agents(agents: list[str], root: Path, data_dir: Path | None) -> list[Path]:
    """Install the hooks of each agent at project scope (pool thread); the files written."""
    return [hk.install(agent, "project", root, Path.home(), data_dir)[0] for agent in agents]


def _name(agent: str) -> str:
    return AGENT_NAMES.get(agent, agent)


class HooksChooser(QGroupBox):
    """Onboarding: one checkbox per agent found on PATH, ticked by default."""

    status_message = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTitle(self.tr("Give your coding agents Engram's memory"))
        self.setObjectName("hooksChooser")
        self.boxes: dict[str, QCheckBox] = {}
        self.col = QVBoxLayout(self)
        note = QLabel(self.tr("Engram adds hooks to these agents' settings for this project, so they are told "
                              "what Engram remembers when a session starts and as they work. You can remove "
                              "them at any time in Settings."))
        note.setWordWrap(True)
        self.col.addWidget(note)
        self.hide()  # until agents are found

    def detect(self, tasks: Tasks, root: Path, data_dir: Path | None) -> None:
        """Look for the agents on a pool thread; the box appears when at least one is found."""
        self.tasks, self.root, self.data_dir = tasks, root, data_dir
        tasks.run(lambda: agent_states(root, data_dir), self._show, lambda exc: log.warning("hooks: %s", exc))

    def _show(self, states: list[AgentState]) -> None:
        for agent, found, installed in states:
            if not found:
                continue
            box = QCheckBox(self.tr("%1 (hooks already installed)").replace("%1", _name(agent)) if installed
                            else _name(agent))
            box.setObjectName(f"hooksFor-{agent}")
            box.setChecked(True)
            box.setEnabled(not installed)
            self.boxes[agent] = box
            self.col.addWidget(box)
        self.setVisible(bool(self.boxes))

    def chosen(self) -> list[str]:
        """The agents ticked and not yet installed."""
        return [a for a, box in self.boxes.items() if box.isChecked() and box.isEnabled()]

    def install_chosen(self) -> None:
        """Install the hooks of the ticked agents (pool thread); reports through status_message."""
        agents = self.chosen()
        if not agents:
            return
        for box in self.boxes.values():
            box.setEnabled(False)
        names = ", ".join(_name(a) for a in agents)
        self.tasks.run(lambda: install_agents(agents, self.root, self.data_dir),
                       lambda _paths: self.status_message.emit(
                           self.tr("Engram's hooks were installed for %1").replace("%1", names)),
                       self._failed)

    def _failed(self, exc: BaseException) -> None:
        log.warning("hooks install failed: %s", exc)
        self.status_message.emit(str(exc))


class HooksPanel(QWidget):
    """Settings: per agent, whether Engram's hooks are installed in the open project, with Install / Remove."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tasks: Tasks | None = None
        self.root = Path()
        self.data_dir: Path | None = None
        self.rows: dict[str, tuple[QLabel, QPushButton, QPushButton]] = {}
        col = QVBoxLayout(self)
        intro = QLabel(self.tr("Hooks let Claude Code, Codex and Gemini CLI receive Engram's memory in this "
                               "project when a session starts, when you type a prompt and when they open a file."))
        intro.setWordWrap(True)
        self.grid = QGridLayout()
        self.message = QLabel(self.tr("Looking for agents…"))
        self.message.setObjectName("hooksMessage")
        self.message.setWordWrap(True)
        col.addWidget(intro)
        col.addLayout(self.grid)
        col.addWidget(self.message)
        col.addStretch(1)

    def bind(self, tasks: Tasks, root: Path, data_dir: Path | None) -> None:
        """Attach to the open project and read each agent's status."""
        self.tasks, self.root, self.data_dir = tasks, root, data_dir
        self.refresh()

    def refresh(self) -> None:
        """Re-read the statuses on a pool thread."""
        if self.tasks is not None:
            root, data_dir = self.root, self.data_dir
            self.tasks.run(lambda: agent_states(root, data_dir), self._show, self._failed)

    def _show(self, states: list[AgentState]) -> None:
        for agent, _found, installed in states:
            if agent not in self.rows:
                label = QLabel()
                label.setObjectName(f"hooksStatus-{agent}")
                add = QPushButton(self.tr("&Install"))
                add.setObjectName(f"installHooks-{agent}")
                add.clicked.connect(lambda _c=False, a=agent: self._act(a, install=True))
                remove = QPushButton(self.tr("&Remove"))
                remove.setObjectName(f"removeHooks-{agent}")
                remove.clicked.connect(lambda _c=False, a=agent: self._act(a, install=False))
                row = len(self.rows)
                self.grid.addWidget(QLabel("<b>" + _name(agent) + "</b>"), row, 0)
                self.grid.addWidget(label, row, 1, Qt.AlignmentFlag.AlignLeft)
                self.grid.addWidget(add, row, 2)
                self.grid.addWidget(remove, row, 3)
                self.rows[agent] = (label, add, remove)
            label, add, remove = self.rows[agent]
            label.setText(self.tr("Installed for this project") if installed else self.tr("Not installed"))
            add.setEnabled(not installed)
            remove.setEnabled(installed)
        if not self.rows:
            self.message.setText(self.tr("No agent was found on this computer (looked for claude, codex and "
                                         "gemini on PATH)."))
        elif self.message.text() == self.tr("Looking for agents…"):
            self.message.clear()

    def _act(self, agent: str, *, install: bool) -> None:
        if self.tasks is None:
            return
        _label, add, remove = self.rows[agent]
        add.setEnabled(False)
        remove.setEnabled(False)
        root, data_dir = self.root, self.data_dir

        def work() -> Path:
            if install:
                return hk.install(agent, "project", root, Path.home(), data_dir)[0]
            return hk.uninstall(agent, "project", root, Path.home())[0]

        def done(path: Path) -> None:
            text = (self.tr("Engram's hooks were added to %1") if install
                    else self.tr("Engram's hooks were removed from %1"))
            self.message.setText(text.replace("%1", str(path)))
            self.refresh()
        self.tasks.run(work, done, self._act_failed)

    def _failed(self, exc: BaseException) -> None:
        log.warning("hooks: %s", exc)
        self.message.setText(str(exc))

    def _act_failed(self, exc: BaseException) -> None:
        self._failed(exc)
        self.refresh()  # the buttons follow what is really in the file
