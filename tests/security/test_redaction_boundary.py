"""Issue 14, one redaction boundary: no raw secret in any table, any column, or the file's bytes."""

from __future__ import annotations

import json
import random
import string
import zlib
from pathlib import Path
from typing import Any

import pytest

from desktop.memory.lifecycle.control import delete_all
from desktop.memory.observer.ingest import Ingestor
from desktop.memory.observer.novelty import HashingEmbedder, Novelty
from desktop.memory.observer.promotion import Promoter
from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.writer import FnOp, Tx
from tests.observer.obs_helpers import Seq

_RNG = random.Random(14)


def _rnd(alphabet: str, n: int) -> str:
    while True:
        s = "".join(_RNG.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in s) and any(c.isalpha() for c in s):
            return s


AWS = "AKIA" + _rnd(string.ascii_uppercase + string.digits, 16)
GHP = "ghp_" + _rnd(string.ascii_letters + string.digits, 36)
DB_PASSWORD = "Pw" + _rnd(string.ascii_letters + string.digits, 14)
CONN = f"postgresql://app:{DB_PASSWORD}@db.internal:5432/prod"
RAW = (AWS, GHP, DB_PASSWORD)


def _every_stored_text(db: Database) -> str:
    """Every text value of every table (zlib blobs decompressed), as one string."""
    conn = db.reads.conn()
    parts: list[str] = []
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    for table in tables:
        try:
            rows = conn.execute(f'SELECT * FROM "{table}"').fetchall()
        except Exception:  # vec0 shadow and virtual tables that cannot be read directly
            continue
        for row in rows:
            for value in row:
                if isinstance(value, str):
                    parts.append(value)
                elif isinstance(value, bytes):
                    try:
                        parts.append(zlib.decompress(value).decode("utf-8", "replace"))
                    except zlib.error:
                        parts.append(value.decode("latin-1"))
    return "\n".join(parts)


def _file_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


def _leaky_session(sid: str) -> list[Any]:
    return (Seq(sid).user(f"deploy with {CONN}")
            .bash(f"export AWS_ACCESS_KEY_ID={AWS}; SOME_PASSWORD={DB_PASSWORD} ./deploy.sh --token {GHP}",
                  f"error: could not connect to {CONN}: password authentication failed", error=True)
            .call("Grep", (), "src/a.py:1: x", pattern=f"{GHP} {AWS}")
            .read("src/config.py", f"DATABASE_URL = '{CONN}'\nAWS = '{AWS}'\n")
            .bash(f"export AWS_ACCESS_KEY_ID={AWS}; SOME_PASSWORD={DB_PASSWORD} ./deploy.sh --token {GHP}",
                  f"error: could not connect to {CONN}: password authentication failed", error=True)
            .edit("src/config.py")
            .bash(f"SOME_PASSWORD={DB_PASSWORD} ./deploy.sh", "deployed")
            .end("success"))


def test_ingest_of_a_leaky_transcript_stores_no_raw_secret(db: Database) -> None:
    ing = Ingestor(db, Promoter(db, novelty=Novelty(HashingEmbedder())))
    for i in range(3):
        ing.learn_events(_leaky_session(f"leak{i}"))
    stored = _every_stored_text(db)
    assert "REDACTED" in stored  # the secrets were seen, and replaced
    for raw in RAW:
        assert raw not in stored, raw
    # and therefore in no page and no WAL frame either
    db.close()
    data = _file_bytes(db.path)
    for raw in RAW:
        assert raw.encode() not in data


