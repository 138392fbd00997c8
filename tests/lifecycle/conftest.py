"""Fixtures of the lifecycle tests: a database with a clock the test moves, a git repository."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database
from tests.support.git import git


class FakeClock:
    """A clock the test advances by hand."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2025, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> datetime:
        self.now += timedelta(**kw)
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def cdb(tmp_path: Path, clock: FakeClock) -> Iterator[Database]:
    """A fresh database whose writer uses the fake clock."""
    database = Database(tmp_path / "life.db", clock=clock).open()
    yield database
    database.close()


@pytest.fixture
def svc(cdb: Database) -> MemoryService:
    return MemoryService(cdb)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty git repository with an identity configured."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "test@example.com")
    git(root, "config", "user.name", "Test")
    git(root, "config", "commit.gpgsign", "false")
    return root
