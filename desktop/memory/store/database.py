"""One project's database: its writer thread and its read pool."""

from __future__ import annotations

from pathlib import Path

from desktop.memory.store.reader import ReadPool
from desktop.memory.store.writer import Clock, Writer, utc_now


class Database:
    """Opens a project database for writing (one writer thread) and reading (per-thread connections)."""

    def __init__(self, path: Path | str, *, clock: Clock = utc_now, check: bool = True) -> None:
        """``check=False`` skips ``PRAGMA quick_check`` at open: it reads the whole file (~100 ms at
        10,000 memories), which a hook process run on every agent event cannot afford. A damaged
        page still fails the query that touches it, as a known error."""
        self.path = Path(path)
        self.clock = clock
        self.writer = Writer(self.path, clock=clock, check=check)
        self.reads = ReadPool(self.path)

    def open(self) -> Database:
        """Start the writer (integrity check, migrations). Raises known errors on a bad file.

        A database whose trigger index was derived by older rules (or never: one written before
        migration 0021) gets it rebuilt by a queued write, so lessons fire whichever door opened it.
        """
        from desktop.memory.triggers.index import ReindexTriggers, needs_reindex

        self.writer.start()
        if needs_reindex(self.reads.conn()):
            self.writer.submit(ReindexTriggers())
        return self

    @property
    def project_id(self) -> str:
        """The permanent id stored in the database."""
        return self.writer.project_id

    def close(self) -> None:
        """Flush queued writes and close every connection."""
        self.writer.close()
        self.reads.close()

    def __enter__(self) -> Database:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()
