"""Runs an agent session off the GUI thread and delivers its events on the GUI thread.

One QThread per session. Events cross to the GUI thread through a signal of this
GUI-thread object, delivered to a @Slot (a lambda would run in the session thread).
The store's ReadPool gives Qt-created threads a read connection keyed by thread id
(Python thread-locals are unreliable there); the thread releases it when it ends.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from desktop.ui.adapters import agent
from desktop.ui.adapters.agent import SessionEvent, SessionRequest

log = logging.getLogger("engram.ui.session")


class _SessionThread(QThread):
    """Runs one agent session; its events go to the runner's signal."""

    def __init__(self, request: SessionRequest, emit: Any, cancel: threading.Event, parent: QObject) -> None:
        super().__init__(parent)
        self.request = request
        self.emit_event = emit
        self.cancel = cancel
        self.setObjectName("engram-session")

    def run(self) -> None:
        """The session loop (in this thread)."""
        try:
            agent.run(self.request, lambda ev: self.emit_event(ev), self.cancel)
        except Exception as exc:  # shown in the view, never lost
            log.exception("session failed")
            self.emit_event(SessionEvent("error", str(exc), {"type": type(exc).__name__}))
            self.emit_event(SessionEvent("done", data={"error": True, "used": [], "learned": []}))
        finally:
            # A Qt thread keeps no Python thread-locals: hand its read connection back.
            db = getattr(getattr(self.request, "project", None), "db", None)
            if db is not None:
                db.reads.release()


class SessionRunner(QObject):
    """Start/stop one session at a time; `session_event` fires on the GUI thread for each SessionEvent."""

    session_event = Signal(object)
    running_changed = Signal(bool)
    _from_worker = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thread: _SessionThread | None = None
        self._cancel = threading.Event()
        self._from_worker.connect(self._deliver)

    def is_running(self) -> bool:
        """True while a session thread is alive."""
        return self._thread is not None and self._thread.isRunning()

    def start(self, request: SessionRequest) -> bool:
        """Start a session (False when one is already running)."""
        if self.is_running():
            return False
        self._cancel = threading.Event()
        self._thread = _SessionThread(request, self._from_worker.emit, self._cancel, self)
        self._thread.start()
        self.running_changed.emit(True)
        return True

    def stop(self) -> None:
        """Ask the session to stop at its next step."""
        self._cancel.set()

    def wait(self, timeout: float = 10.0) -> bool:
        """Join the session thread (closing and tests only)."""
        if self._thread is not None:
            return bool(self._thread.wait(int(timeout * 1000)))
        return True

    def detach(self) -> QThread | None:
        """Hand a still-running session thread over (project closing); its events go nowhere now.

        The caller waits for it off the GUI thread; this runner (and its view) may go at once.
        """
        thread, self._thread = self._thread, None
        if thread is None or not thread.isRunning():
            return None
        thread.emit_event = lambda _ev: None
        return thread

    @Slot(object)
    def _deliver(self, ev: Any) -> None:
        self.session_event.emit(ev)
        if isinstance(ev, SessionEvent) and ev.kind == "done":
            self.running_changed.emit(False)
