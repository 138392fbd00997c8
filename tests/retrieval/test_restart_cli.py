"""Identical results across a restart; the search service in the composition root; the CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from desktop.cli.main import main as cli
from desktop.composition import Engram
from desktop.memory.store.memory_ops import NewMemory
from desktop.settings import Settings

TEXTS = ["Use argon2id for password hashing", "The API rate-limits at 50 requests per second",
         "verifyJwt must run before reading claims", "Nightly export writes to /var/exports",
         "Flaky test: test_upload times out on CI", "Prefer dataclasses over dicts for settings"]


def _open(tmp_path: Path, provider):
    # A fixed clock: recency is part of the score, and this test is about storage, not time.
    app = Engram(Settings(data_dir=tmp_path / "data"), clock=lambda: datetime(2026, 3, 1, 12, tzinfo=UTC))
    project = app.open_project(tmp_path / "proj", remember=False)
    search = project.build_search(provider=provider)
    return project, search


def test_results_identical_across_restart(tmp_path, minilm):
    (tmp_path / "proj").mkdir()
    project, search = _open(tmp_path, minilm)
    project.memories.add_many([NewMemory(content=t) for t in TEXTS]).result()
    assert search.indexer.wait_idle(60)
    queries = ["how are passwords stored", "jwt claims", "why does CI fail", "export location"]
    before = [[(r.memory.id, r.score) for r in search.search(q).results] for q in queries]
    project.close()
    project, search = _open(tmp_path, minilm)
    assert search.indexer.wait_idle(60)
    after = [[(r.memory.id, r.score) for r in search.search(q).results] for q in queries]
    assert before == after and all(before)
    # Only injected results are recorded as shown (history); outside a session whose injection
    # ledger holds them, a use moves no count (issue 27: uses count only for what a session was shown).
    resp = search.search("jwt claims", inject=False)
    resp = search.search("jwt claims", inject=True, pack_tokens=200)
    project.close()
    project, search = _open(tmp_path, minilm)
    used = {m.id for m in project.memories.list(limit=50)
            if any(h["action"] == "use" for h in project.memories.history(m.id))}
    assert used == set(resp.packed.memory_ids)
    assert not any(m.access_count for m in project.memories.list(limit=50))
    project.close()


def test_cli_single_and_batch(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ENGRAM_DATA_DIR", str(tmp_path / "data"))
    proj = tmp_path / "proj"
    proj.mkdir()
    for text in TEXTS:
        assert cli(["add", "--project", str(proj), text]) == 0
    capsys.readouterr()
    assert cli(["search", "--project", str(proj), "--json", "--explain", "--limit", "2", "verify jwt"]) == 0
    out = json.loads(capsys.readouterr().out)
    top = out["results"][0]
    assert "verifyJwt" in top["content"] and {"id", "external_id", "type", "score", "explanation"} <= set(top)
    assert "dense" in top["explanation"]["paths"]  # added by `engram add`, embedded by `engram search`
    batch = tmp_path / "q.jsonl"
    batch.write_text("\n".join(json.dumps(q) for q in [
        {"query": "password hashing", "limit": 1},
        {"query": "rate limit", "limit": 3, "types": ["decision"]},
        {"query": "export", "limit": 2}]) + "\n")
    assert cli(["search", "--project", str(proj), "--batch", str(batch)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["query"] for x in lines] == ["password hashing", "rate limit", "export"]
    assert "argon2id" in lines[0]["results"][0]["content"] and len(lines[0]["results"]) == 1
    assert lines[1]["results"] == []
    batch.write_text('{"limit": 3}\n')
    assert cli(["search", "--project", str(proj), "--batch", str(batch)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "query" in err
