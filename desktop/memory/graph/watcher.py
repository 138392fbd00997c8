"""Live indexing: watchdog events, a 500 ms debounce, background re-indexing.

The moment a change is seen, ``on_dirty`` runs (the service marks that file's edges
stale, so queries stop seeing them at once); events then collect until the project
has been quiet for ``debounce`` seconds and one batch goes to ``on_batch`` in the
watcher's own worker thread. Renames are a delete of the old path plus a change of
the new one; a created (or moved-in) folder is rescanned, because files written into
it before the OS watch attached produce no events. Plain Python, no Qt.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from desktop.memory.graph.walk import IgnoreRules, is_source_name

log = logging.getLogger("engram.graph")

DEBOUNCE_SECONDS = 0.5


@dataclass
class ChangeBatch:
    """Debounced changes: files changed or created, files deleted, folders created or deleted."""

    changed: set[str] = field(default_factory=set)
    deleted: set[str] = field(default_factory=set)
    new_dirs: set[str] = field(default_factory=set)
    gone_dirs: set[str] = field(default_factory=set)
    first_seen: float = 0.0  # monotonic time of the first event of the batch

    def __bool__(self) -> bool:
        return bool(self.changed or self.deleted or self.new_dirs or self.gone_dirs)


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: GraphWatcher) -> None:
        self.w = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        try:
            self.w._event(event)
        except Exception:  # an odd event must never kill the observer thread
            log.exception("watch event %r failed", event)


class GraphWatcher:
    """Watches one project folder; start() and stop() leave no thread behind."""

    def __init__(self, root: Path | str, rules: IgnoreRules, on_batch: Callable[[ChangeBatch], None],
                 on_dirty: Callable[[set[str]], None] | None = None, *,
                 debounce: float = DEBOUNCE_SECONDS) -> None:
        self.root = Path(root).resolve()
        self.rules = rules
        self.on_batch = on_batch
        self.on_dirty = on_dirty
        self.debounce = debounce
        self._cond = threading.Condition()
        self._pending = ChangeBatch()
        self._deadline = 0.0
        self._stopping = False
        self._observer: Observer | None = None  # type: ignore[valid-type]
        self._worker: threading.Thread | None = None

    @property
    def running(self) -> bool:
        """True between start() and stop()."""
        return self._worker is not None and self._worker.is_alive()

    def start(self) -> None:
        """Begin watching (recursively) and start the debounce worker."""
        if self.running:
            return
        self._stopping = False
        observer = Observer()
        observer.schedule(_Handler(self), str(self.root), recursive=True)
        observer.daemon = True
        observer.start()
        self._observer = observer
        self._worker = threading.Thread(target=self._loop, name="engram-graph-watch", daemon=True)
        self._worker.start()
        log.info("watching %s", self.root)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop watching; a batch being indexed finishes first, pending events are dropped."""
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout)
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        worker, self._worker = self._worker, None
        if worker is not None and worker is not threading.current_thread():
            worker.join(timeout)

    # -- events ----------------------------------------------------------------
    def _rel(self, path: str | bytes) -> str | None:
        text = os.fsdecode(path)
        try:
            rel = Path(text).resolve().relative_to(self.root) if os.path.islink(text) else \
                Path(os.path.abspath(text)).relative_to(self.root)
        except ValueError:
            return None
        out = rel.as_posix()
        return None if out in ("", ".") else out

    def _event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        src = self._rel(event.src_path)
        dest = self._rel(event.dest_path) if getattr(event, "dest_path", "") else None
        dirty: set[str] = set()
        with self._cond:
            b = self._pending
            if event.event_type == "moved":
                self._gone(src, event.is_directory, b)
                self._came(dest, event.is_directory, b, dirty)
                if src:
                    dirty.add(src)
            elif event.event_type == "deleted":
                self._gone(src, event.is_directory, b)
                if src:
                    dirty.add(src)
            elif event.event_type in ("created", "modified", "closed"):
                if event.is_directory and event.event_type == "modified":
                    return  # a folder's mtime changed: its files report for themselves
                self._came(src, event.is_directory, b, dirty)
            else:
                return
            if not b:
                return
            if not b.first_seen:
                b.first_seen = time.monotonic()
            self._deadline = time.monotonic() + self.debounce
            self._cond.notify_all()
        if dirty and self.on_dirty is not None:
            self.on_dirty(dirty)

    def _wanted(self, rel: str | None, is_dir: bool) -> bool:
        if rel is None:
            return False
        if rel.rsplit("/", 1)[-1] == ".gitignore":
            self.rules.forget(rel.rpartition("/")[0])
            return False
        if not is_dir and not is_source_name(rel):
            return False
        return self.rules.reason(rel, is_dir) is None

    def _gone(self, rel: str | None, is_dir: bool, b: ChangeBatch) -> None:
        if rel is None or self.rules.reason(rel, is_dir):
            return
        if is_dir:
            b.gone_dirs.add(rel)
        elif is_source_name(rel):
            b.changed.discard(rel)
            b.deleted.add(rel)

    def _came(self, rel: str | None, is_dir: bool, b: ChangeBatch, dirty: set[str]) -> None:
        if not self._wanted(rel, is_dir):
            return
        assert rel is not None
        if is_dir:
            b.new_dirs.add(rel)
        else:
            b.deleted.discard(rel)
            b.changed.add(rel)
            dirty.add(rel)

    # -- debounce worker ---------------------------------------------------------
    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._stopping and not (self._pending and time.monotonic() >= self._deadline):
                    wait = self._deadline - time.monotonic() if self._pending else None
                    self._cond.wait(wait if wait is None or wait > 0 else 0.001)
                if self._stopping:
                    return
                batch, self._pending = self._pending, ChangeBatch()
            try:
                self.on_batch(batch)
            except Exception:  # keep watching after a failed re-index; the next change retries
                log.exception("re-indexing after a change failed")

    def flush_now(self) -> None:
        """Make pending events due immediately (tests, shutdown-on-save)."""
        with self._cond:
            self._deadline = 0.0
            self._cond.notify_all()
