"""Issue 17: code chunks are redacted in the parse workers and carry the proof (privacy.scanned).

The writer's boundary stores a ``Scanned`` text without scanning it again; everything
else it scans as before. These tests hold the proof to what it claims: a ``Scanned``
value is always what the boundary would have stored, only a process holding the key
can bring one across a pickle, and a secret in an indexed file reaches no table and no
FTS term whether the mark arrives or not.
"""

from __future__ import annotations

import json
import pickle
import string
from pathlib import Path
from typing import Any

import pytest

from desktop.memory.graph import parse_pool
from desktop.memory.graph.closure import json_list
from desktop.memory.graph.indexer import ProjectIndexer
from desktop.memory.privacy import boundary, scanned
from desktop.memory.privacy.boundary import redact_stored, redact_values
from desktop.memory.privacy.scanned import QuietParts, Scanned, scanned_cut, scanned_cuts
from desktop.memory.privacy.secrets import redact
from desktop.memory.store.database import Database
from tests.security.test_redaction_boundary import _every_stored_text, _rnd

AWS = "AKIA" + _rnd(string.ascii_uppercase + string.digits, 16)
GHP = "ghp_" + _rnd(string.ascii_letters + string.digits, 36)
DB_PASSWORD = "Pw" + _rnd(string.ascii_letters + string.digits, 14)
RAW = (AWS, GHP, DB_PASSWORD)
LEAKY = (f'AWS_ACCESS_KEY_ID = "{AWS}"\nDATABASE_URL = "postgresql://app:{DB_PASSWORD}@db.internal:5432/prod"\n\n\n'
         f'def token():\n    """Deploy token."""\n    return "{GHP}"\n')


def test_a_scanned_text_is_always_redacted() -> None:
    value = Scanned(LEAKY)
    assert type(value) is Scanned and "[REDACTED:" in value
    assert not any(raw in value for raw in RAW)
    assert type(value[:10]) is str and type(value + "x") is str  # derived text loses the mark


@pytest.mark.parametrize("text", [
    "def f():\n    return 1\n",  # nothing to find
    LEAKY,  # secrets found
    json.dumps({"password": DB_PASSWORD, "url": f"postgres://u:{DB_PASSWORD}@h/db"}),  # JSON kept valid
    "x = 1\n" * 40 + f"key = {AWS}",  # the secret lies past the cut
    "y" * 30 + f" {AWS}",  # the cut falls inside the secret
])
def test_scanned_cut_is_exactly_what_the_boundary_would_store(text: str) -> None:
    for limit in (10, 34, 40, 200, 10_000):
        value, cut = scanned_cut(text, limit)
        expected = redact(text)[0]
        assert cut == (len(expected) > limit)
        assert value == redact_stored(expected[:limit]), (text, limit)
        assert not any(raw in value for raw in RAW)


def test_many_texts_at_once_give_what_one_at_a_time_gives() -> None:
    """scanned_cuts gates the quiet texts together (most code): same values, same marks."""
    texts = ["def f():\n    return 1\n", LEAKY, "clé = 'été'\n" + AWS, "z" * 500, "a = 1\n" * 30 + GHP,
             "print('ünï')\n" * 20, f"key = {AWS}"]
    for limit in (12, 50, 1_000):
        many = scanned_cuts(texts, limit)
        assert many == [scanned_cut(t, limit) for t in texts]
        assert all(type(v) is Scanned for v, _ in many)
        assert not any(raw in v for v, _ in many for raw in RAW)


def test_closure_paths_of_quiet_ids_are_marked_and_written_as_before() -> None:
    ids = ["file:app/main.py", "sym:app/main.py:run", "ext:os", "imports", "calls"]
    loud = ["sym:cfg.py:password = hunter2hunter2", f"ext:{AWS}", 'sym:q.py:say"hi"', "sym:é.py:f"]
    quiet = QuietParts(ids + loud)
    assert all(i in quiet for i in ids) and not any(i in quiet for i in loud)
    for items in [(), tuple(ids[:3]), ("ext:os",)]:
        value = quiet.json_list(items)
        assert type(value) is Scanned and value == json_list(items) == json.dumps(list(items), separators=(",", ":"))
        assert redact_stored(value) == value
    for bad in loud:
        assert quiet.json_list((ids[0], bad)) is None  # the closure writes it unmarked: the boundary scans it


def test_only_a_process_holding_the_key_restores_the_mark() -> None:
    value = Scanned("def f():\n    return 1\n")
    assert type(pickle.loads(pickle.dumps(value))) is Scanned
    tampered = pickle.dumps(value).replace(b"return 1", b"return 2")
    assert type(pickle.loads(tampered)) is str  # a changed text is scanned again
    ours = scanned.worker_key()
    made_here = pickle.dumps(value)
    try:
        scanned.adopt_key(b"another process" * 2)  # as if read by a process with another key
        foreign = pickle.loads(made_here)
    finally:
        scanned.adopt_key(ours)
    assert type(foreign) is str and foreign == value


def test_the_boundary_scans_everything_but_scanned_text(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = boundary._triggered

    def spy(texts: list[str]) -> set[int]:
        seen.extend(texts)
        return real(texts)

    monkeypatch.setattr(boundary, "_triggered", spy)
    clean = Scanned("def clean_function_body():\n    return compute(" + "x" * 300 + ")\n")
    raw = LEAKY + "# fresh text"
    out = redact_values([clean, raw, 7])
    assert out[0] is clean and out[2] == 7
    assert clean not in seen and raw in seen
    assert not any(secret in out[1] for secret in RAW)


def _index(tmp: Path, root: Path, name: str) -> tuple[str, list[Any], int]:
    db = Database(tmp / f"{name}.sqlite").open()
    try:
        report = ProjectIndexer(db, root, chunks=True, workers=2, pool_min_files=1).run()
        conn = db.reads.conn()
        hits = [conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?",
                             (f'"{raw}"',)).fetchall()[0][0] for raw in RAW]
        redacted = conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'REDACTED'").fetchall()
        return _every_stored_text(db), [*hits, redacted[0][0]], report.pooled
    finally:
        db.close()


@pytest.mark.slow
def test_a_secret_in_an_indexed_file_reaches_no_table_with_or_without_the_mark(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    root = tmp_path / "proj"
    (root / "deploy").mkdir(parents=True)
    (root / "deploy" / "settings.py").write_text(LEAKY, encoding="utf-8")
    (root / "deploy" / "notes.md").write_text(f"# Deploy\n\nThe token is {GHP} and the key {AWS}.\n", encoding="utf-8")
    (root / "app.py").write_text("from deploy.settings import token\n\n\ndef main():\n    return token()\n",
                                 encoding="utf-8")
    for name in ("keyed", "keyless"):
        if name == "keyless":  # workers vouch with a key the parent does not hold: the writer scans it all
            monkeypatch.setattr(parse_pool, "worker_key", lambda: b"not the parent's key" * 2)
        monkeypatch.setattr(scanned, "_warned", False)
        caplog.clear()
        stored, hits, pooled = _index(tmp_path, root, name)
        assert ("scanned again" in caplog.text) == (name == "keyless")
        assert pooled == 3
        assert "[REDACTED:" in stored
        for raw in RAW:
            assert raw not in stored, (name, raw)
        assert hits[:3] == [0, 0, 0] and hits[3] > 0, name
