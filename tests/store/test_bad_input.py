"""Full disk, read-only folder, corrupt file with consent to move aside, projects."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.composition import Engram
from desktop.memory.projects import ProjectRegistry, move_aside_corrupt
from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database
from desktop.memory.store.errors import CorruptDatabaseError, DiskFullError, ReadOnlyLocationError
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.writer import FnOp
from desktop.settings import Settings


def test_full_disk_fails_cleanly_and_keeps_what_was_stored(db: Database) -> None:
    svc = MemoryService(db)
    kept = svc.add_many([NewMemory(content=f"kept {i}") for i in range(50)]).result()
    pages = db.writer.run(FnOp("probe", lambda tx: tx.execute("PRAGMA page_count").fetchall()[0][0]))
    # A database that may not grow behaves exactly like a full disk for SQLite (SQLITE_FULL).
    db.writer.run(FnOp("cap", lambda tx: tx.execute(f"PRAGMA max_page_count = {pages + 2}").fetchall()))
    with pytest.raises(DiskFullError):
        svc.add_many([NewMemory(content=f"overflow {i} " + "y" * 2000) for i in range(200)]).result()
    assert svc.count() == 50
    assert {r.id for r in kept} == set(svc.list_ids())
    conn = db.reads.conn()
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert conn.execute("SELECT count(*) FROM memories WHERE content LIKE 'overflow%'").fetchall()[0][0] == 0


def test_read_only_data_folder_gives_a_clear_error() -> None:
    registry = ProjectRegistry(Path("/sys/engram-cannot-write-here"))
    with pytest.raises(ReadOnlyLocationError, match="data folder"):
        registry.ensure_writable()


def test_corrupt_database_is_moved_aside_only_when_asked(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    app = Engram(settings)
    project_dir = tmp_path / "proj"
    project_dir.mkdir()
    info = app.registry.prepare(project_dir)
    info.db_path.write_bytes(b"garbage" * 1000)
    with pytest.raises(CorruptDatabaseError) as err:
        app.open_project(project_dir)
    assert info.db_path.read_bytes() == b"garbage" * 1000  # never overwritten
    moved = move_aside_corrupt(err.value)
    assert moved.read_bytes() == b"garbage" * 1000
    project = app.open_project(project_dir)
    try:
        assert project.memories.count() == 0
    finally:
        project.close()


def test_projects_get_their_own_database_and_are_remembered(tmp_path: Path) -> None:
    app = Engram(Settings(data_dir=tmp_path / "data"))
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    pa = app.open_project(a)
    pa.memories.add("only in a").result()
    pa.close()
    pb = app.open_project(b)
    assert pb.memories.count() == 0
    pb.close()
    assert app.registry.recent() == [b.resolve(), a.resolve()]
    assert pa.info.db_path != pb.info.db_path
    assert str(pa.info.db_path).startswith(str(tmp_path / "data"))
