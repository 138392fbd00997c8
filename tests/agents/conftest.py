"""Fixtures of the agent tests: a project with files and memories, a fake Ollama server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.composition import Engram
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.writer import FnOp
from desktop.settings import Settings
from tests.agents.fake_ollama import FakeOllama


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "core").mkdir(parents=True)
    (root / "core" / "config.py").write_text("SETTINGS = {'retries': 3}\n", encoding="utf-8")
    (root / "core" / "payments.py").write_text("def charge(amount):\n    return amount * 100\n", encoding="utf-8")
    (root / "core" / "rare.py").write_text("RARE = True\n", encoding="utf-8")
    (root / "README.md").write_text("# demo\n", encoding="utf-8")
    return root


@pytest.fixture
def project(project_dir: Path, tmp_path: Path) -> Iterator[Any]:
    app = Engram(Settings(data_dir=tmp_path / "data"))
    proj = app.open_project(project_dir, remember=False)
    yield proj
    proj.close()


def add(project: Any, content: str, **fields: Any) -> int:
    """Add a memory and wait; returns its id."""
    return project.memories.add(NewMemory(content=content, **fields)).result(10).id


def seed_sessions(project: Any, files: dict[str, int], total: int) -> None:
    """Pretend ``total`` past sessions happened and each file was read in ``files[f]`` of them."""
    def write(tx: Any) -> None:
        for i in range(total):
            tx.execute("INSERT INTO session_metrics(session_id, agent, started_at, ended_at, outcome, metrics)"
                       " VALUES (?,?,?,?,?,?)", (f"past-{i}", "claude-code", "2025-01-01T00:00:00.000Z",
                                                 "2025-01-01T01:00:00.000Z", "success", json.dumps({})))
        for path, n in files.items():
            tx.execute("INSERT INTO observer_file_nodes(file_path, project_id, access_count, last_accessed_at,"
                       " session_count, read_count) VALUES (?,?,?,?,?,?)",
                       (path, tx.project_id, n, "2025-01-01T00:00:00.000Z", n, n))
    project.db.writer.run(FnOp("seed_sessions", write))


@pytest.fixture
def fake_ollama() -> Iterator[Any]:
    servers: list[FakeOllama] = []

    def make(responder: Any) -> FakeOllama:
        srv = FakeOllama(responder).start()
        servers.append(srv)
        return srv
    yield make
    for s in servers:
        s.stop()
