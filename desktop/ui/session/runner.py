"""Runs an agent session off the GUI thread and delivers its events on the GUI thread.

The session runs on a plain Python thread rather than a QThread: sessions read the
database, and per-thread SQLite read connections live in Python thread-locals that
Qt-created threads do not keep reliably (see desktop/ui/tasks.py). Events cross to
the GUI thread through a signal of this GUI-thread object, delivered to a @Slot.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from desktop.ui.adapters import agent
from desktop.ui.adapters.agent import SessionEvent, SessionRequest

log = logging.getLogger("engram.ui.session")


class SessionRunner(QObject):
    """Start/stop one session at a time; `event` fires on the GUI thread for each SessionEvent."""

    event = Signal(object)
    running_changed = Signal(bool)
    _from_worker = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thread: threading.Thread | None = None
        self._cancel = threading.Event()
        self._from_worker.connect(self._deliver)

    def is_running(self) -> bool:
        """True while a session thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def start(self, request: SessionRequest) -> bool:
        """Start a session (False when one is already running)."""
        if self.is_running():
            return False
        self._cancel = threading.Event()
        cancel = self._cancel

        def work() -> None:
            try:
                agent.run(request, self._from_worker.emit, cancel)
            except Exception as exc:  # shown in the view, never lost
                log.exception("session failed")
                self._from_worker.emit(SessionEvent("error", str(exc), {"type": type(exc).__name__}))
                self._from_worker.emit(SessionEvent("done", data={"error": True, "used": [], "learned": []}))
        self._thread = threading.Thread(target=work, name="engram-session", daemon=True)
        self._thread.start()
        self.running_changed.emit(True)
        return True

    def stop(self) -> None:
        """Ask the session to stop at its next step."""
        self._cancel.set()

    def wait(self, timeout: float = 10.0) -> bool:
        """Join the session thread (closing and tests only)."""
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    @Slot(object)
    def _deliver(self, ev: Any) -> None:
        self.event.emit(ev)
        if isinstance(ev, SessionEvent) and ev.kind == "done":
            self.running_changed.emit(False)
