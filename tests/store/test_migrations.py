"""Migrations, the newer-version refusal, vec0 and FTS sync."""

from __future__ import annotations

import hashlib
from pathlib import Path

import apsw
import pytest

from desktop.memory.store.connection import open_connection
from desktop.memory.store.database import Database
from desktop.memory.store.errors import CorruptDatabaseError, NewerDatabaseError
from desktop.memory.store.migrations import LEDGER, applied_migrations, migrate
from desktop.memory.store.schema import MIGRATIONS


def _tables(conn: apsw.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table','view')")}


def test_every_migration_applies_to_an_empty_database(tmp_path: Path) -> None:
    conn = open_connection(tmp_path / "a.db")
    applied = migrate(conn, "a.db")
    assert applied == [name for name, _ in MIGRATIONS]
    tables = _tables(conn)
    for expected in ("memories", "memories_fts", "audit_log", "vector_spaces", "embedding_cache",
                     "observer_co_access_edges", "observer_error_patterns", "observer_module_session_counts",
                     "observer_synthesis_log", "observer_file_nodes", "graph_nodes", "graph_edges",
                     "graph_closure", "graph_index_state", "session_metrics", LEDGER):
        assert expected in tables
    assert migrate(conn, "a.db") == []  # idempotent


@pytest.mark.parametrize("done", range(1, len(MIGRATIONS)))
def test_each_migration_applies_to_the_previous_version(tmp_path: Path, done: int) -> None:
    conn = open_connection(tmp_path / "b.db")
    migrate(conn, "b.db", MIGRATIONS[:done])
    assert applied_migrations(conn) == [n for n, _ in MIGRATIONS[:done]]
    applied = migrate(conn, "b.db")
    assert applied == [n for n, _ in MIGRATIONS[done:]]
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


def test_database_from_a_newer_engram_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "newer.db"
    with Database(path):
        pass
    conn = open_connection(path)
    conn.execute(f"INSERT INTO {LEDGER}(name, applied_at, app_version) VALUES ('9999_future', 'x', '9.0')")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(NewerDatabaseError) as info:
        Database(path).open()
    assert "9999_future" in str(info.value)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_vec0_loads_on_every_connection(db: Database) -> None:
    version = db.reads.conn().execute("SELECT vec_version()").fetchall()[0][0]
    assert version.startswith("v")
    conn = db.reads.conn()
    with pytest.raises(apsw.ReadOnlyError):  # read connections can never start a write
        conn.execute("INSERT INTO project_meta(key, value) VALUES ('x', 'y')")
    rows = conn.execute("SELECT vec_distance_cosine(vec_f32('[1,0]'), vec_f32('[0,1]'))").fetchall()
    assert rows[0][0] == pytest.approx(1.0)


def test_fts_stays_in_sync_through_edit_and_delete(memories) -> None:  # type: ignore[no-untyped-def]
    from desktop.memory.store.rows import MemoryQuery

    r = memories.add("The verifyJwt helper lives in auth/tokens.ts", type="gotcha").result()
    assert memories.count(MemoryQuery(text="verify jwt")) == 1
    assert memories.count(MemoryQuery(text="tokens")) == 1
    memories.edit(r.id, {"content": "Sessions are stored in redis"}).result()
    assert memories.count(MemoryQuery(text="verify jwt")) == 0
    assert memories.count(MemoryQuery(text="redis")) == 1
    memories.hard_delete(r.id).result()
    assert memories.count(MemoryQuery(text="redis", statuses=["active", "deprecated"])) == 0
    fts_rows = memories.db.reads.conn().execute("SELECT count(*) FROM memories_fts").fetchall()[0][0]
    assert fts_rows == 0


def test_garbage_file_is_reported_as_corrupt_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "engram.db"
    payload = b"this is not a database" * 100
    path.write_bytes(payload)
    with pytest.raises(CorruptDatabaseError):
        Database(path).open()
    assert path.read_bytes() == payload


def test_damaged_pages_are_reported_as_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "engram.db"
    with Database(path) as database:
        from desktop.memory.service import MemoryService

        svc = MemoryService(database)
        svc.add_many([__import__("desktop.memory.store.memory_ops", fromlist=["NewMemory"]).NewMemory(
            content=f"memory number {i} " + "x" * 300) for i in range(300)]).result()
    data = bytearray(path.read_bytes())
    for offset in range(4096 * 3, min(len(data), 4096 * 12)):
        data[offset] = 0xA5
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptDatabaseError):
        Database(path).open()
