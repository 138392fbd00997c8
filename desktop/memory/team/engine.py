"""The sync engine: push the outbox, pull the feed, in a background thread.

One cycle pushes everything queued (batches of 500, each one server transaction
followed by one local ack op) and then pulls every window of the feed (each one
local op that also advances the cursor). A crash at any point repeats at most
one batch, which the server recognises (see push.py), so nothing acknowledged is
lost and nothing is duplicated. The thread wakes on a local commit that touched
memories, and otherwise polls every `interval` seconds; after a failure it
backs off up to 30 s. The database's search, injection and the GUI never wait
for it: it only talks to the local store through the writer and a read
connection of its own.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg import sql

from desktop.memory.store.changes import ChangeSet
from desktop.memory.store.errors import EngramError
from desktop.memory.team import server
from desktop.memory.team.errors import NotATeamRoleError, NotJoinedError, ServerUnreachableError
from desktop.memory.team.outbox import AckPush, read_batch
from desktop.memory.team.pull import ApplyRemote, fetch
from desktop.memory.team.push import channel, push_batch
from desktop.memory.team.state import SaveTeamState, TeamState, read_state

log = logging.getLogger("engram.team")

PUSH_BATCH = 1000
MAX_BACKOFF = 30.0


@dataclass
class SyncReport:
    """What one cycle did."""

    pushed: int = 0
    merged: int = 0
    conflicts: int = 0
    pulled: int = 0
    deleted: int = 0
    held_back: int = 0
    seconds: float = 0.0


@dataclass
class SyncStatus:
    """What the dashboard shows: last sync, queue, error (a code the UI words, plus detail)."""

    joined: bool = False
    team_name: str = ""
    member_name: str = ""
    last_sync_at: str = ""
    queued: int = 0
    error_code: str = ""
    error: str = ""
    running: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def queued_count(conn: Any) -> int:
    """Changes waiting to be pushed (one per memory)."""
    return int(conn.execute("SELECT count(*) FROM team_outbox").fetchall()[0][0])


class TeamSync:
    """Push/pull one project's team memory; `start()` runs it in a thread, `sync_once()` inline."""

    def __init__(self, db: Any, url: Callable[[], str], *, interval: float = 1.0,
                 batch: int = PUSH_BATCH) -> None:
        self.db = db
        self.batch = batch
        self._url = url
        self.interval = interval
        self._conn: psycopg.Connection | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._listener: threading.Thread | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._lock = threading.Lock()  # one cycle at a time (thread and `sync --now`)
        self.last_error: EngramError | None = None
        self.last_sync_at = ""
        self.last_report = SyncReport()
        self._saved_error = ""

    # -- one cycle -----------------------------------------------------------------
    def _connection(self, state: TeamState) -> psycopg.Connection:
        if self._conn is None or self._conn.closed or self._conn.broken:
            conn = server.connect(self._url())
            try:
                # Each new connection re-checks the schema (an admin may have upgraded the
                # server meanwhile) and that the role still belongs to our team.
                if server.identify(conn).team_id != state.team_id:
                    raise NotATeamRoleError()
                server.register_member(conn, state.team_id, state.client_id, state.member_name)  # last seen
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def _drop_connection(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # closing a broken connection can raise; it is gone either way
                pass
        self._conn = None

    def sync_once(self) -> SyncReport:
        """Push everything queued, then pull everything new. Raises known errors (EngramError)."""
        with self._lock:
            started = time.monotonic()
            state = read_state(self.db.reads.conn())
            if not state.joined:
                raise NotJoinedError()
            report = SyncReport()
            try:
                conn = self._connection(state)
                self._push_all(conn, state, report)
                self._pull_all(conn, state, report)
                if report.deleted:
                    self._scrub()
            except psycopg.Error as exc:
                self._drop_connection()
                first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                lost = ServerUnreachableError(f"The team server stopped answering: {first_line}")
                self._record_error(lost)
                raise lost from None
            except EngramError as exc:
                self._drop_connection()
                self._record_error(exc)
                raise
            report.seconds = time.monotonic() - started
            self.last_report = report
            self.last_sync_at = datetime.now(UTC).isoformat(timespec="seconds")
            self.last_error = None
            # Persist the time now and then (not on every idle poll: that would be a write a second).
            if self._saved_error or report.pushed or report.pulled or report.deleted or not state.last_sync_at:
                self.db.writer.run(SaveTeamState(last_sync_at=self.last_sync_at, last_error_code="", last_error=""))
                self._saved_error = ""
            return report

    def _push_all(self, conn: psycopg.Connection, state: TeamState, report: SyncReport) -> None:
        batch = read_batch(self.db.reads.conn(), state, self.batch)
        if not batch.items and not batch.dropped:
            return
        # While the server stores one batch, this thread reads and redacts the next one and
        # the writer records the previous acks: a big first push overlaps its three stages.
        acked: list[Future[int]] = []
        with ThreadPoolExecutor(1, thread_name_prefix="engram-team-push") as net:
            for _ in range(10_000):  # bounded: a queue that refills forever still yields to the pull
                if not batch.items and not batch.dropped:
                    break
                sent = net.submit(push_batch, conn, team_id=state.team_id, project_key=state.project_key,
                                  member=state.member_name, client_id=state.client_id, items=batch.items)
                following = read_batch(self.db.reads.conn(), state, self.batch, batch.last_seq)
                try:
                    acks = sent.result()
                except (psycopg.DataError, psycopg.IntegrityError):
                    # One bad change must not block the queue forever: retry one by one, hold back the culprit.
                    acks = self._push_singly(conn, state, batch, report)
                # The server committed: record it locally. A crash between the two repeats this batch.
                acked.append(self.db.writer.submit(AckPush(acks, batch.dropped, state.member_name)))
                report.held_back += batch.held_back
                for ack in acks:
                    report.pushed += ack.status in ("ok", "deleted")
                    report.merged += ack.status == "merged"
                    report.conflicts += ack.status == "conflict"
                batch = following
        for future in acked:
            future.result()

    def _push_singly(self, conn: psycopg.Connection, state: TeamState, batch: Any, report: SyncReport) -> list[Any]:
        acks = []
        for item in batch.items:
            try:
                acks += push_batch(conn, team_id=state.team_id, project_key=state.project_key,
                                   member=state.member_name, client_id=state.client_id, items=[item])
            except (psycopg.DataError, psycopg.IntegrityError) as exc:
                log.warning("memory #%d held back: the server refused it (%s)", item.memory_id,
                            type(exc).__name__)
                batch.dropped.append(item.seq)
                report.held_back += 1
        return acks

    def _pull_all(self, conn: psycopg.Connection, state: TeamState, report: SyncReport) -> None:
        cursor = read_state(self.db.reads.conn()).cursor
        while True:
            batch = fetch(conn, team_id=state.team_id, project_key=state.project_key, cursor=cursor)
            if batch.cursor <= cursor:
                return
            applied = self.db.writer.run(ApplyRemote(batch))
            report.pulled += len(applied.added) + len(applied.updated)
            report.deleted += applied.deleted
            report.conflicts += applied.conflicts
            cursor = batch.cursor
            if cursor >= batch.clock:
                return

    def _scrub(self) -> None:
        """A teammate's hard delete leaves nothing here either: FTS segments merged, freed pages
        zeroed (VACUUM with secure_delete), the WAL truncated, as a local hard delete does."""
        from desktop.memory.lifecycle.emergency import ScrubDatabase

        self.db.reads.close()  # an open snapshot would keep old WAL frames alive
        self.db.writer.run(ScrubDatabase(), 600)

    def _record_error(self, exc: EngramError) -> None:
        self.last_error = exc
        log.warning("team sync failed: %s", exc)
        if self._saved_error != exc.code:
            try:
                self.db.writer.run(SaveTeamState(last_error_code=exc.code, last_error=str(exc)))
                self._saved_error = exc.code
            except Exception:
                log.exception("could not record the sync error")

    # -- background ------------------------------------------------------------------
    def start(self) -> TeamSync:
        """Run cycles in a daemon thread until `close()`; a second thread listens for teammates' pushes."""
        if self._thread is None:
            self._unsubscribe = self.db.writer.subscribe(self._on_change)
            self._thread = threading.Thread(target=self._run, name="engram-team-sync", daemon=True)
            self._thread.start()
            self._listener = threading.Thread(target=self._listen, name="engram-team-listen", daemon=True)
            self._listener.start()
        return self

    def _listen(self) -> None:
        """LISTEN on the team's channel and wake the sync thread on every push (polling stays the fallback)."""
        while not self._stop.is_set():
            try:
                state = read_state(self.db.reads.conn())
                if not state.joined:
                    self._stop.wait(5.0)
                    continue
                with server.connect(self._url(), autocommit=True) as conn:
                    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel(state.team_id))))
                    while not self._stop.is_set():
                        for _ in conn.notifies(timeout=1.0, stop_after=1):
                            self._wake.set()
            except Exception:  # the server went away or the keyring is locked: polling covers it, retry later
                log.debug("team listener stopped; retrying", exc_info=True)
                self._stop.wait(5.0)

    def wake(self) -> None:
        """Run a cycle soon (e.g. the user pressed "Sync now")."""
        self._wake.set()

    def _on_change(self, changes: ChangeSet) -> None:
        # Runs in the writer thread: only set a flag. Our own ack/apply ops publish "team" changes
        # and pulled memories; waking on those just finds nothing to do.
        if changes.ids("memory", "added") or changes.ids("memory", "updated") or changes.ids("memory", "deleted"):
            self._wake.set()

    def _run(self) -> None:
        backoff = self.interval
        while not self._stop.is_set():
            try:
                self.sync_once()
                backoff = self.interval
            except NotJoinedError:
                backoff = max(backoff, 5.0)
            except EngramError:
                backoff = min(MAX_BACKOFF, max(1.0, backoff * 2))
            except Exception:  # a bug must not kill the thread; it is logged and retried later
                log.exception("team sync cycle crashed")
                backoff = MAX_BACKOFF
            self._wake.wait(backoff)
            self._wake.clear()

    def close(self) -> None:
        """Stop the thread (the current cycle finishes) and close the connection."""
        self._stop.set()
        self._wake.set()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._thread is not None:
            self._thread.join(15)
            self._thread = None
        if self._listener is not None:
            self._listener.join(5)
            self._listener = None
        self._drop_connection()

    def status(self) -> SyncStatus:
        """The current status (reads the local database; never the network)."""
        conn = self.db.reads.conn()
        return status_of(conn, self)


def status_of(conn: Any, engine: TeamSync | None = None) -> SyncStatus:
    """Status from the database, refined by a running engine's in-memory state."""
    state = read_state(conn)
    out = SyncStatus(joined=state.joined, team_name=state.team_name, member_name=state.member_name,
                     last_sync_at=state.last_sync_at, queued=queued_count(conn) if state.joined else 0,
                     error_code=state.last_error_code, error=state.last_error)
    if engine is not None:
        out.running = engine._thread is not None
        if engine.last_sync_at:
            out.last_sync_at = engine.last_sync_at
        err = engine.last_error
        out.error_code, out.error = (err.code, str(err)) if err is not None else ("", "")
    return out
