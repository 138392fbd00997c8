"""Code chunks stored as retrievable CODE memories (type ``code``, source ``code_index``).

Chunks are derived data: re-chunking a changed file hard-deletes its old chunks and
adds the new ones in the same transaction, so search never returns code that is no
longer on disk. Text passes through the secret redactor like any agent-derived text: here,
in the parse workers, as :class:`~desktop.memory.privacy.scanned.Scanned` text the writer's
boundary then stores without scanning it a second time.

The expensive per-chunk Python work (redaction, truncation, fingerprint, metadata
JSON) is done by :func:`prepare_chunks` in the indexing thread, so the writer only
runs one ``executemany`` per file. A chunk that reaches the writer unprepared (a plain
``CodeChunk``) is prepared there, so redaction is never skipped.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from desktop.memory.graph.model import CodeChunk, pickle_by_fields
from desktop.memory.privacy.scanned import scanned_cuts
from desktop.memory.store.connection import delete_memories, fts_in_bulk, fts_text_of
from desktop.memory.store.writer import Tx, WriteOp
from desktop.memory.types import MAX_CONTENT_CHARS

_INSERT = (
    "INSERT INTO memories(type, content, confidence, tags, related_files, related_modules, scope,"
    " source, created_at, updated_at, last_accessed_at, project_id, chunk_type, chunk_start_line,"
    " chunk_end_line, context_prefix, fingerprint, metadata) VALUES"
    " ('code',?,0.9,'[]',?,?,'global','code_index',?,?,?,?,?,?,?,?,?,?)"
    " ON CONFLICT DO NOTHING RETURNING id"
)


@pickle_by_fields  # crosses from the parse pool's workers by the ten thousand
@dataclass(frozen=True, slots=True)
class PreparedChunk:
    """A chunk ready for INSERT: redacted (and truncated) content, fingerprint, metadata JSON."""

    content: str
    chunk_type: str
    start_line: int
    end_line: int
    context_prefix: str
    fingerprint: str
    metadata: str
    fts_body: str | None = None  # fts_text() of the row, computed ahead (None: the trigger computes it)


def prepare_chunks(path: str, chunks: Sequence[CodeChunk]) -> list[PreparedChunk]:
    """Redact and fingerprint chunks (pure CPU: call it outside the writer).

    The fingerprint covers file and line range, because the same code in two files (or
    twice in one) is two retrievable places, not a duplicate fact.
    """
    out: list[PreparedChunk] = []
    words = (path,)  # fts_text(content, _NO_TAGS, _files_json(path)) without decoding the JSON again
    # Exactly what the writer's boundary would store, marked so it is not scanned again there.
    for c, (content, cut) in zip(chunks, scanned_cuts([c.text for c in chunks], MAX_CONTENT_CHARS), strict=True):
        meta: dict[str, Any] = {"language": c.language, "symbol": c.symbol}
        if cut:
            meta["truncated"] = True
        if not content.strip():
            continue
        fp = code_fingerprint(path, c.start_line, c.end_line, c.chunk_type, content)
        out.append(PreparedChunk(content, c.chunk_type, c.start_line, c.end_line, c.context_prefix, fp,
                                 json.dumps(meta), fts_text_of(content, words)))
    return out


def code_fingerprint(path: str, start: int, end: int, chunk_type: str, content: str) -> str:
    """The fingerprint of a code chunk: a hash of its place and exact text.

    A chunk is identified by file, line range and type, so the normalisation of
    :func:`desktop.memory.store.rows.fingerprint` (case, spacing, punctuation,
    Unicode forms; 14 % of the parse time of a cold index) cannot merge anything here.
    The same width (32 hex digits) as every other memory's fingerprint.
    """
    key = f"code\0{path}\0{start}\0{end}\0{chunk_type}\0{content}"
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


_NO_TAGS = "[]"  # the tags column of a code memory, as _INSERT writes it


def _files_json(path: str) -> str:
    """The related_files column of a chunk of ``path`` (the FTS body's key must match it exactly)."""
    return json.dumps([path])


def delete_code_memories(tx: Tx, path: str) -> list[int]:
    """Hard-delete the code-index chunks of one file (derived data: no audit trail to scrub)."""
    return delete_code_memories_of(tx, [path])


def delete_code_memories_of(tx: Tx, paths: Sequence[str]) -> list[int]:
    """Hard-delete the code-index chunks of several files, their FTS rows in one go (see delete_memories)."""
    ids = [r[0] for path in paths for r in tx.execute(
        "SELECT m.id FROM memory_files f JOIN memories m ON m.id = f.memory_id WHERE f.file_path=?"
        " AND m.source='code_index' AND m.type='code'", (path,))]
    delete_memories(tx.conn, ids)
    return ids


def insert_code_memories(tx: Tx, path: str, module: str | None,
                         chunks: Sequence[CodeChunk | PreparedChunk]) -> list[int]:
    """Store one file's chunks as CODE memories; unprepared chunks are redacted here first."""
    return insert_code_memories_of(tx, {path: (module, chunks)})


def insert_code_memories_of(tx: Tx, files: Mapping[str, tuple[str | None, Sequence[CodeChunk | PreparedChunk]]],
                            ) -> list[int]:
    """Store the chunks of several files ({path: (module, chunks)}) in one insert; returns their ids.

    Their FTS rows are written in one statement after the rows (see ``fts_in_bulk``),
    with the bodies computed in the parse workers.
    """
    now, pid = tx.now, tx.project_id
    rows: list[tuple[Any, ...]] = []
    bodies: dict[tuple[str | None, str | None, str | None], str] = {}
    for path, (module, chunks) in files.items():
        raw = [c for c in chunks if isinstance(c, CodeChunk)]
        ready = [c for c in chunks if isinstance(c, PreparedChunk)]
        if raw:
            ready += prepare_chunks(path, raw)
        files_json = _files_json(path)
        mods = json.dumps([module] if module else [])
        for c in ready:
            rows.append((c.content, files_json, mods, now, now, now, pid, c.chunk_type, c.start_line, c.end_line,
                         c.context_prefix, c.fingerprint, c.metadata))
            if c.fts_body is not None:
                bodies[(c.content, _NO_TAGS, files_json)] = c.fts_body
    if not rows:
        return []
    with fts_in_bulk(tx.conn, bodies) as ids:
        ids += [r[0] for r in tx.conn.executemany(_INSERT, rows)]
    return ids


class StoreChunks(WriteOp[tuple[int, int]]):
    """Replace the code memories of some files: {path: (module, chunks)}."""

    name: ClassVar[str] = "graph_store_chunks"

    def __init__(self, files: Mapping[str, tuple[str | None, Sequence[CodeChunk | PreparedChunk]]]) -> None:
        self.files = files

    def apply(self, tx: Tx) -> tuple[int, int]:
        """Delete each file's old chunks, insert the new ones; returns (added, deleted)."""
        if self.files:
            tx.audit("code_index", None, actor="indexer", detail={"chunked_files": len(self.files)})
        # All deletions before any insert: FTS5 then flushes its deleted rows once, not per file.
        deleted = delete_code_memories_of(tx, list(self.files))
        added = insert_code_memories_of(tx, self.files)
        if added:
            tx.changed("memory", "added", added)
        if deleted:
            tx.changed("memory", "deleted", deleted)
        return len(added), len(deleted)


class SetChunkModules(WriteOp[int]):
    """Point the code memories of some files at their (newly detected) module: {path: module}."""

    name: ClassVar[str] = "graph_chunk_modules"

    def __init__(self, modules: dict[str, str | None]) -> None:
        self.modules = modules

    def apply(self, tx: Tx) -> int:
        """UPDATE related_modules (its trigger keeps memory_modules in step; FTS is untouched)."""
        changed: list[int] = []
        for path, module in self.modules.items():
            mods = json.dumps([module] if module else [])
            changed += [r[0] for r in tx.execute(
                "UPDATE memories SET related_modules=? WHERE id IN (SELECT memory_id FROM memory_files"
                " WHERE file_path=?) AND source='code_index' AND type='code' AND related_modules<>?"
                " RETURNING id", (mods, path, mods))]
        if changed:
            tx.changed("memory", "updated", changed)
        return len(changed)
