"""Closing a project without freezing the window: the waits run on a thread of their own.

Closing waits for a running session (up to 10 s), queued pool jobs (30 s), a running
index (60 s), the transcript watcher's flush (20 s) and the writer's drain (30 s).
Before, all of that ran on the GUI thread. Now the window drops its views at once
and a :class:`ProjectCloser` does the waiting on a plain thread, showing which part
it is stopping in the status bar; ``finished`` fires on the GUI thread at the end.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal, Slot
from PySide6.QtWidgets import QLabel, QProgressBar, QStatusBar

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.ui")

def part_label(name: str) -> str:
    """The words for one part being stopped (unknown parts: a generic line)."""
    words = {
        "session": QCoreApplication.translate("Closing", "stopping the agent session"),
        "tasks": QCoreApplication.translate("Closing", "finishing background work"),
        "graph": QCoreApplication.translate("Closing", "stopping the code graph"),
        "search": QCoreApplication.translate("Closing", "stopping the search indexer"),
        "transcript_watcher": QCoreApplication.translate("Closing", "saving what the observer learned"),
        "observer": QCoreApplication.translate("Closing", "saving what the observer learned"),
        "lifecycle": QCoreApplication.translate("Closing", "checking new memories for conflicts"),
        "anchors": QCoreApplication.translate("Closing", "anchoring new memories"),
        "database": QCoreApplication.translate("Closing", "writing the last changes"),
    }
    return words.get(name, QCoreApplication.translate("Closing", "stopping background work"))


class ProjectCloser(QObject):
    """Closes one project off the GUI thread with a progress line; one closer per window."""

    progressed = Signal(str)  # part name, from the closing thread (queued to the GUI thread)
    finished = Signal()

    def __init__(self, status: QStatusBar, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.bar = QProgressBar()
        self.bar.setObjectName("closingProgress")
        self.bar.setRange(0, 0)  # busy: how long each part takes is not known
        self.bar.setMaximumWidth(120)
        self.label = QLabel()
        self.label.setObjectName("closingLabel")
        for w in (self.label, self.bar):
            status.addPermanentWidget(w)
            w.hide()
        self._threads: list[threading.Thread] = []
        self._running = 0
        self._name = ""
        self.progressed.connect(self._show_part)
        self.finished.connect(self._done)

    @property
    def busy(self) -> bool:
        """True while a close is still running (its end not yet seen on the GUI thread)."""
        return self._running > 0

    def close(self, project: Project, tasks: Any, session_thread: QThread | None = None) -> None:
        """Start closing `project`; returns at once."""
        self._name = project.info.name
        if session_thread is not None:
            session_thread.setParent(None)  # outlives the session view, deleted when it ended

        def work() -> None:
            try:
                if session_thread is not None:
                    self.progressed.emit("session")
                    session_thread.wait(10_000)
                self.progressed.emit("tasks")
                tasks.wait_idle()
                project.close(progress=self.progressed.emit)
            except Exception:
                log.exception("closing %s failed", self._name)
            finally:
                self.finished.emit()
        thread = threading.Thread(target=work, name="engram-close-project", daemon=True)
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        self._running += 1
        self._show_part("tasks")
        thread.start()

    def wait(self, timeout: float = 120.0) -> bool:
        """Block until every close finished (app exit and tests only)."""
        for t in list(self._threads):
            t.join(timeout)
        QCoreApplication.sendPostedEvents(self)  # deliver the queued `finished`
        return not any(t.is_alive() for t in self._threads)

    @Slot(str)
    def _show_part(self, part: str) -> None:
        self.label.setText(QCoreApplication.translate("Closing", "Closing %1: %2…")
                           .replace("%1", self._name).replace("%2", part_label(part)))
        self.label.show()
        self.bar.show()

    @Slot()
    def _done(self) -> None:
        self._running = max(0, self._running - 1)
        if not self.busy:
            self.label.hide()
            self.bar.hide()
