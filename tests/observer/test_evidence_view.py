"""A learned memory shows what it was learned from: the core, `engram get`, and the browser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from obs_helpers import Seq

from desktop.cli.main import main as cli_main
from desktop.memory.observer.ingest import Ingestor
from desktop.memory.observer.novelty import HashingEmbedder, Novelty
from desktop.memory.observer.promotion import Promoter
from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database

RULE = "Never run the migrations against `db/prod.sqlite`, copy it to `db/dev.sqlite` first."


def _learn(db: Database, *sessions: str) -> int:
    ing = Ingestor(db, Promoter(db, novelty=Novelty(HashingEmbedder())))
    for sid in sessions:
        ing.learn_events(Seq(sid).read("db/prod.sqlite").user(RULE).end())
    (mid,) = [r[0] for r in db.reads.conn().execute("SELECT id FROM memories WHERE deprecated = 0")]
    return int(mid)


def test_evidence_lists_each_session_with_its_excerpt_and_linked_events(db: Database) -> None:
    mid = _learn(db, "s-one", "s-two")
    evidence = MemoryService(db).evidence(mid)
    assert [e.session_id for e in evidence] == ["s-one", "s-two"]
    for item in evidence:
        assert item.signal == "user_rule" and item.agent == "claude-code" and item.events >= 1
        assert any("db/prod.sqlite" in x for x in item.excerpts)


def test_memory_without_links_has_no_evidence(db: Database) -> None:
    mid = MemoryService(db).add("Deploys go through `make release`.").result().id
    assert MemoryService(db).evidence(mid) == []


def test_engram_get_prints_the_evidence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project, data = tmp_path / "proj", tmp_path / "data"
    project.mkdir()
    args = ["--project", str(project), "--data-dir", str(data)]
    from desktop.composition import Engram
    from desktop.settings import Settings

    services = Engram(Settings.load(data)).open_project(project, remember=False)  # the CLI's own root
    try:
        mid = _learn(services.db, "s-cli")
    finally:
        services.close()
    assert cli_main(["get", *args, "--json", str(mid)]) == 0
    record = json.loads(capsys.readouterr().out)
    assert [e["session_id"] for e in record["evidence"]] == ["s-cli"]
    assert record["evidence"][0]["signal"] == "user_rule" and record["evidence"][0]["events"] >= 1
    # Without --json the same command reads as a page: what, status, evidence, history.
    assert cli_main(["get", *args, str(mid)]) == 0
    page = capsys.readouterr().out
    assert page.startswith(f"#{mid} preference · active") and "db/prod.sqlite" in page
    assert "evidence (1 session(s)):" in page and "s-cli · claude-code · user_rule" in page
    assert "history:" in page and "add by observer" in page
