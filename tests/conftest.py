"""Suite-wide fixtures: offscreen Qt, a throw-away data folder, an in-memory keyring."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = (REPO_ROOT / ".." / "shared" / "data").resolve()


@pytest.fixture(autouse=True)
def _isolated_data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test ever touches the real user-data folder."""
    data = tmp_path_factory.mktemp("engram-data")
    monkeypatch.setenv("ENGRAM_DATA_DIR", str(data))
    return data


@pytest.fixture(autouse=True)
def _hook_process_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a hook process of its own: a warm service started in an earlier test of
    this process (``HookService`` calls ``live.keep_observers_warm``) keeps its observers in a module
    global, which would send a later test's tool calls to that service's observers instead of the
    session's journal (seen: ``test_handlers`` after the security tests, in one process)."""
    from desktop.agents.hooks import live

    monkeypatch.setattr(live, "_warm", None)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:  # noqa: F821
    """A fresh project database with its writer running."""
    from desktop.memory.store.database import Database

    database = Database(tmp_path / "engram.db").open()
    yield database
    database.close()


@pytest.fixture
def memories(db):  # type: ignore[no-untyped-def]
    """MemoryService over the fresh database."""
    from desktop.memory.service import MemoryService

    return MemoryService(db)