def test_every_text_column_of_every_table_passes_the_scanner(db: Database) -> None:
    """Walks the schema: a new table or TEXT column is covered, or this test fails."""
    conn = db.reads.conn()
    tables = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND sql NOT LIKE 'CREATE VIRTUAL%' "
        "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%_fts_%' AND name NOT LIKE 'vec_%'")]
    checked: list[str] = []
    for table in tables:
        cols = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
        parents: dict[str, Any] = {}
        for fk in conn.execute(f'PRAGMA foreign_key_list("{table}")').fetchall():
            parent_col = fk[4] or "rowid"
            found = conn.execute(f'SELECT "{parent_col}" FROM "{fk[2]}" LIMIT 1').fetchall()
            if found:
                parents[fk[3]] = found[0][0]
        texts = [c for c in cols if (c[2] or "").upper() in ("TEXT", "")]
        for target in texts:
            name = target[1]
            secret = f"note {AWS} and {CONN}"

            def value(col: Any, target_name: str = name, secret: str = secret,
                      parents: dict[str, Any] = parents) -> Any:
                kind = (col[2] or "").upper()
                if col[1] in parents and col[1] != target_name:
                    return parents[col[1]]
                if col[1] == target_name:
                    # JSON columns (read by triggers) get the secret inside JSON.
                    return {"'[]'": json.dumps([secret]), "'{}'": json.dumps({"k": secret})}.get(
                        str(col[4] or ""), secret)
                if kind == "INTEGER":
                    return _RNG.randrange(1, 10**9)
                if kind == "REAL":
                    return 0.5
                if kind == "BLOB":
                    return b""
                default = str(col[4] or "")
                return default.strip("'") if default in ("'[]'", "'{}'") else f"v{_RNG.randrange(10**9)}"

            row = [value(c) for c in cols]
            names = ",".join(f'"{c[1]}"' for c in cols)

            def write(tx: Tx, names: str = names, row: list[Any] = row, table: str = table) -> None:
                tx.execute(f'INSERT INTO "{table}"({names}) VALUES ({",".join("?" * len(row))})', row)
            try:
                db.writer.run(FnOp("probe", write))
            except Exception as exc:  # a constraint the probe cannot meet must be visible, not skipped
                pytest.fail(f"could not probe {table}.{name}: {exc}")
            got = [r[0] for r in conn.execute(f'SELECT "{name}" FROM "{table}"').fetchall()]
            assert all(AWS not in str(g) and DB_PASSWORD not in str(g) for g in got), f"{table}.{name}"
            checked.append(f"{table}.{name}")
    assert len(checked) > 60  # the probe really walked the schema


def test_add_refuses_or_redacts_secrets_in_every_field(db: Database) -> None:
    svc = MemoryService(db)
    with pytest.raises(Exception, match="secret"):
        svc.add(NewMemory(content="Deploy notes", related_files=[CONN])).result(10)
    res = svc.add(NewMemory(content="Deploy notes", source="agent_explicit", related_files=[CONN],
                            metadata={"signal_key": f"error:{AWS}"}, context_prefix=GHP,
                            relations=[{"id": 1, "why": GHP}], code_anchors={"a.py": AWS}),
                  actor="observer").result(10)
    row = json.dumps(db.reads.conn().execute("SELECT * FROM memories WHERE id=?", (res.id,)).fetchall())
    for raw in RAW:
        assert raw not in row


def test_delete_all_leaves_no_raw_or_learned_text_in_side_tables(db: Database) -> None:
    ing = Ingestor(db, Promoter(db, novelty=Novelty(HashingEmbedder())))
    for i in range(2):
        ing.learn_events(_leaky_session(f"d{i}"))

    class _P:
        pass
    project = _P()
    project.db = db  # type: ignore[attr-defined]
    delete_all(project, actor="cli", reason="test")
    conn = db.reads.conn()
    for table in ("observer_error_patterns", "observer_search_patterns", "session_metrics",
                  "observer_term_files", "observer_file_nodes", "observer_sequences", "scratchpad_checkpoints",
                  "observer_session_files", "observer_seen_events", "memory_files"):
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0] == 0, table
    assert "deploy.sh" not in _every_stored_text(db)


def test_erasing_a_leaked_string_removes_it_everywhere_it_is_quoted(db: Database) -> None:
    from desktop.memory.lifecycle.leak import erase_text

    leak = "hunter2-not-a-known-format"  # the scanner cannot know this one: the user names it
    svc = MemoryService(db)
    a = svc.add(NewMemory(content=f"The staging box takes admin and then {leak}", source="agent_explicit"),
                actor="observer").result(10).id
    b = svc.add(NewMemory(content="Unrelated: use pnpm", source="agent_explicit"), actor="observer").result(10).id
    svc.edit(b, {"content": f"Unrelated: use pnpm ({leak})"}, actor="user").result(10)
    svc.edit(b, {"content": "Unrelated: use pnpm"}, actor="user").result(10)  # the leak stays in history
    ing = Ingestor(db, Promoter(db, novelty=Novelty(HashingEmbedder())))
    ing.learn_events(Seq("e1").bash(f"login --password-file x # {leak}", f"{leak} rejected", error=True)
                     .bash(f"login --password-file x # {leak}", f"{leak} rejected", error=True).end())
    assert leak in _every_stored_text(db)

    class _P:
        pass
    project = _P()
    project.db = db  # type: ignore[attr-defined]
    erase_text(project, [leak], actor="user")
    assert leak not in _every_stored_text(db)
    # a quoted it and is gone; b only quoted it in its history, which is scrubbed, b itself stays
    assert list(svc.get_many([a, b])) == [b]
    db.close()
    assert leak.encode() not in _file_bytes(db.path)


