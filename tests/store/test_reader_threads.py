"""Read connections work from Python threads and from Qt-created threads alike."""

from __future__ import annotations

import threading

from PySide6.QtCore import QThread

from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database


def test_reads_from_qthreads_and_python_threads(db: Database) -> None:
    svc = MemoryService(db)
    svc.add("visible to every reader").result()
    counts: list[int] = []
    errors: list[BaseException] = []

    class Reader(QThread):
        def run(self) -> None:
            try:
                for _ in range(100):
                    counts.append(svc.count())
            except BaseException as exc:
                errors.append(exc)
            finally:
                db.reads.release()

    qthreads = [Reader() for _ in range(3)]
    pythreads = [threading.Thread(target=lambda: counts.extend(svc.count() for _ in range(100))) for _ in range(3)]
    for t in qthreads:
        t.start()
    for t in pythreads:
        t.start()
    for t in qthreads:
        assert t.wait(30_000)
    for t in pythreads:
        t.join(30)
    assert not errors
    assert counts == [1] * 600
    assert not db.reads._foreign  # every Qt thread handed its connection back
