"""Failures mid-sync: the server stops and comes back, a client is SIGKILLed mid-push.

After each, every change is on the server exactly once and reaches the other machine.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.team import service as team
from desktop.memory.team.engine import TeamSync, queued_count
from tests.support.postgres import PostgresServer
from tests.team.helpers import count_all, make_pair, server_rows, sync

REPO = Path(__file__).resolve().parents[2]


def _lessons(n: int, tag: str) -> list[NewMemory]:
    return [NewMemory(content=f"{tag} lesson {i}: module m{i % 37} needs flag f{i} set before start",
                      type="gotcha") for i in range(n)]


def _wait(cond: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _server_count(url: str) -> int:
    return int(server_rows(url, "SELECT count(*) FROM engram.memories")[0][0])


def _slow_pushes(monkeypatch: Any) -> None:
    """Each batch waits a little after the server committed it: a fast machine is still caught mid-push."""
    import desktop.memory.team.engine as engine_mod

    real = engine_mod.push_batch

    def slow(*args: Any, **kwargs: Any) -> Any:
        acks = real(*args, **kwargs)
        time.sleep(0.03)
        return acks
    monkeypatch.setattr(engine_mod, "push_batch", slow)


def test_server_stopped_mid_sync_and_restarted_loses_and_duplicates_nothing(
        make_client: Any, admin_url: str, pg: PostgresServer, monkeypatch: Any) -> None:
    _slow_pushes(monkeypatch)
    a, b, _ = make_pair(make_client, admin_url)
    n = 400
    a.memories.add_many(_lessons(n, "outage")).result()
    engine = team.engine_for(a.db, interval=0.1, batch=25).start()
    try:
        _wait(lambda: _server_count(admin_url) > 0, 30, "the first pushed batch")
        pg.stop("immediate")  # a crash, not a clean shutdown
        assert queued_count(a.db.reads.conn()) > 0  # caught mid-push
        _wait(lambda: engine.last_error is not None, 30, "the engine to notice")
        assert team.team_status(a.db, engine).error_code == "team_server_unreachable"
        a.memories.add("Written while the server was down", type="gotcha").result()  # offline work queues
        pg.start()
        _wait(lambda: queued_count(a.db.reads.conn()) == 0 and engine.last_error is None, 60, "the queue to drain")
    finally:
        engine.close()
        if not pg.running():
            pg.start()
    assert _server_count(admin_url) == n + 1
    assert server_rows(admin_url, "SELECT count(DISTINCT fingerprint) FROM engram.memories")[0][0] == n + 1
    sync(b)
    assert count_all(b) == n + 1


CHILD = """
import sys, time
sys.path.insert(0, sys.argv[1])
from desktop.memory.store.database import Database
from desktop.memory.team.engine import TeamSync
import desktop.memory.team.engine as engine_mod
real = engine_mod.push_batch
def slow(*args, **kwargs):
    acks = real(*args, **kwargs)
    time.sleep(0.03)  # committed on the server, not yet recorded here: where a kill hurts most
    return acks
engine_mod.push_batch = slow
db = Database(sys.argv[2]).open()
engine = TeamSync(db, lambda: sys.argv[3], batch=20)
print("ready", flush=True)
engine.sync_once()
print("done", flush=True)
time.sleep(60)
"""


def test_client_killed_mid_push_loses_and_duplicates_nothing(make_client: Any, admin_url: str) -> None:
    a, b, _result = make_pair(make_client, admin_url)
    n = 400
    a.memories.add_many(_lessons(n, "kill")).result()
    path = a.db.path
    url = team.team_url(a.db)
    a.db.close()
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(REPO), str(path), url],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        _wait(lambda: _server_count(admin_url) >= 40, 60, "the child to push some batches")
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
        if child.stdout is not None:
            child.stdout.close()
    pushed_before = _server_count(admin_url)
    assert 0 < pushed_before < n  # killed mid-push

    from desktop.memory.store.database import Database
    db = Database(path).open()  # the same machine starts again
    try:
        engine = TeamSync(db, lambda: url, batch=200)
        engine.sync_once()
        assert queued_count(db.reads.conn()) == 0
        links = db.reads.conn().execute("SELECT count(*), count(DISTINCT gid) FROM team_links").fetchall()[0]
        assert tuple(links) == (n, n)
        engine.close()
    finally:
        db.close()
    assert _server_count(admin_url) == n
    assert server_rows(admin_url, "SELECT count(DISTINCT fingerprint) FROM engram.memories")[0][0] == n
    sync(b)
    assert count_all(b) == n
