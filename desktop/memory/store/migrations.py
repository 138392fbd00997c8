"""Named, append-only migrations recorded in a ledger table.

The ledger holds the name of every migration applied. A database whose ledger
names a migration this build does not know came from a newer Engram: it is
refused before anything is written to it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime

import apsw

from desktop import __version__
from desktop.memory.store.connection import APPLICATION_ID
from desktop.memory.store.errors import NewerDatabaseError
from desktop.memory.store.schema import MIGRATIONS

log = logging.getLogger("engram.store")

LEDGER = "_engram_migrations"


def applied_migrations(conn: apsw.Connection) -> list[str]:
    """Names recorded in the ledger, oldest first (empty for a new database)."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (LEDGER,)
    ).fetchall()
    if not exists:
        return []
    return [r[0] for r in conn.execute(f"SELECT name FROM {LEDGER} ORDER BY seq")]


def check_not_newer(conn: apsw.Connection, path: str,
                    migrations: Sequence[tuple[str, str]] = MIGRATIONS) -> None:
    """Raise NewerDatabaseError when the ledger names a migration we do not know."""
    known = {name for name, _ in migrations}
    unknown = [name for name in applied_migrations(conn) if name not in known]
    if unknown:
        raise NewerDatabaseError(path, unknown)


def migrate(conn: apsw.Connection, path: str,
            migrations: Sequence[tuple[str, str]] = MIGRATIONS) -> list[str]:
    """Apply every pending migration, each in its own IMMEDIATE transaction.

    Safe when two processes open the same new database at once: the ledger is
    re-read after the write lock is taken, so a migration is never applied twice.
    Returns the names applied now.
    """
    applied = applied_migrations(conn)
    known = {name for name, _ in migrations}
    unknown = [name for name in applied if name not in known]
    if unknown:
        raise NewerDatabaseError(path, unknown)
    if len(set(applied)) == len(known) and _has_project_id(conn):
        # Up to date (every open but the first after an upgrade): one read, no write lock. A hook
        # process opens the database on every agent event and must not queue behind a busy writer.
        return []
    done: list[str] = []
    for name, sql in migrations:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {LEDGER} ("
                " seq INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE,"
                " applied_at TEXT NOT NULL, app_version TEXT NOT NULL)")
            check_not_newer(conn, path, migrations)
            already = conn.execute(f"SELECT 1 FROM {LEDGER} WHERE name=?", (name,)).fetchall()
            if not already:
                if not done:
                    # Mark the file as Engram's (written only when migrating, so a
                    # refused database stays byte-for-byte untouched).
                    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                conn.execute(sql)
                conn.execute(
                    f"INSERT INTO {LEDGER}(name, applied_at, app_version) VALUES (?,?,?)",
                    (name, datetime.now(UTC).isoformat(), __version__))
                done.append(name)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    if done:
        log.info("applied migrations %s to %s", done, path)
    _ensure_project_id(conn)
    return done


def _has_project_id(conn: apsw.Connection) -> bool:
    return bool(conn.execute("SELECT 1 FROM project_meta WHERE key='project_id'").fetchall())


def _ensure_project_id(conn: apsw.Connection) -> None:
    """Give a new database its permanent project id (used in exports and provenance)."""
    if _has_project_id(conn):
        return
    import uuid  # once per database; on 3.11 it loads platform too (~5 ms of every hook process)

    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("INSERT OR IGNORE INTO project_meta(key, value) VALUES ('project_id', ?)",
                     (uuid.uuid4().hex,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def project_id(conn: apsw.Connection) -> str:
    """The database's project id."""
    return str(conn.execute("SELECT value FROM project_meta WHERE key='project_id'").fetchall()[0][0])
