"""Getting work off the GUI thread and answers back onto it.

`Tasks.run(fn, done, failed)` runs `fn` on a (Python) pool thread; `Tasks.watch(future,
done, failed)` waits for a writer future. Either way the callbacks run on the
GUI thread: a worker emits a signal of a GUI-thread QObject, and Qt queues the
slot call onto the thread that object lives in. (Connecting a worker signal to a
lambda would run the lambda in the worker: that is exactly the bug avoided here.)
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

log = logging.getLogger("engram.ui.tasks")

Done = Callable[[Any], None]
Failed = Callable[[BaseException], None]


@dataclass
class _Answer:
    done: Done | None
    failed: Failed | None
    result: Any
    error: BaseException | None


class Tasks(QObject):
    """Runs callables and watches futures; answers on the GUI thread."""

    # One object per answer: PySide6 6.12 mis-counts references when None travels
    # as a separate `object` signal argument, so everything rides in one _Answer.
    _answer = Signal(object)

    def __init__(self, parent: QObject | None = None, *, max_threads: int = 2, name: str = "engram-ui") -> None:
        super().__init__(parent)
        # Python threads, not QThreadPool: each pool thread keeps its own SQLite read
        # connection in a threading.local, and Qt's foreign threads drop Python
        # thread-locals after every call (which crashed apsw on deallocation).
        self.pool = ThreadPoolExecutor(max_workers=max_threads, thread_name_prefix=name)
        self._answer.connect(self._deliver)
        self.pending = 0
        self._inflight: set[Future[Any]] = set()

    def run(self, fn: Callable[[], Any], done: Done | None = None, failed: Failed | None = None) -> None:
        """Run `fn` on a pool thread."""
        self.pending += 1

        def job() -> None:
            try:
                result = fn()
            except BaseException as exc:  # delivered to the GUI thread
                self._answer.emit(_Answer(done, failed, None, exc))
                return
            self._answer.emit(_Answer(done, failed, result, None))
        fut = self.pool.submit(job)
        self._inflight.add(fut)
        fut.add_done_callback(self._inflight.discard)

    def watch(self, future: Future[Any], done: Done | None = None, failed: Failed | None = None) -> None:
        """Call back on the GUI thread when a writer future resolves."""
        self.pending += 1

        def finished(f: Future[Any]) -> None:
            exc = f.exception()
            self._answer.emit(_Answer(done, failed, None if exc else f.result(), exc))
        future.add_done_callback(finished)

    @Slot(object)
    def _deliver(self, answer: _Answer) -> None:
        self.pending -= 1
        done, failed, result, error = answer.done, answer.failed, answer.result, answer.error
        try:
            if error is not None:
                if failed is not None:
                    failed(error)
                else:
                    log.error("background task failed", exc_info=error)
                return
            if done is not None:
                done(result)
        except RuntimeError as exc:
            # The view that asked was closed while the work was in flight (a project
            # switch): its answer has nobody to go to. Anything else is a bug.
            if "already deleted" not in str(exc):
                raise
            log.debug("dropped an answer for a closed view: %s", exc)

    def wait_idle(self, msecs: int = 30_000) -> bool:
        """Wait for queued pool jobs (shutdown and tests only)."""
        _done, not_done = wait(list(self._inflight), timeout=msecs / 1000)
        return not not_done

    def shutdown(self) -> None:
        """Stop the pool threads (at application exit)."""
        self.pool.shutdown(wait=True, cancel_futures=True)


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
