"""Closing a project while a watcher is mid-batch stops it between items, before the database closes."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest

from desktop.memory.lifecycle.watching import AddedMemoryWatcher
from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database
from desktop.memory.store.memory_ops import NewMemory


class SlowWatcher(AddedMemoryWatcher):
    """Reads each added memory slowly, as conflict checks do on a busy machine."""

    thread_name = "engram-slow-watcher"

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self.started = threading.Event()
        self.handled = 0

    def handle(self, ids: list[int]) -> None:
        self.started.set()
        for mid in ids:
            if self.stopping:
                return
            self.db.reads.conn().execute("SELECT content FROM memories WHERE id = ?", (mid,)).fetchall()
            self.handled += 1
            time.sleep(0.05)


def test_close_mid_batch_stops_between_items_without_an_error(tmp_path: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    db = Database(tmp_path / "w.db").open()
    watcher = SlowWatcher(db).start()
    MemoryService(db).add_many([NewMemory(content=f"memory number {i} about cart totals") for i in range(200)]
                               ).result(30)
    assert watcher.started.wait(10)
    began = time.monotonic()
    with caplog.at_level(logging.DEBUG, logger="engram.lifecycle"):
        watcher.close(drain=0.2)  # 200 x 50 ms would take 10 s: close gives up after 0.2 s
        db.close()
    assert time.monotonic() - began < 3
    assert 0 < watcher.handled < 200
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and "could not drain" not in r.message]
