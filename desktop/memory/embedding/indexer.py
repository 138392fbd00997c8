"""The background embedding indexer: keeps the active vector space in step with the memories.

It listens to the writer's change notices (added/updated/deleted memories),
embeds in batches on its own thread (never inside a write transaction), and
writes each batch's vectors with one op. At start it loads the in-memory
mirror, resumes an unfinished model-switch job and catches up on memories
that have no vector yet (added while the app was closed, or by the CLI).
A provider that is down is retried with back-off; search keeps working
without the dense path meanwhile.
"""

from __future__ import annotations

import logging
import queue
import threading
import time

from desktop.memory.embedding.base import EmbeddingError
from desktop.memory.embedding.service import EmbeddingService
from desktop.memory.store.changes import ChangeSet
from desktop.memory.store.errors import WriterClosedError

__all__ = ["EmbeddingIndexer"]

log = logging.getLogger("engram.embedding")

_COALESCE_S = 0.05
_QUIET_S = 1.0
_MAX_DEFER_S = 30.0
_MAX_BACKOFF_S = 60.0


class EmbeddingIndexer:
    """A daemon thread that embeds new and changed memories of one project."""

    def __init__(self, service: EmbeddingService, *, batch_size: int = 64) -> None:
        self.service = service
        self.batch_size = batch_size
        self._queue: queue.SimpleQueue[tuple[str, list[int]]] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._unsubscribe = service.db.writer.subscribe(self._on_change)
        self._thread = threading.Thread(target=self._run, name="engram-embed-indexer", daemon=True)
        self._backoff = 1.0
        self.errors = 0

    def start(self) -> EmbeddingIndexer:
        """Start the thread (catch-up first, then change notices)."""
        self._thread.start()
        return self

    def _on_change(self, changes: ChangeSet) -> None:
        """Runs in the writer thread: only queue work, never block it."""
        deleted = changes.ids("memory", "deleted")
        if deleted:
            self._queue.put(("delete", sorted(deleted)))
        touched = changes.ids("memory", "added") | changes.ids("memory", "updated")
        if touched:
            self._idle.clear()
            self._queue.put(("embed", sorted(touched)))

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until everything queued so far is embedded (tests, the CLI, benchmarks)."""
        self._idle.clear()
        self._queue.put(("mark_idle", []))
        return self._idle.wait(timeout)

    def _run(self) -> None:
        try:
            self._catch_up()
        except Exception:  # a failed catch-up is retried by the loop below
            log.exception("embedding catch-up failed")
        pending: set[int] = set()
        last_add = first_add = 0.0
        while not self._stop.is_set():
            try:
                kind, ids = self._queue.get(timeout=_QUIET_S / 2)
            except queue.Empty:
                kind, ids = "", []
            now = time.monotonic()
            if kind == "stop":
                break
            if kind == "delete":
                self.service.forget(ids)
                pending.difference_update(ids)
            elif kind == "embed":
                if not pending:
                    first_add = now
                pending.update(ids)
                last_add = now
            elif kind == "mark_idle":
                # Someone is waiting (a test, the CLI): embed now, do not wait for quiet.
                if pending:
                    pending = self._flush(pending)
                if pending:
                    self._queue.put(("mark_idle", []))
                else:
                    self._idle.set()
                continue
            # A burst of writes (an import) is left alone until it goes quiet, so the
            # indexer never competes with it for the CPU or the GIL; a single add is
            # embedded after a short pause, and a long burst at most every _MAX_DEFER_S.
            quiet = now - last_add >= (_QUIET_S if len(pending) > self.batch_size else _COALESCE_S)
            overdue = now - first_add >= _MAX_DEFER_S
            if pending and self._queue.empty() and (quiet or overdue):
                pending = self._flush(pending)

    def _drain(self, pending: set[int]) -> None:
        while True:
            try:
                kind, ids = self._queue.get_nowait()
            except queue.Empty:
                return
            if kind == "embed":
                pending.update(ids)
            else:
                self._queue.put((kind, ids))
                return

    def _flush(self, pending: set[int]) -> set[int]:
        """Embed what is pending; on a provider failure keep it and back off."""
        ids = sorted(pending)
        try:
            # Batch by batch: each step (row fetch, tokenising, a vector write) stays
            # short, so no single call holds the GIL long enough to stall a GUI.
            for start in range(0, len(ids), self.batch_size):
                if self._stop.is_set():
                    return set(ids[start:])
                self.service.embed_memories(ids[start:start + self.batch_size])
        except EmbeddingError as exc:
            self.errors += 1
            log.warning("embedding failed (%s); retrying in %.0f s", exc.code, self._backoff)
            self._stop.wait(self._backoff)
            self._backoff = min(self._backoff * 2, _MAX_BACKOFF_S)
            return pending
        except WriterClosedError:
            self._stop.set()
            return set()
        self._backoff = 1.0
        return set()

    def _catch_up(self) -> None:
        while not self._stop.is_set():
            try:
                self.service.load_index()
                done = self.service.sync(stop=self._stop)
                if done:
                    log.info("embedded %d memories that had no vector", done)
                return
            except EmbeddingError as exc:
                self.errors += 1
                log.warning("catch-up embedding failed (%s); retrying in %.0f s", exc.code, self._backoff)
                self._stop.wait(self._backoff)
                self._backoff = min(self._backoff * 2, _MAX_BACKOFF_S)
            except WriterClosedError:
                return

    def close(self, timeout: float = 10.0) -> None:
        """Stop the thread (work in progress finishes its current batch)."""
        self._unsubscribe()
        self._stop.set()
        self._queue.put(("stop", []))
        if self._thread.is_alive():
            self._thread.join(timeout)
