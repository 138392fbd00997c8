"""The one writer thread.

Every database write in an Engram process is a `WriteOp` submitted here. The
thread drains the queue, runs the ops it finds in one short `BEGIN IMMEDIATE`
transaction, commits, and only then resolves each op's future: a resolved
future means the write is durable. Listeners then get a `ChangeSet` saying what
changed, so views refresh only that. Group commit is what lets thousands of
small writes a second through without any caller holding a transaction.

There are no savepoints (they halved bulk-insert speed). When one op fails, the
whole transaction is rolled back, that op gets its error and the others run again
in a new transaction. So every op must be a pure function of the database: safe to
apply twice, keeping no state from a rolled-back attempt (no side effects outside
the transaction inside ``apply``).
"""

from __future__ import annotations

import abc
import itertools
import json
import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

import apsw

from desktop.memory.privacy.boundary import GuardedConnection
from desktop.memory.store.changes import Action, Change, ChangeSet, Entity
from desktop.memory.store.connection import open_connection, translate_error
from desktop.memory.store.errors import CorruptDatabaseError, WriterClosedError
from desktop.memory.store.migrations import migrate, project_id

log = logging.getLogger("engram.store.writer")

T = TypeVar("T")
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The default clock."""
    return datetime.now(UTC)


def iso(dt: datetime) -> str:
    """Timestamps are stored as ISO 8601 UTC with milliseconds and a Z (julianday() reads them)."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


_AUDIT_COLUMNS = "audit_log(at, actor, action, memory_id, reason, detail)"


class Tx:
    """What an op sees while it runs: the connection, the clock, and change/audit recording.

    ``conn`` is a GuardedConnection: every text parameter of every statement an op
    runs passes the secret scanner first (privacy/boundary.py), the one redaction
    boundary of the database file.
    """

    def __init__(self, conn: apsw.Connection, now: datetime, project: str) -> None:
        self.conn: Any = GuardedConnection(conn)
        self.now_dt = now
        self.now = iso(now)
        self.project_id = project
        self.changes: list[Change] = []

    def execute(self, sql: str, params: Any = ()) -> apsw.Cursor:
        """Run one statement inside the current transaction."""
        return self.conn.execute(sql, params)

    def changed(self, entity: Entity | str, action: Action | str, ids: Any = ()) -> None:
        """Record that ids of `entity` were added/updated/deleted (published after commit)."""
        self.changes.append(Change(Entity(entity), Action(action), frozenset(ids)))

    def audit(self, action: str, memory_id: int | None, *, actor: str,
              reason: str | None = None, detail: dict[str, Any] | None = None) -> None:
        """Journal-first: write the audit entry before the mutation it explains."""
        self.audit_many([(self.now, actor, action, memory_id, reason, json.dumps(detail or {}, ensure_ascii=False))])

    def audit_many(self, rows: Any) -> None:
        """Many entries at once: rows of (at, actor, action, memory_id, reason, detail JSON)."""
        self.conn.executemany(f"INSERT INTO {_AUDIT_COLUMNS} VALUES (?,?,?,?,?,?)", rows)
        self.changes.append(Change(Entity.AUDIT, Action.ADDED, frozenset()))

    def audit_from(self, select_sql: str, params: Any = ()) -> None:
        """Set-based entries: ``select_sql`` yields (at, actor, action, memory_id, reason, detail) rows.

        The one other way an audit row is written (bulk pruning, feedback over many ids,
        the id a new memory is about to get); the column list lives here only.
        """
        self.conn.execute(f"INSERT INTO {_AUDIT_COLUMNS} {select_sql}", params)
        self.changes.append(Change(Entity.AUDIT, Action.ADDED, frozenset()))


class WriteOp(abc.ABC, Generic[T]):
    """A named, typed write. `apply` runs in the writer thread inside the batch's transaction,
    and may run again if another op of the batch failed: it must be safe to re-run."""

    name: ClassVar[str] = "write"

    @abc.abstractmethod
    def apply(self, tx: Tx) -> T:
        """Perform the write; return the op's answer."""


class MaintenanceOp(WriteOp[T]):
    """A write that must run outside a transaction (VACUUM, WAL checkpoint).

    The writer runs it alone, after the ops queued before it have committed.
    """

    outside_transaction: ClassVar[bool] = True