def test_redact_first_then_cut() -> None:
    from desktop.memory.observer.signals import error_core, excerpt

    command = ("cd app && make build && ./deploy --env prod --verbose --region eu-west-1; "
               f"SOME_PASSWORD={DB_PASSWORD} ./run")
    cut = len(command) - len(DB_PASSWORD) + 7  # a cut through the password
    assert DB_PASSWORD[:7] not in excerpt(command, cut)
    assert DB_PASSWORD[:7] not in error_core(f"Error: failed {command}" + " x" * 200)


def test_doctor_redact_cleans_a_database_written_before_the_boundary(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """An old database (raw secrets in side tables, written without the guard) is cleaned in place."""
    from desktop.cli.main import main as cli_main
    from desktop.memory.store.connection import open_connection

    proj = tmp_path / "proj"
    proj.mkdir()
    base = ["--project", str(proj), "--data-dir", str(tmp_path / "data")]
    assert cli_main(["add", "first memory", *base]) == 0
    assert cli_main(["doctor", "--json", *base]) == 0
    db_path = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["database"]
    conn = open_connection(db_path)  # the raw way an older Engram wrote
    conn.execute("INSERT INTO observer_search_patterns(pattern, project_id, last_seen_at) VALUES (?, 'p', 'x')",
                 (f"grep {AWS}",))
    conn.execute("UPDATE memories SET metadata = ? WHERE id = 1", (json.dumps({"signal_key": CONN}),))
    conn.close()
    assert cli_main(["doctor", "--redact", *base]) == 0
    assert "Redacted secrets in 2" in capsys.readouterr().out
    data = Path(db_path).read_bytes() + (Path(f"{db_path}-wal").read_bytes() if Path(f"{db_path}-wal").exists()
                                         else b"")
    assert AWS.encode() not in data and DB_PASSWORD.encode() not in data


def test_hard_delete_takes_the_observer_rows_the_memory_was_learned_from(db: Database) -> None:
    ing = Ingestor(db, Promoter(db, novelty=Novelty(HashingEmbedder())))
    for i in range(3):
        # (three sessions at different times: identical copies would be one session resumed, issue 26)
        s = Seq(f"h{i}", t0=1_700_000_000.0 + 1000 * i)
        ing.learn_events(s.bash("make deploy", "error: could not reach the billing gateway", error=True)
                         .bash("make deploy", "error: could not reach the billing gateway", error=True)
                         .edit("deploy.mk").bash("make deploy", "ok").end("success"))
    conn = db.reads.conn()
    # Since issue 13 a bare error retry is no memory (it stays in the observer's tables for
    # prefetch); the build recipe these sessions taught is, with its count row and evidence.
    rows = conn.execute("SELECT id, json_extract(metadata, '$.signal_key') FROM memories "
                        "WHERE json_extract(metadata, '$.signal_key') LIKE 'recipe:%'").fetchall()
    assert rows, "a recipe was learned"
    mid, key = rows[0]
    assert conn.execute("SELECT count(*) FROM observer_signal_counts WHERE signal_key = ?", (key,)).fetchall()[0][0]
    MemoryService(db).hard_delete(mid, actor="user").result(10)
    assert not conn.execute("SELECT count(*) FROM observer_signal_counts WHERE signal_key = ?", (key,)).fetchall()[0][0]
    assert not conn.execute("SELECT count(*) FROM memory_evidence WHERE memory_id = ?", (mid,)).fetchall()[0][0]


def test_export_redacts_every_field_of_an_old_row(tmp_path: Path) -> None:
    """A row written before the boundary (raw secret in related_files) leaves redacted."""
    import io

    from desktop.memory.lifecycle.portable import export_json
    from desktop.memory.store.connection import open_connection

    path = tmp_path / "old.db"
    with Database(path) as db:
        MemoryService(db).add("Deploy notes").result(10)
    conn = open_connection(path)
    conn.execute("UPDATE memories SET related_files = ?, code_anchors = ?", (json.dumps([CONN]),
                                                                             json.dumps({"a.py": AWS})))
    conn.close()
    with Database(path) as db:
        out = io.StringIO()
        export_json(MemoryService(db), out)
    assert DB_PASSWORD not in out.getvalue() and AWS not in out.getvalue()


def test_no_write_path_goes_around_the_guarded_connection() -> None:
    """Only the boundary itself, the connection factory and the leak scrubber touch the raw connection."""
    root = Path(__file__).resolve().parents[2] / "desktop"
    # diagnostics.py: a throw-away :memory: connection that only checks vec0 loads (stores nothing).
    allowed = {"memory/privacy/boundary.py", "memory/store/connection.py", "memory/lifecycle/leak.py",
               "memory/diagnostics.py"}
    offenders = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        if rel not in allowed and (".conn.raw" in text or "apsw.Connection(" in text):
            offenders.append(rel)
    assert offenders == []
