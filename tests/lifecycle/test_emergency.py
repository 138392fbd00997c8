"""Emergency delete leaves no trace of the string in the raw bytes of the database files."""

from __future__ import annotations

from pathlib import Path

from desktop.composition import Engram
from desktop.memory.lifecycle.control import delete_all
from desktop.memory.lifecycle.emergency import emergency_delete
from desktop.memory.store.writer import FnOp, MaintenanceOp, Tx
from desktop.settings import Settings

SECRET = "zebra-codename-QuietHarbor77"


class _Checkpoint(MaintenanceOp[None]):
    def apply(self, tx: Tx) -> None:
        tx.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _raw_hits(db_path: Path, needles: list[bytes]) -> dict[str, list[bytes]]:
    hits: dict[str, list[bytes]] = {}
    for suffix in ("", "-wal", "-shm"):
        f = Path(str(db_path) + suffix)
        if f.exists():
            data = f.read_bytes().lower()
            found = [n for n in needles if n.lower() in data]
            if found:
                hits[suffix or "db"] = found
    return hits


def _project(tmp_path: Path):  # type: ignore[no-untyped-def]
    (tmp_path / "proj").mkdir()
    return Engram(Settings.load(tmp_path / "data")).open_project(tmp_path / "proj", remember=False)


def test_emergency_delete_leaves_no_trace_in_db_wal_shm(tmp_path: Path) -> None:
    project = _project(tmp_path)
    try:
        keep = [project.memories.add(f"ordinary memory {i} about the build").result().id for i in range(300)]
        mid = project.memories.add(f"The staging password is {SECRET} do not share",
                                   source="agent_explicit").result().id
        project.memories.edit(mid, {"content": f"The staging password is {SECRET} really"},
                              actor="agent", reason=f"fix typo near {SECRET}").result()
        project.memories.record_access([mid]).result()

        def vectors(tx: Tx) -> None:
            tx.execute("CREATE VIRTUAL TABLE vec_minilm USING vec0(embedding float[4], +note text)")
            tx.execute("INSERT INTO vector_spaces(model_id, dims, table_name, created_at) "
                       "VALUES ('minilm', 4, 'vec_minilm', 'now')")
            tx.execute("INSERT INTO vec_minilm(rowid, embedding, note) VALUES (?, '[1,2,3,4]', ?)", (mid, SECRET))
            tx.execute("INSERT INTO vec_minilm(rowid, embedding, note) VALUES (?, '[4,3,2,1]', 'keep me')",
                       (keep[0],))
        project.db.writer.run(FnOp("vectors", vectors))
        project.db.writer.run(_Checkpoint())
        needles = [SECRET.encode(), b"QuietHarbor77", b"codename"]
        assert "db" in _raw_hits(project.db.path, needles)  # the test really looks at the bytes
        assert emergency_delete(project, [mid], reason="secret stored by mistake") == 1
        assert _raw_hits(project.db.path, needles) == {}
        assert project.memories.count() == 300
        conn = project.db.reads.conn()
        assert conn.execute("SELECT count(*) FROM vec_minilm").fetchall()[0][0] == 1
        assert conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'quietharbor77'"
                            ).fetchall()[0][0] == 0
        history = project.memories.history(mid)
        assert history[-1]["action"] == "hard_delete" and history[-1]["reason"] == "secret stored by mistake"
        assert all(SECRET not in str(h) for h in history)
    finally:
        project.close()
    assert _raw_hits(project.db.path, [SECRET.encode(), b"QuietHarbor77"]) == {}


def test_forget_hard_on_cli_and_missing_id(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from desktop.cli.main import main

    env = ["--project", str(tmp_path / "p"), "--data-dir", str(tmp_path / "d")]
    (tmp_path / "p").mkdir()
    assert main(["add", *env, "--json", f"codename {SECRET.replace('-', ' ')} for the launch"]) == 0
    capsys.readouterr()
    assert main(["forget", "--hard", *env, "1"]) == 0
    assert main(["forget", "--hard", *env, "1"]) == 2
    db_files = list((tmp_path / "d").rglob("*.db*"))
    assert db_files and not any(b"quietharbor77" in f.read_bytes().lower() for f in db_files)


def test_delete_all_removes_every_memory_and_text(tmp_path: Path) -> None:
    project = _project(tmp_path)
    try:
        for i in range(50):
            project.memories.add(f"project fact {i} mentions {SECRET}", source="agent_explicit").result()
        assert delete_all(project) == 50
        assert project.memories.count() == 0
        assert project.memories.audit_log(limit=1)[0]["action"] == "delete_all"
        assert _raw_hits(project.db.path, [b"QuietHarbor77"]) == {}
    finally:
        project.close()
