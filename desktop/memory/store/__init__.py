"""SQLite storage engine: apsw + sqlite-vec + FTS5, one writer thread, per-thread readers."""

from desktop.memory.store.changes import Change, ChangeSet
from desktop.memory.store.database import Database
from desktop.memory.store.writer import FnOp, Tx, WriteOp, Writer

__all__ = ["Change", "ChangeSet", "Database", "FnOp", "Tx", "WriteOp", "Writer"]
