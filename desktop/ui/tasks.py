"""Getting work off the GUI thread and answers back onto it.

`Tasks.run(fn, done, failed)` runs `fn` on a pool thread; `Tasks.watch(future,
done, failed)` waits for a writer future. Either way the callbacks run on the
GUI thread: a worker emits a signal of a GUI-thread QObject, and Qt queues the
slot call onto the thread that object lives in. (Connecting a worker signal to a
lambda would run the lambda in the worker: that is exactly the bug avoided here.)
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

log = logging.getLogger("engram.ui.tasks")

Done = Callable[[Any], None]
Failed = Callable[[BaseException], None]


class _Job(QRunnable):
    def __init__(self, fn: Callable[[], Any], report: Callable[[Any, BaseException | None], None]) -> None:
        super().__init__()
        self.fn = fn
        self.report = report
        self.setAutoDelete(True)

    def run(self) -> None:
        try:
            result = self.fn()
        except BaseException as exc:  # delivered to the GUI thread
            self.report(None, exc)
            return
        self.report(result, None)


class Tasks(QObject):
    """Runs callables and watches futures; answers on the GUI thread."""

    _answer = Signal(object, object, object, object)  # done, failed, result, error

    def __init__(self, parent: QObject | None = None, *, max_threads: int = 2) -> None:
        super().__init__(parent)
        # Reads get a pool of their own so a slow query never queues behind parsing.
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(max_threads)
        self._answer.connect(self._deliver)
        self.pending = 0

    def run(self, fn: Callable[[], Any], done: Done | None = None, failed: Failed | None = None) -> None:
        """Run `fn` on a pool thread."""
        self.pending += 1
        self.pool.start(_Job(fn, lambda r, e: self._answer.emit(done, failed, r, e)))

    def watch(self, future: Future[Any], done: Done | None = None, failed: Failed | None = None) -> None:
        """Call back on the GUI thread when a writer future resolves."""
        self.pending += 1

        def finished(f: Future[Any]) -> None:
            exc = f.exception()
            self._answer.emit(done, failed, None if exc else f.result(), exc)
        future.add_done_callback(finished)

    @Slot(object, object, object, object)
    def _deliver(self, done: Done | None, failed: Failed | None, result: Any, error: Any) -> None:
        self.pending -= 1
        if error is not None:
            if failed is not None:
                failed(error)
            else:
                log.error("background task failed", exc_info=error)
            return
        if done is not None:
            done(result)

    def wait_idle(self, msecs: int = 30_000) -> bool:
        """Wait for pool threads (shutdown and tests only)."""
        return bool(self.pool.waitForDone(msecs))


class ChangeRelay(QObject):
    """Re-emits the writer's change notices on the GUI thread."""

    changed = Signal(object)
    _raw = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._raw.connect(self._forward)

    def listener(self, changes: Any) -> None:
        """Subscribe this to the writer (called in the writer thread)."""
        self._raw.emit(changes)

    @Slot(object)
    def _forward(self, changes: Any) -> None:
        self.changed.emit(changes)
