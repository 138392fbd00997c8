"""GraphService: one project's code graph -- indexer, live watcher and queries behind one facade.

GUI, CLI and agents use only this. ``analyze_impact`` is the agent tool: it returns a
JSON-ready dict. Background work runs in plain threads (no Qt); ``close()`` stops the
watcher and cancels/joins a running index so no thread outlives the project.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.memory.graph.closure import DEFAULT_DEPTH
from desktop.memory.graph.indexer import ProjectIndexer
from desktop.memory.graph.queries import GraphQueries, GraphTargetNotFound
from desktop.memory.graph.report import IndexProgress, IndexReport
from desktop.memory.graph.store import MarkStale
from desktop.memory.graph.walk import iter_known_under, walk
from desktop.memory.graph.watcher import DEBOUNCE_SECONDS, ChangeBatch, GraphWatcher
from desktop.memory.store.database import Database

log = logging.getLogger("engram.graph")

UpdateListener = Callable[[ChangeBatch, IndexReport, float], None]


class GraphService:
    """Index, watch and query the code graph of the project rooted at ``root``."""

    def __init__(self, db: Database, root: Path | str, *, depth: int = DEFAULT_DEPTH, chunks: bool = True,
                 user_modules: dict[str, str] | None = None, debounce: float = DEBOUNCE_SECONDS) -> None:
        self.db = db
        self.root = Path(root).resolve()
        self.indexer = ProjectIndexer(db, self.root, depth=depth, chunks=chunks, user_modules=user_modules)
        self.queries = GraphQueries(db, closure_depth=depth)
        self.watcher = GraphWatcher(self.root, self.indexer.rules, self._on_batch, self._on_dirty,
                                    debounce=debounce)
        self._listeners: list[UpdateListener] = []
        self._cancel = threading.Event()
        self._bg: threading.Thread | None = None
        self._initial_done = threading.Event()
        self._lock = threading.Lock()
        self._progress: list[Callable[[IndexProgress], None]] = []
        self._done: list[Callable[[IndexReport], None]] = []
        self.last_report: IndexReport | None = None

    # -- indexing ----------------------------------------------------------------
    def index(self, progress: Callable[[IndexProgress], None] | None = None,
              cancel: threading.Event | None = None, *, force: bool = False,
              background: bool = False) -> IndexReport:
        """Index now in the calling thread (CLI, tests). Later runs skip unchanged files."""
        report = self.indexer.run(progress, cancel or self._cancel, force=force, background=background)
        self.last_report = report
        return report

    def start(self, progress: Callable[[IndexProgress], None] | None = None, *, watch: bool = True,
              done: Callable[[IndexReport], None] | None = None) -> None:
        """Index in the background, then keep the graph live with the watcher.

        The watcher starts first so edits made during the first index are not lost;
        its batches wait until the first index has finished. A second caller while an
        index runs (the app's open-project services, then onboarding) joins that run:
        its ``progress`` and ``done`` are called too, nothing is indexed twice.
        """
        with self._lock:
            if progress is not None:
                self._progress.append(progress)
            if done is not None:
                self._done.append(done)
            if self._bg is not None and self._bg.is_alive():
                return
            self._cancel.clear()
            self._initial_done.clear()
            if watch:
                self.watcher.start()
            self._bg = threading.Thread(target=self._background_index, name="engram-graph-index", daemon=True)
            self._bg.start()

    def _background_index(self) -> None:
        report: IndexReport | None = None
        try:
            report = self.index(self._report_progress, self._cancel, background=True)
        except Exception:
            log.exception("background index failed")
        finally:
            self._initial_done.set()
            with self._lock:
                done, self._done, self._progress = self._done, [], []
            for callback in done:
                if report is None:
                    break
                try:
                    callback(report)
                except Exception:
                    log.exception("index done callback failed")

    def _report_progress(self, progress: IndexProgress) -> None:
        for listener in list(self._progress):
            listener(progress)

    def cancel(self) -> None:
        """Ask a running index to stop after the file in hand (its work so far is kept)."""
        self._cancel.set()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait for the background index to finish; True when it did."""
        bg = self._bg
        if bg is not None:
            bg.join(timeout)
            return not bg.is_alive()
        return True

    def close(self) -> None:
        """Stop the watcher and any running index; nothing keeps running afterwards."""
        self.watcher.stop()
        self._cancel.set()
        self._initial_done.set()
        if self._bg is not None:
            self._bg.join(60)
            self._bg = None

    # -- live updates --------------------------------------------------------------
    def subscribe(self, listener: UpdateListener) -> Callable[[], None]:
        """Call ``listener(batch, report, seconds)`` after each live re-index (in the watcher thread)."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _on_dirty(self, paths: set[str]) -> None:
        # Glean-style: fire-and-forget, the writer applies it before any later re-index.
        self.db.writer.submit(MarkStale(sorted(paths), depth=self.indexer.depth))

    def _on_batch(self, batch: ChangeBatch) -> None:
        self._initial_done.wait()
        if self._cancel.is_set():
            return
        t0 = time.perf_counter()
        changed = set(batch.changed)
        deleted = set(batch.deleted)
        for d in batch.new_dirs:
            changed.update(walk(self.root, self.indexer.rules, start=d).files)
        if batch.gone_dirs or batch.deleted:
            known = [r[0] for r in self.db.reads.conn().execute("SELECT file_path FROM graph_files")]
            for d in batch.gone_dirs:
                deleted.update(iter_known_under(known, d))
        report = self.indexer.run(paths=changed, deleted=deleted - changed)
        seconds = time.perf_counter() - t0
        log.info("live update of %d changed, %d deleted files in %.0f ms", len(changed), len(deleted),
                 seconds * 1000)
        for listener in list(self._listeners):
            try:
                listener(batch, report, seconds)
            except Exception:
                log.exception("graph update listener failed")

    # -- queries (agent tools) -------------------------------------------------------
    def analyze_impact(self, target: str, depth: int = DEFAULT_DEPTH) -> dict[str, Any]:
        """What breaks if ``target`` (``path`` or ``path:symbol``) changes: dependents by depth.

        Returns a JSON-ready dict; an unknown target gives ``{"error": code, "message": ...}``
        instead of raising, so an agent tool call always gets an answer it can read.
        """
        try:
            result = self.queries.impact(target, depth)
        except GraphTargetNotFound as exc:
            return {"target": target, "error": exc.code, "message": str(exc)}
        result["summary"] = _summary(result)
        return result

    def dependencies(self, target: str, depth: int = DEFAULT_DEPTH) -> dict[str, Any]:
        """What ``target`` depends on, by depth (raises GraphTargetNotFound)."""
        return self.queries.dependencies(target, depth)

    def neighbours(self, files: list[str], depth: int = 1) -> list[dict[str, Any]]:
        """Related files for the retrieval graph path and neighbourhood boost."""
        return self.queries.neighbours(files, depth)

    def modules(self) -> dict[str, Any]:
        """Files per module and inter-module dependencies."""
        return self.queries.modules()

    def stats(self) -> dict[str, Any]:
        """Node/edge/closure/file counts."""
        return self.queries.stats()


def _summary(result: dict[str, Any]) -> str:
    parts = []
    for lv in result["levels"]:
        names = ", ".join(lv["files"][:5]) + (f" and {len(lv['files']) - 5} more" if len(lv["files"]) > 5 else "")
        parts.append(f"depth {lv['depth']}: {names or 'no files'} ({len(lv['symbols'])} symbol(s))")
    head = f"Changing {result['target']} may affect {result['total_files']} file(s)"
    return head + (": " + "; ".join(parts) if parts else " (nothing depends on it)") + "."

