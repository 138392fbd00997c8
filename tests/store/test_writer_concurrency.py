"""The one-writer discipline under load, a SIGKILL, and two processes on one database."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import apsw

from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database
from desktop.memory.store.errors import DatabaseBusyError
from desktop.memory.store.rows import MemoryQuery

REPO = Path(__file__).resolve().parents[2]


def test_eight_writer_threads_and_readers_lose_nothing(db: Database) -> None:
    svc = MemoryService(db)
    acknowledged: list[set[int]] = [set() for _ in range(8)]
    forgotten: list[set[int]] = [set() for _ in range(8)]
    errors: list[BaseException] = []
    stop_reading = threading.Event()
    reads = [0]

    def writer(n: int) -> None:
        rng = random.Random(n)
        mine: list[int] = []
        pending: list[Future] = []
        try:
            for i in range(2000):
                roll = rng.random()
                if roll < 0.7 or not mine:
                    r = svc.add(f"thread {n} memory {i} {rng.random()}", type="gotcha", source="agent_explicit",
                                tags=[f"t{n}"]).result()
                    mine.append(r.id)
                    acknowledged[n].add(r.id)
                elif roll < 0.85:
                    target = rng.choice(mine)
                    pending.append(svc.edit(target, {"confidence": round(rng.random(), 3)}, actor="cli"))
                elif roll < 0.95:
                    pending.append(svc.pin(rng.choice(mine)))
                else:
                    target = mine.pop(rng.randrange(len(mine)))
                    svc.forget(target).result()
                    forgotten[n].add(target)
            for f in pending:
                f.result()
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    def reader() -> None:
        try:
            while not stop_reading.is_set():
                svc.count()
                svc.list(MemoryQuery(types=["gotcha"]), limit=20)
                reads[0] += 1
        except BaseException as exc:
            errors.append(exc)

    readers = [threading.Thread(target=reader) for _ in range(3)]
    writers = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join()
    stop_reading.set()
    for t in readers:
        t.join()

    assert not errors, errors[:3]
    assert not any(isinstance(e, (DatabaseBusyError, apsw.BusyError)) for e in errors)
    assert reads[0] > 0
    live = set(svc.list_ids())
    for n in range(8):
        assert acknowledged[n] - forgotten[n] <= live
        assert not (forgotten[n] & live)
    assert svc.count(MemoryQuery(statuses=["deprecated"])) == sum(len(f) for f in forgotten)


CHILD = r"""
import sys
sys.path.insert(0, sys.argv[2])
from desktop.memory.store.database import Database
from desktop.memory.service import MemoryService
db = Database(sys.argv[1]).open()
svc = MemoryService(db)
i = 0
while True:
    r = svc.add(f"crash test memory {i}", type="note", source="agent_explicit").result()
    sys.stdout.write(f"{r.id}\n")
    sys.stdout.flush()
    i += 1
"""


def test_sigkill_mid_write_keeps_every_acknowledged_write(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(path), str(REPO)],
                            stdout=subprocess.PIPE, text=True)
    acked: list[int] = []
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while len(acked) < 400 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        acked.append(int(line))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    assert len(acked) >= 400
    with Database(path) as database:
        conn = database.reads.conn()
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        present = {r[0] for r in conn.execute("SELECT id FROM memories")}
    assert set(acked) <= present


TWIN = r"""
import sys
sys.path.insert(0, sys.argv[2])
from desktop.memory.store.database import Database
from desktop.memory.service import MemoryService
db = Database(sys.argv[1]).open()
svc = MemoryService(db)
tag = sys.argv[3]
futures = [svc.add(f"process {tag} memory {i}", type="note", source="agent_explicit") for i in range(1500)]
print(len({f.result().id for f in futures}))
db.close()
"""


def test_two_processes_on_one_project_do_not_corrupt_or_lose_writes(tmp_path: Path) -> None:
    path = tmp_path / "twins.db"
    with Database(path):
        pass
    procs = [subprocess.Popen([sys.executable, "-c", TWIN, str(path), str(REPO), tag],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for tag in "AB"]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert out.strip() == "1500"
    with Database(path) as database:
        conn = database.reads.conn()
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("SELECT count(*) FROM memories").fetchall()[0][0] == 3000
