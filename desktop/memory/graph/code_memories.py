"""Code chunks stored as retrievable CODE memories (type ``code``, source ``code_index``).

Chunks are derived data: re-chunking a changed file hard-deletes its old chunks and
adds the new ones in the same transaction, so search never returns code that is no
longer on disk. Text passes through the secret redactor like any agent-derived text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar

from desktop.memory.graph.model import CodeChunk
from desktop.memory.privacy.secrets import redact
from desktop.memory.store.rows import fingerprint
from desktop.memory.store.writer import Tx, WriteOp
from desktop.memory.types import MAX_CONTENT_CHARS


def delete_code_memories(tx: Tx, path: str) -> list[int]:
    """Hard-delete the code-index chunks of one file (derived data: no audit trail to scrub)."""
    ids = [r[0] for r in tx.execute(
        "SELECT m.id FROM memory_files f JOIN memories m ON m.id = f.memory_id WHERE f.file_path=?"
        " AND m.source='code_index' AND m.type='code'", (path,))]
    if ids:
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            tx.execute(f"DELETE FROM memories WHERE id IN ({','.join('?' * len(part))})", part)
    return ids


def insert_code_memories(tx: Tx, path: str, module: str | None, chunks: Sequence[CodeChunk]) -> list[int]:
    """Store chunks as CODE memories. The fingerprint covers file and line range, because the
    same code in two files (or twice in one) is two retrievable places, not a duplicate fact."""
    added: list[int] = []
    for c in chunks:
        content = redact(c.text)[0]
        meta: dict[str, Any] = {"language": c.language, "symbol": c.symbol}
        if len(content) > MAX_CONTENT_CHARS:
            content = content[:MAX_CONTENT_CHARS]
            meta["truncated"] = True
        if not content.strip():
            continue
        fp = fingerprint(f"code {path} {c.start_line} {c.end_line} {c.chunk_type} {content}")
        tx.execute(
            "INSERT INTO memories(type, content, confidence, tags, related_files, related_modules, scope,"
            " source, created_at, updated_at, last_accessed_at, project_id, chunk_type, chunk_start_line,"
            " chunk_end_line, context_prefix, fingerprint, metadata) VALUES"
            " ('code',?,0.9,'[]',?,?,'global','code_index',?,?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT DO NOTHING",
            (content, json.dumps([path]), json.dumps([module] if module else []), tx.now, tx.now, tx.now,
             tx.project_id, c.chunk_type, c.start_line, c.end_line, c.context_prefix, fp, json.dumps(meta)))
        if tx.conn.changes():
            added.append(tx.conn.last_insert_rowid())
    return added


class StoreChunks(WriteOp[tuple[int, int]]):
    """Replace the code memories of some files: {path: (module, chunks)}."""

    name: ClassVar[str] = "graph_store_chunks"

    def __init__(self, files: dict[str, tuple[str | None, list[CodeChunk]]]) -> None:
        self.files = files

    def apply(self, tx: Tx) -> tuple[int, int]:
        """Delete each file's old chunks, insert the new ones; returns (added, deleted)."""
        added: list[int] = []
        deleted: list[int] = []
        if self.files:
            tx.audit("code_index", None, actor="indexer", detail={"chunked_files": len(self.files)})
        for path, (module, chunks) in self.files.items():
            deleted += delete_code_memories(tx, path)
            added += insert_code_memories(tx, path, module, chunks)
        if added:
            tx.changed("memory", "added", added)
        if deleted:
            tx.changed("memory", "deleted", deleted)
        return len(added), len(deleted)
