"""MemoryService: the API every client (GUI, CLI, MCP, agents) uses for memories.

Writes return futures from the writer thread; reads run on the caller's own
read connection. Callers on the GUI thread must not call the read methods
directly for large queries: the UI runs them in its read pool.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from desktop.memory.store.connection import guarded, rows_as_dicts
from desktop.memory.store.database import Database
from desktop.memory.store.errors import NotFoundError
from desktop.memory.store.live import LIVE_SQL
from desktop.memory.store.rows import ORDERS, MemoryQuery, row_to_memory
from desktop.memory.types import Memory

# The write operations and the evidence view are imported where used: a hook process opens the
# project on every tool call (issue 25), reads, and seldom writes a memory.
if TYPE_CHECKING:
    from desktop.memory.evidence_view import SessionContribution
    from desktop.memory.store.memory_ops import AddResult, NewMemory


@dataclass(frozen=True)
class MemoryCounts:
    """What the app, the CLI and the doctor count (one definition: a code chunk is not a memory)."""

    memories: int      # live memories: taught, imported, learned (forgotten ones excluded)
    needs_review: int  # of those, waiting for a person (needs review or still a candidate)
    code_chunks: int   # the code index: searched when asked, never counted as memories


class MemoryService:
    """Add, edit, pin, deprecate, forget, hard-delete, get, list and count memories."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # -- writes ----------------------------------------------------------------
    def add(self, content: str | NewMemory, *, actor: str = "user", reason: str | None = None,
            **fields: Any) -> Future[AddResult]:
        """Add one memory (or reinforce its duplicate). Raises ValidationError before queueing."""
        from desktop.memory.store.memory_ops import AddMemories, NewMemory

        item = content if isinstance(content, NewMemory) else NewMemory(content=content, **fields)
        op = AddMemories([item], actor=actor, reason=reason)
        outer: Future[AddResult] = Future()

        def done(f: Future[list[AddResult]]) -> None:
            exc = f.exception()
            if exc is not None:
                outer.set_exception(exc)
            else:
                outer.set_result(f.result()[0])
        self.db.writer.submit(op).add_done_callback(done)
        return outer

    def add_many(self, items: list[NewMemory], *, actor: str = "user",
                 reason: str | None = None) -> Future[list[AddResult]]:
        """Add a batch in one transaction."""
        from desktop.memory.store.memory_ops import AddMemories

        return self.db.writer.submit(AddMemories(items, actor=actor, reason=reason))

    def edit(self, memory_id: int, changes: dict[str, Any], *, actor: str = "user",
             reason: str | None = None) -> Future[int]:
        """Change fields; the old values are kept in the audit log as edit history."""
        from desktop.memory.store.memory_ops import EditMemory

        return self.db.writer.submit(EditMemory(memory_id, changes, actor=actor, reason=reason))

    def pin(self, memory_id: int, pinned: bool = True, *, actor: str = "user") -> Future[int]:
        """Pin (always inject, never decay) or unpin."""
        from desktop.memory.store.memory_ops import SetFlag

        return self.db.writer.submit(SetFlag(memory_id, "pin" if pinned else "unpin", actor=actor))

    def verify(self, memory_id: int, *, actor: str = "user") -> Future[int]:
        """Mark as confirmed by the user (clears review and candidate flags)."""
        from desktop.memory.store.memory_ops import SetFlag

        return self.db.writer.submit(SetFlag(memory_id, "verify", actor=actor))

    def deprecate(self, memory_id: int, *, reason: str | None = None, actor: str = "user") -> Future[int]:
        """Retire a memory that is no longer right (kept for history)."""
        from desktop.memory.store.memory_ops import SetFlag

        return self.db.writer.submit(SetFlag(memory_id, "deprecate", actor=actor, reason=reason))

    def forget(self, memory_id: int, *, reason: str | None = None, actor: str = "user") -> Future[int]:
        """Soft-forget: never injected again; hard-deleted later by pruning."""
        from desktop.memory.store.memory_ops import SetFlag

        return self.db.writer.submit(SetFlag(memory_id, "forget", actor=actor, reason=reason))

    def restore(self, memory_id: int, *, actor: str = "user") -> Future[int]:
        """Undo forget/deprecate."""
        from desktop.memory.store.memory_ops import SetFlag

        return self.db.writer.submit(SetFlag(memory_id, "restore", actor=actor))

    def hard_delete(self, memory_ids: int | Iterable[int], *, reason: str | None = None,
                    actor: str = "user") -> Future[int]:
        """Delete for good (row, FTS, vectors, audit text)."""
        from desktop.memory.store.memory_ops import HardDelete

        ids = [memory_ids] if isinstance(memory_ids, int) else list(memory_ids)
        return self.db.writer.submit(HardDelete(ids, actor=actor, reason=reason))

    def record_access(self, memory_ids: Iterable[int], *, source: str | None = None,
                      session_id: str | None = None) -> Future[Any]:
        """Memories were shown to an agent: the same feedback op as every other door (history, reinforcement)."""
        from desktop.memory.lifecycle.feedback import record_feedback

        return record_feedback(self.db, memory_ids, source=source, session_id=session_id)

    # -- reads -----------------------------------------------------------------
    def _conn(self) -> Any:
        return self.db.reads.conn()

    def get(self, memory_id: int) -> Memory:
        """One memory, deprecated or not. Raises NotFoundError."""
        def run() -> list[dict[str, Any]]:
            return rows_as_dicts(self._conn().execute("SELECT * FROM memories WHERE id=?", (memory_id,)))
        rows = guarded(run, str(self.db.path))
        if not rows:
            raise NotFoundError(f"Memory #{memory_id} does not exist.")
        return row_to_memory(rows[0])

    def get_many(self, memory_ids: Iterable[int]) -> dict[int, Memory]:
        """Memories by id (missing ids are absent from the result)."""
        ids = list(memory_ids)
        out: dict[int, Memory] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            cur = self._conn().execute(
                f"SELECT * FROM memories WHERE id IN ({','.join('?' * len(chunk))})", chunk)
            for row in rows_as_dicts(cur):
                out[row["id"]] = row_to_memory(row)
        return out

    # Below, `list` is this method: signatures in the class body spell the builtin `builtins.list`.
    def list(self, query: MemoryQuery | None = None, *, limit: int = 50, offset: int = 0,
             order: str = "recent") -> list[Memory]:
        """Memories matching `query`, newest first by default."""
        where, params = (query or MemoryQuery()).where()
        sql = (f"SELECT * FROM memories WHERE {where} ORDER BY {ORDERS.get(order, ORDERS['recent'])} "
               f"LIMIT ? OFFSET ?")
        rows = guarded(lambda: rows_as_dicts(self._conn().execute(sql, [*params, limit, offset])),
                       str(self.db.path))
        return [row_to_memory(r) for r in rows]

    def list_ids(self, query: MemoryQuery | None = None, *, order: str = "recent",
                 limit: int | None = None) -> builtins.list[int]:
        """Only the ids, in order (cheap even at 100,000 rows; the UI pages rows by id)."""
        where, params = (query or MemoryQuery()).where()
        sql = f"SELECT id FROM memories WHERE {where} ORDER BY {ORDERS.get(order, ORDERS['recent'])}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [r[0] for r in guarded(lambda: self._conn().execute(sql, params).fetchall(), str(self.db.path))]

    def count(self, query: MemoryQuery | None = None) -> int:
        """How many memories match."""
        where, params = (query or MemoryQuery()).where()
        rows = guarded(lambda: self._conn().execute(
            f"SELECT count(*) FROM memories WHERE {where}", params).fetchall(), str(self.db.path))
        return int(rows[0][0])

    def counts(self) -> MemoryCounts:
        """The numbers a person is shown everywhere: memories, those waiting for review, code-index chunks."""
        def run() -> list[Any]:
            return self._conn().execute(
                f"SELECT coalesce(sum(type <> 'code'), 0), coalesce(sum(type <> 'code' AND (needs_review = 1 "
                f"OR candidate = 1)), 0), coalesce(sum(type = 'code'), 0) FROM memories WHERE {LIVE_SQL}").fetchall()
        memories, review, code = guarded(run, str(self.db.path))[0]
        return MemoryCounts(int(memories), int(review), int(code))

    def history(self, memory_id: int) -> builtins.list[dict[str, Any]]:
        """The audit entries of one memory, oldest first (its edit history)."""
        cur = self._conn().execute(
            "SELECT id, at, actor, action, reason, detail FROM audit_log WHERE memory_id=? ORDER BY id",
            (memory_id,))
        out = rows_as_dicts(cur)
        for row in out:
            row["detail"] = json.loads(row["detail"] or "{}")
        return out

    def evidence(self, memory_id: int) -> builtins.list[SessionContribution]:
        """What a memory was learned from, per session (excerpts and linked transcript events)."""
        from desktop.memory.evidence_view import evidence_of

        rows = self._conn().execute("SELECT provenance FROM memories WHERE id=?", (memory_id,)).fetchall()
        if not rows:
            raise NotFoundError(f"Memory #{memory_id} does not exist.")
        return evidence_of(self._conn(), memory_id, json.loads(rows[0][0] or "[]"))

    def audit_log(self, *, limit: int = 200, offset: int = 0, actions: builtins.list[str] | None = None
                  ) -> builtins.list[dict[str, Any]]:
        """Recent audit entries, newest first."""
        sql = "SELECT id, at, actor, action, memory_id, reason, detail FROM audit_log"
        params: list[Any] = []
        if actions:
            sql += f" WHERE action IN ({','.join('?' * len(actions))})"
            params.extend(actions)
        sql += " ORDER BY id DESC LIMIT ? OFFSET ?"
        out = rows_as_dicts(self._conn().execute(sql, [*params, limit, offset]))
        for row in out:
            row["detail"] = json.loads(row["detail"] or "{}")
        return out
