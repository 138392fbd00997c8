"""Fixtures of the team tests: one real PostgreSQL server per session, a database per test,
two clients (each its own SQLite project database) and an in-memory keyring."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database
from tests.support.keyrings import memory_keyring
from tests.support.postgres import PostgresServer, pg_bin_dir

_counter = itertools.count(1)


@pytest.fixture(scope="session")
def pg() -> Iterator[PostgresServer]:
    """A real PostgreSQL 15+ for the whole session (skipped only where none is installed)."""
    if pg_bin_dir() is None:
        pytest.skip("PostgreSQL is not installed (scripts/bootstrap.sh installs it)")
    server = PostgresServer().start()
    yield server
    server.cleanup()


@pytest.fixture
def admin_url(pg: PostgresServer) -> str:
    """Superuser URL of a fresh database (tests never share server state)."""
    return pg.create_database(f"engram_test_{next(_counter)}")


@pytest.fixture(autouse=True)
def _keyring() -> Iterator[None]:
    with memory_keyring():
        yield


@dataclass
class Client:
    """One machine: its own project database and memory service."""

    name: str
    db: Database
    memories: MemoryService


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[object]:
    """Factory of clients; all are closed at the end."""
    made: list[Client] = []

    def make(name: str) -> Client:
        (tmp_path / name).mkdir()
        db = Database(tmp_path / name / "engram.db").open()
        client = Client(name, db, MemoryService(db))
        made.append(client)
        return client

    yield make
    for c in made:
        c.db.close()
