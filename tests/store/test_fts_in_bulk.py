"""Issue 17: code chunks get their FTS rows in one statement per batch; every other insert keeps the trigger.

Migration 0020 makes the insert trigger skip its FTS row inside ``fts_in_bulk`` (and only
there, on the writer thread); these tests check both ways of indexing find the same
rows, and that nothing outside the block is left out of search.
"""

from __future__ import annotations

from pathlib import Path

from desktop.memory.graph.code_memories import StoreChunks
from desktop.memory.graph.model import CodeChunk
from desktop.memory.service import MemoryService
from desktop.memory.store.connection import fts_text, open_connection
from desktop.memory.store.database import Database
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.migrations import applied_migrations, migrate
from desktop.memory.store.schema import MIGRATIONS
from desktop.memory.store.writer import FnOp, Tx


def _hits(db: Database, term: str) -> list[int]:
    return sorted(r[0] for r in db.reads.conn().execute(
        "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?", (term,)))


def _chunk(path: str, text: str, line: int) -> CodeChunk:
    return CodeChunk(path, "python", "function", "f", line, line + 1, text, f"File: {path}")


def test_bulk_and_trigger_indexing_find_the_same_rows(db: Database) -> None:
    assert "0020_fts_in_bulk" in applied_migrations(db.reads.conn())
    memories = MemoryService(db)
    before = memories.add(NewMemory(content="Retry the flakyUpload call twice", type="gotcha",
                                    related_files=["net/upload.py"])).result().id
    added, _ = db.writer.run(StoreChunks({"net/upload.py": (None, [
        _chunk("net/upload.py", "def flakyUpload(blob):\n    return send(blob)", 1),
        _chunk("net/upload.py", "def parseHeaders(raw):\n    return dict(raw)", 4)])}))
    after = memories.add(NewMemory(content="parseHeaders drops duplicate keys", type="gotcha")).result().id
    assert added == 2
    chunk_ids = [r[0] for r in db.reads.conn().execute(
        "SELECT id FROM memories WHERE source='code_index' ORDER BY id")]
    # Split identifiers and file paths are searchable either way; the memory added after the
    # bulk insert went through the trigger again (the block does not leak past its end).
    assert _hits(db, "flaky") == sorted([before, chunk_ids[0]])
    assert _hits(db, "headers") == sorted([chunk_ids[1], after])
    assert _hits(db, "upload") == sorted([before, *chunk_ids])
    # Each FTS row is exactly the one the trigger would have written: rebuild them all the trigger's way.
    rows = db.reads.conn().execute("SELECT id, content, tags, related_files FROM memories").fetchall()

    def reindex(tx: Tx) -> None:
        for rid, content, tags, files in rows:
            tx.execute("DELETE FROM memories_fts WHERE rowid=?", (rid,))
            tx.execute("INSERT INTO memories_fts(rowid, body) VALUES (?, ?)", (rid, fts_text(content, tags, files)))
    snapshot = {t: _hits(db, t) for t in ("flaky", "headers", "upload", "blob", "raw", "retry")}
    db.writer.run(FnOp("reindex", reindex))
    assert {t: _hits(db, t) for t in snapshot} == snapshot


def test_an_existing_database_keeps_its_search_across_the_migration(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = open_connection(path)  # a database as the previous release left it (before 0020)
    migrate(conn, str(path), MIGRATIONS[:-1])
    conn.execute("INSERT INTO memories(type, content, fingerprint, created_at, updated_at, last_accessed_at,"
                 " project_id) VALUES ('fact', 'The cacheWarmer runs at boot', 'f1', 'x', 'x', 'x', 'p')")
    conn.close()
    db = Database(path).open()
    try:
        assert "0020_fts_in_bulk" in applied_migrations(db.reads.conn())
        assert _hits(db, "warmer") == [1]  # indexed by the old trigger, still found
        added, _ = db.writer.run(StoreChunks({"boot.py": (None, [_chunk("boot.py", "def warmCache():\n    pass", 1)])}))
        later = MemoryService(db).add(NewMemory(content="warm the cache before the demo", type="decision")).result().id
        assert added == 1 and _hits(db, "warm") == [2, later] and _hits(db, "cache") == [1, 2, later]
    finally:
        db.close()


def test_replaced_chunks_leave_search_and_other_deletes_still_do(db: Database) -> None:
    memories = MemoryService(db)
    db.writer.run(StoreChunks({"a.py": (None, [_chunk("a.py", "def oldName():\n    pass", 1)]),
                               "b.py": (None, [_chunk("b.py", "def keepMe():\n    pass", 1)])}))
    note = memories.add(NewMemory(content="oldName was renamed", type="decision")).result().id
    assert len(_hits(db, "old")) == 2
    # Re-chunking a.py deletes its chunk (FTS rows in one executemany) and adds the new one.
    added, deleted = db.writer.run(StoreChunks({"a.py": (None, [_chunk("a.py", "def newName():\n    pass", 1)])}))
    assert (added, deleted) == (1, 1)
    assert _hits(db, "old") == [note] and len(_hits(db, "new")) == 1 and len(_hits(db, "keep")) == 1
    memories.hard_delete(note).result()  # an ordinary delete: the trigger removes its FTS row
    assert _hits(db, "old") == [] and _hits(db, "renamed") == []