class FnOp(WriteOp[T]):
    """A write given as a function of the transaction (for small, local writes)."""

    def __init__(self, name: str, fn: Callable[[Tx], T]) -> None:
        self.name = name  # type: ignore[misc]
        self.fn = fn

    def apply(self, tx: Tx) -> T:
        """Call the function."""
        return self.fn(tx)


@dataclass
class _Item:
    op: WriteOp[Any]
    future: Future[Any]


_STOP = object()


class Writer:
    """Owns the only write connection of the process and the thread that uses it."""

    _ids = itertools.count(1)

    def __init__(self, path: Path | str, *, clock: Clock = utc_now, max_batch: int = 512,
                 check: bool = True) -> None:
        """``check=False`` skips the whole-file integrity check at start (see Database)."""
        self.path = str(path)
        self.clock = clock
        self.max_batch = max_batch
        self.check = check
        self.project_id = ""
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._listeners: list[Callable[[ChangeSet], None]] = []
        self._listeners_lock = threading.Lock()
        self._closed = threading.Event()
        self._ready: Future[None] = Future()
        self._thread = threading.Thread(
            target=self._run, name=f"engram-writer-{next(self._ids)}", daemon=True)

    # -- lifecycle -----------------------------------------------------------
    def start(self, timeout: float | None = 60) -> None:
        """Open the database, apply migrations, and start serving. Open errors are raised here."""
        self._thread.start()
        self._ready.result(timeout)

    def close(self, timeout: float | None = 30) -> None:
        """Finish queued writes, checkpoint the WAL and close the connection."""
        if self._closed.is_set():
            return
        self._closed.set()
        self._queue.put(_STOP)
        if self._thread.is_alive():
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        """True while writes are accepted."""
        return self._thread.is_alive() and not self._closed.is_set()

    # -- API -----------------------------------------------------------------
    def submit(self, op: WriteOp[T]) -> Future[T]:
        """Queue a write; the future resolves after its transaction commits."""
        fut: Future[T] = Future()
        if self._closed.is_set():
            fut.set_exception(WriterClosedError("The memory store is closed."))
            return fut
        self._queue.put(_Item(op, fut))
        return fut

    def run(self, op: WriteOp[T], timeout: float | None = 60) -> T:
        """Submit and wait (for command-line and background callers, never the GUI thread)."""
        return self.submit(op).result(timeout)

    def subscribe(self, listener: Callable[[ChangeSet], None]) -> Callable[[], None]:
        """Call `listener` (in the writer thread) after each commit; returns an unsubscribe function."""
        with self._listeners_lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._listeners_lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)
        return unsubscribe

    # -- thread --------------------------------------------------------------
    def _run(self) -> None:
        try:
            conn = open_connection(self.path)
        except BaseException as exc:  # surfaced to start()
            self._ready.set_exception(exc)
            return
        try:
            try:
                if self.check:
                    self._check_integrity(conn)
                migrate(conn, self.path)
                self.project_id = project_id(conn)
            except apsw.Error as exc:
                raise translate_error(exc, self.path) from exc
        except BaseException as exc:
            conn.close()
            self._ready.set_exception(exc)
            return
        self._ready.set_result(None)
        try:
            self._serve(conn)
        finally:
            self._shutdown(conn)

    def _check_integrity(self, conn: apsw.Connection) -> None:
        rows = conn.execute("PRAGMA quick_check(1)").fetchall()
        if rows and rows[0][0] != "ok":
            raise CorruptDatabaseError(self.path, str(rows[0][0]))

    def _serve(self, conn: apsw.Connection) -> None:
        while True:
            first = self._queue.get()
            if first is _STOP:
                self._drain_after_stop(conn)
                return
            batch = [first]
            stop_after = False
            while len(batch) < self.max_batch:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is _STOP:
                    stop_after = True
                    break
                batch.append(nxt)
            self._dispatch(conn, batch)
            if stop_after:
                self._drain_after_stop(conn)
                return

    def _drain_after_stop(self, conn: apsw.Connection) -> None:
        rest: list[_Item] = []
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not _STOP:
                rest.append(item)
        if rest:
            self._dispatch(conn, rest)

    def _dispatch(self, conn: apsw.Connection, batch: list[_Item]) -> None:
        pending: list[_Item] = []
        for item in batch:
            if getattr(item.op, "outside_transaction", False):
                self._run_batch(conn, pending)
                pending = []
                self._run_maintenance(conn, item)
            else:
                pending.append(item)
        self._run_batch(conn, pending)

    def _run_maintenance(self, conn: apsw.Connection, item: _Item) -> None:
        if not item.future.set_running_or_notify_cancel():
            return
        tx = Tx(conn, self.clock(), self.project_id)
        try:
            result = item.op.apply(tx)
        except BaseException as exc:
            err = translate_error(exc, self.path) if isinstance(exc, apsw.Error) else exc
            if not isinstance(err, Exception):
                raise
            item.future.set_exception(err)
            return
        item.future.set_result(result)
        if tx.changes:
            self._publish(ChangeSet(tx.changes))

    def _run_batch(self, conn: apsw.Connection, batch: list[_Item]) -> None:
        if not batch:
            return
        live = [it for it in batch if it.future.set_running_or_notify_cancel()]
        if not live:
            return
        try:
            self._run_transaction(conn, live)
        except BaseException as exc:  # the writer must outlive any single batch
            log.exception("write batch failed unexpectedly")
            self._rollback_quietly(conn)
            err = translate_error(exc, self.path) if isinstance(exc, apsw.Error) else exc
            for it in live:
                if not it.future.done():
                    it.future.set_exception(err if isinstance(err, Exception) else RuntimeError(str(err)))

    def _run_transaction(self, conn: apsw.Connection, live: list[_Item]) -> None:
        """Run the batch optimistically in one transaction; on an op's failure, retry without it.

        Savepoints would isolate ops too, but SQLite journals the original of every
        page an op touches inside one, which halved bulk-insert speed. Failures are
        rare, so instead the whole transaction is rolled back, the failing op gets its
        error, and the others run again (ops are pure functions of the database).
        """
        pending = list(live)
        failures = 0
        while pending:
            if failures >= 3:
                # Pathological batch: stop retrying as a group, one op per transaction.
                for it in pending:
                    self._attempt(conn, [it])
                return
            failed = self._attempt(conn, pending)
            if failed is None:
                return
            failures += 1
            pending = [it for it in pending if it is not failed]

    def _attempt(self, conn: apsw.Connection, batch: list[_Item]) -> _Item | None:
        """One transaction over `batch`. Returns the op that failed (already answered), else None."""
        tx = Tx(conn, self.clock(), self.project_id)
        results: list[Any] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
        except apsw.Error as exc:
            err = translate_error(exc, self.path)
            for it in batch:
                it.future.set_exception(err)
            return None
        for it in batch:
            try:
                results.append(it.op.apply(tx))
            except BaseException as exc:
                err = translate_error(exc, self.path) if isinstance(exc, apsw.Error) else exc
                if not isinstance(err, Exception):
                    raise
                sqlite_rolled_back = conn.getautocommit()
                self._rollback_quietly(conn)
                if sqlite_rolled_back or isinstance(exc, (apsw.FullError, apsw.IOError)):
                    # SQLite itself abandoned the transaction (disk full, I/O error):
                    # retrying the others would only fail the same way.
                    log.error("transaction rolled back by SQLite: %s", exc)
                    for other in batch:
                        other.future.set_exception(err)
                    return None
                it.future.set_exception(err)
                return it
        try:
            conn.execute("COMMIT")
        except apsw.Error as exc:
            err = translate_error(exc, self.path)
            log.error("commit failed, %d writes not saved: %s", len(batch), exc)
            self._rollback_quietly(conn)
            for it in batch:
                it.future.set_exception(err)
            return None
        for it, value in zip(batch, results, strict=True):
            it.future.set_result(value)
        if tx.changes:
            self._publish(ChangeSet(tx.changes))
        return None

    @staticmethod
    def _rollback_quietly(conn: apsw.Connection) -> None:
        if not conn.getautocommit():
            try:
                conn.execute("ROLLBACK")
            except apsw.Error:
                pass

    def _publish(self, changes: ChangeSet) -> None:
        with self._listeners_lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(changes)
            except Exception:  # a broken view must never stop the writer
                log.exception("change listener failed")

    def _shutdown(self, conn: apsw.Connection) -> None:
        try:
            conn.execute("PRAGMA optimize")
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except apsw.Error as exc:
            log.warning("checkpoint at close failed: %s", exc)
        conn.close()
