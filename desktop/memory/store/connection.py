"""Opening SQLite connections the way Engram needs them.

apsw is used instead of the stdlib module because it can load extensions on
Linux, macOS and Windows wheels alike (the stdlib build here cannot), which
sqlite-vec needs. Every connection gets the same pragmas, sqlite-vec and the SQL
functions the FTS triggers call, so any connection may fire those triggers.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar, cast

import apsw

from desktop.memory.store.errors import (
    CorruptDatabaseError,
    DatabaseBusyError,
    DiskFullError,
    ReadOnlyLocationError,
    StoreError,
)
from desktop.memory.store.live import IDS_IN, ids_param

log = logging.getLogger("engram.store")

BUSY_TIMEOUT_MS = 10_000
SQLITE_HEADER = b"SQLite format 3\x00"
# "ENGR" - lets `file` and Engram itself recognise its own databases.
APPLICATION_ID = 0x454E4752

T = TypeVar("T")


_hints = threading.local()


def fts_text(content: str | None, tags: str | None, files: str | None) -> str:
    """Text indexed by FTS5 for a memory row: content plus tags and files, with identifiers split.

    Pure: callers that insert many rows may compute it ahead (in other processes)
    and pass it to :func:`precomputed_fts`.
    """
    parts: list[str] = []
    for blob in (tags, files):
        if blob:
            try:
                parts.extend(str(v) for v in json.loads(blob))
            except (ValueError, TypeError):
                parts.append(blob)
    return fts_text_of(content or "", parts)


def fts_text_of(content: str, words: Sequence[str]) -> str:
    """:func:`fts_text` given the decoded items of the tags and related_files columns, in that order."""
    from desktop.memory.text.tokens import expand_code_terms

    return expand_code_terms("\n".join([content, *words]))


def _fts_text(content: str | None, tags: str | None, files: str | None) -> str:
    """The SQL function the FTS triggers call: a precomputed body when the inserting thread gave one."""
    bodies: Mapping[tuple[str | None, str | None, str | None], str] | None = getattr(_hints, "bodies", None)
    if bodies:
        body = bodies.get((content, tags, files))
        if body is not None:
            return body
    return fts_text(content, tags, files)


@contextmanager
def precomputed_fts(bodies: Mapping[tuple[str | None, str | None, str | None], str]) -> Iterator[None]:
    """Let this thread's inserts use FTS bodies computed ahead, keyed by (content, tags, related_files).

    The code indexer computes :func:`fts_text` of its chunks in its parse workers; the
    writer then inserts them without paying identifier splitting on its own (single)
    thread. A row not in ``bodies`` is computed as usual, so a missing hint is only slower.
    """
    previous = getattr(_hints, "bodies", None)
    _hints.bodies = bodies
    try:
        yield
    finally:
        _hints.bodies = previous


def _fts_deferred() -> int:
    """The SQL function the insert trigger asks: 1 inside :func:`fts_in_bulk` on this thread."""
    return 1 if getattr(_hints, "deferred", False) else 0


# One statement for a whole batch: FTS5 flushes its pending terms at every statement
# savepoint, and a trigger's INSERT opens one per row (see schema FTS_IN_BULK).
_BULK_FTS = ("INSERT INTO memories_fts(rowid, body) SELECT id, engram_fts_text(content, tags, related_files)"
             f" FROM memories WHERE {IDS_IN}")


@contextmanager
def fts_in_bulk(conn: Any, bodies: Mapping[tuple[str | None, str | None, str | None], str]) -> Iterator[list[int]]:
    """Insert memories inside this block and add their ids to the yielded list: they are indexed at its end.

    The insert trigger leaves their FTS rows out; one ``INSERT ... SELECT`` then indexes
    every listed row from its stored columns, with the same SQL function as the trigger
    (so ``bodies`` hints apply as in :func:`precomputed_fts`). ``conn`` is the writer's
    (guarded) connection. A row inserted in the block but not listed would be missing
    from search: list every id an insert returns. Only insert in the block (no REPLACE,
    no DELETE): the delete trigger is deferred too, and a row deleted here would keep
    its FTS row.
    """
    ids: list[int] = []
    previous = getattr(_hints, "deferred", False)
    _hints.deferred = True
    try:
        with precomputed_fts(bodies):
            yield ids
            _hints.deferred = previous
            if ids:
                conn.execute(_BULK_FTS, (ids_param(ids),))
    finally:
        _hints.deferred = previous


def delete_memories(conn: Any, ids: Sequence[int]) -> None:
    """Hard-delete memories by id (every one must exist); their FTS rows go in one executemany.

    The delete trigger leaves the FTS rows alone meanwhile (see :func:`fts_in_bulk`);
    side tables follow by their foreign keys and triggers as for any delete. FTS5 writes
    the deleted rows at the next statement savepoint, and that costs in proportion to its
    index, not to the rows: delete many rows per call, not one file's at a time.
    """
    if not ids:
        return
    previous = getattr(_hints, "deferred", False)
    _hints.deferred = True
    try:
        for i in range(0, len(ids), 500):
            part = list(ids[i:i + 500])
            conn.execute(f"DELETE FROM memories WHERE id IN ({','.join('?' * len(part))})", part)
    finally:
        _hints.deferred = previous
    conn.executemany("DELETE FROM memories_fts WHERE rowid = ?", [(i,) for i in ids])


def vec0_path() -> str:
    """Path of the sqlite-vec loadable library (without suffix; SQLite adds .so/.dylib/.dll).

    In a PyInstaller build the library is collected to ``<_MEIPASS>/sqlite_vec/``
    (see packaging/engram.spec); looking there first keeps the frozen app from
    depending on where ``sqlite_vec.__file__`` happens to point inside the archive.
    """
    bundle = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and bundle:
        frozen = Path(bundle) / "sqlite_vec" / "vec0"
        if any(frozen.with_suffix(ext).exists() for ext in (".so", ".dylib", ".dll")):
            return str(frozen)
    # The package's folder, found without importing it: sqlite_vec/__init__ imports numpy
    # (2-400 ms) for helpers Engram never calls, and every `engram` command opens a database.
    import importlib.util

    spec = importlib.util.find_spec("sqlite_vec")
    folders = list(spec.submodule_search_locations or []) if spec else []
    if not folders:
        import sqlite_vec

        return str(sqlite_vec.loadable_path())
    return str(Path(folders[0]) / "vec0")


def check_header(path: Path) -> None:
    """Refuse a file that exists but is not an SQLite database, before SQLite touches it."""
    if path.is_dir():
        raise StoreError(f"{path} is a folder, not a memory database; move it away or choose another place.")
    try:
        with path.open("rb") as fh:
            head = fh.read(16)
    except FileNotFoundError:
        return
    except PermissionError as exc:
        raise ReadOnlyLocationError(f"Cannot read {path}: permission denied.") from exc
    if head and head != SQLITE_HEADER:
        raise CorruptDatabaseError(str(path), "not an SQLite database (bad header)")


def private_file(path: Path) -> None:
    """Create the database file 0600 (owner only), or tighten an existing one.

    Memories quote code, commands and decisions: other users of the machine have no
    business reading them. SQLite creates the -wal and -shm sidecars with the main
    file's permissions, so they follow.
    """
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(fd)
        return
    except FileExistsError:
        pass
    except OSError:
        return  # a read-only folder: SQLite reports it, in its own words
    try:
        st = path.stat()
        if st.st_mode & 0o077 and (not hasattr(os, "getuid") or st.st_uid == os.getuid()):
            for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
                if p.exists():
                    p.chmod(0o600)
    except OSError:
        pass  # not ours to change; reading still works


def open_connection(path: Path | str, *, readonly: bool = False) -> apsw.Connection:
    """Open one connection with WAL, busy timeout, foreign keys, sqlite-vec and Engram's functions.

    `readonly` connections still open the file read-write (WAL readers need the
    shared-memory file) but set `query_only`, so they can never start a write.
    """
    target = str(path)
    if target != ":memory:":
        check_header(Path(target))
        if not readonly:
            private_file(Path(target))
    flags = apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    try:
        conn = apsw.Connection(target, flags=flags)
    except apsw.CantOpenError as exc:
        parent = Path(target).parent
        if not os.access(parent, os.W_OK):
            raise ReadOnlyLocationError(f"Cannot create the database in {parent}: the folder is read-only.") from exc
        raise StoreError(f"Cannot open {target}: {exc}") from exc
    try:
        conn.setbusytimeout(BUSY_TIMEOUT_MS)
        conn.enable_load_extension(True)
        conn.load_extension(vec0_path())
        conn.enable_load_extension(False)
        # apsw types scalar callbacks as variadic (*SQLiteValue); numargs=3 fixes the arity SQLite calls with.
        conn.create_scalar_function("engram_fts_text", _fts_text, 3, deterministic=True)  # type: ignore[arg-type]
        conn.create_scalar_function("engram_fts_deferred", _fts_deferred, 0)  # type: ignore[arg-type]
        _apply_pragmas(conn, readonly=readonly)
    except apsw.Error as exc:
        conn.close()
        raise translate_error(exc, target) from exc
    return conn


def _apply_pragmas(conn: apsw.Connection, *, readonly: bool) -> None:
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA cache_size = -32000")
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.execute("PRAGMA mmap_size = 268435456")
    if readonly:
        conn.execute("PRAGMA query_only = 1")
        # Touch the schema so a damaged file fails here, not in the middle of a view.
        conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
        return
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchall()[0][0]
    if str(mode).lower() not in ("wal", "memory"):
        log.warning("journal_mode is %s, not WAL", mode)
    # NORMAL in WAL mode survives a process crash (only power loss can drop the
    # last commits), and keeps commits fast.
    conn.execute("PRAGMA synchronous = NORMAL")
    # Overwrite deleted content in pages already being written, at no extra I/O,
    # so forgotten text does not linger in free space.
    conn.execute("PRAGMA secure_delete = FAST")


def _disk_full(where: str) -> bool:
    """Whether the disk holding ``where`` (a database path) has no room left (under 64 KB)."""
    if not where:
        return False
    import shutil  # only after a failed write; it loads the compression modules (~5 ms a hook process)

    folder = Path(where).parent
    try:
        return shutil.disk_usage(folder if folder.is_dir() else Path(where)).free < 65_536
    except OSError:
        return False


def translate_error(exc: BaseException, where: str = "") -> BaseException:
    """Map an apsw exception to Engram's known errors; unknown ones pass through as bugs."""
    if isinstance(exc, (apsw.CorruptError, apsw.NotADBError)):
        return CorruptDatabaseError(where or "database", str(exc))
    if isinstance(exc, apsw.FullError):
        return DiskFullError("The disk is full; the change was not saved.")
    if isinstance(exc, (apsw.ReadOnlyError, apsw.PermissionsError)):
        return ReadOnlyLocationError(f"The database {where} is read-only; the change was not saved.")
    if isinstance(exc, (apsw.BusyError, apsw.LockedError)):
        return DatabaseBusyError("Another Engram process kept the database busy; try again.")
    if isinstance(exc, apsw.IOError):
        text = str(exc).lower()
        # SQLite reports a WAL or shared-memory file that cannot grow as a plain I/O error:
        # the free space of the database's disk says whether that was a full disk.
        if "full" in text or _disk_full(where):
            return DiskFullError("The disk is full; the change was not saved.")
        return StoreError(f"Disk I/O error on {where}: {exc}")
    return exc


def guarded(fn: Callable[[], T], where: str = "") -> T:
    """Run `fn`, turning apsw errors into Engram's known errors."""
    try:
        return fn()
    except apsw.Error as exc:
        raise translate_error(exc, where) from exc


def rows_as_dicts(cursor: Any) -> list[dict[str, Any]]:
    """Fetch every row of an apsw cursor as a dict keyed by column name."""
    try:
        names = [d[0] for d in cursor.getdescription()]
    except apsw.ExecutionCompleteError:  # no rows: the statement already finished
        return []
    return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]


def count_of(cursor: apsw.Cursor) -> int:
    """The number a ``SELECT count(*) ...`` cursor returns (first column of its only row)."""
    # count(*) always yields exactly one INTEGER row, never NULL; apsw types it as any SQLite value.
    return int(cast(int, cursor.fetchall()[0][0]))
