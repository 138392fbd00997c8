"""Write operations of the code graph. Each runs inside the one writer thread.

A file *owns* its nodes (``graph_nodes.file_path``) and its outgoing edges
(``graph_edges.origin_file``: the edges its extraction and resolution produced,
including the ``tested_by`` edges a test file points at what it tests). Replacing a
file upserts its nodes by id (an unchanged symbol keeps its row, so other files'
edges into it survive), deletes the nodes that vanished (their incoming edges go
with them by cascade) and swaps its edges -- all in one short savepoint.

The closure is kept up to date in the same transaction, incrementally (see
:mod:`closure_update`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

from desktop.memory.graph.closure import (
    CLOSURE_TYPES,
    CONFIDENCE_VALUES,
    DEFAULT_DEPTH,
    ClosureRow,
    Params,
    edge_weight,
)
from desktop.memory.graph.closure_update import CHUNK, ClosureTracker, ids_in, insert_closure, insert_closure_params
from desktop.memory.graph.code_memories import delete_code_memories, insert_code_memories
from desktop.memory.graph.model import CodeChunk, GraphEdge, GraphNode
from desktop.memory.store.connection import count_of
from desktop.memory.store.writer import Tx, WriteOp

log = logging.getLogger("engram.graph")



@dataclass(frozen=True)
class FileRecord:
    """The indexer's row for one file (``graph_files``)."""

    path: str
    content_hash: str
    size: int
    mtime: float
    language: str | None = None
    module: str | None = None
    status: str = "ok"  # ok | partial (syntax errors) | skipped | pending (run not finished)
    skip_reason: str | None = None
    facts: str | None = None  # JSON: raw imports and package (see schema GRAPH_FILE_FACTS)


@dataclass
class FileGraph:
    """What one file contributes: its nodes, the edges it owns, its record and chunks.

    ``chunks`` None leaves the file's code memories alone; a list replaces them.
    ``nodes`` None keeps the stored nodes (a dependent file whose edges are re-resolved);
    ``edges`` None keeps the stored edges (nodes are stored before any edge can point at them).
    """

    path: str
    nodes: Sequence[GraphNode] | None
    edges: Sequence[GraphEdge] | None
    record: FileRecord | None = None
    chunks: list[CodeChunk] | None = None
    module: str | None = None


def _now_ms(tx: Tx) -> int:
    return int(tx.now_dt.timestamp() * 1000)


def _ensure_placeholder(tx: Tx, node_id: str, now: int) -> None:
    """ext:/mod: ids are shared by many files and created on first use."""
    kind, _, name = node_id.partition(":")
    meta = {"external": True} if kind == "ext" else {"directory": True}
    tx.execute("INSERT OR IGNORE INTO graph_nodes(id, project_id, type, label, metadata, created_at,"
               " updated_at, confidence) VALUES (?,?,?,?,?,?,?,?)",
               (node_id, tx.project_id, "module", name or ".", json.dumps(meta), now, now, "verified"))


def _upsert_nodes(tx: Tx, nodes: Sequence[GraphNode], now: int) -> None:
    tx.conn.executemany(
        "INSERT INTO graph_nodes(id, project_id, type, label, file_path, language, start_line, end_line,"
        " confidence, metadata, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
        " ON CONFLICT(id) DO UPDATE SET type=excluded.type, label=excluded.label,"
        " file_path=excluded.file_path, language=excluded.language, start_line=excluded.start_line,"
        " end_line=excluded.end_line, metadata=excluded.metadata, updated_at=excluded.updated_at,"
        " stale_at=NULL",
        [(n.id, tx.project_id, n.type, n.label, n.file_path, n.language, n.start_line, n.end_line,
          "verified", _meta_json(n.metadata), now, now) for n in nodes])


def _meta_json(meta: Any) -> str:
    """JSON of a node's or edge's metadata ("{}" without the encoder for the common empty case)."""
    return json.dumps(dict(meta), default=str) if meta else "{}"


def _edge_key(e: GraphEdge) -> tuple[str, str, str]:
    return (e.from_id, e.to_id, e.type)


def _drop_nodes(tx: Tx, ids: Sequence[str], track: ClosureTracker) -> None:
    """Delete nodes; every fresh edge touching them (any owner) goes by cascade."""
    if not ids:
        return
    for i in range(0, len(ids), CHUNK):
        part = list(ids[i:i + CHUNK])
        marks = ",".join("?" * len(part))
        for f, t, ty in tx.execute("SELECT from_id, to_id, type FROM graph_edges WHERE stale_at IS NULL"
                                   f" AND (from_id IN ({marks}) OR to_id IN ({marks}))", part + part):
            track.note(f, t, ty, added=False)
    track.dead.update(ids)
    ids_in(tx, "DELETE FROM graph_nodes WHERE id IN ({marks})", list(ids))


def _replace_edges(tx: Tx, fg: FileGraph, known: set[str], track: ClosureTracker, now: int) -> int:
    """Swap the file's owned edges, noting only the real differences for the closure."""
    old = {(f, t, ty) for f, t, ty in tx.execute(
        "SELECT from_id, to_id, type FROM graph_edges WHERE origin_file=? AND stale_at IS NULL", (fg.path,))}
    new: dict[tuple[str, str, str], GraphEdge] = {}
    for e in fg.edges or ():
        new.setdefault(_edge_key(e), e)
    for key in old.difference(new):
        track.note(*key, added=False)
    for key in new.keys() - old:
        track.note(*key, added=True)
    tx.execute("DELETE FROM graph_edges WHERE origin_file=?", (fg.path,))
    unknown = {nid for e in new.values() for nid in (e.from_id, e.to_id) if nid not in known}
    for nid in sorted(n for n in unknown if n.startswith(("ext:", "mod:"))):
        _ensure_placeholder(tx, nid, now)
        known.add(nid)
    rest = sorted(n for n in unknown if n not in known)
    known.update(r[0] for r in ids_in(tx, "SELECT id FROM graph_nodes WHERE id IN ({marks})", rest))
    rows = []
    for e in new.values():
        if e.from_id not in known or e.to_id not in known:
            log.debug("edge %s -> %s skipped: endpoint not indexed", e.from_id, e.to_id)
            continue
        rows.append((tx.project_id, e.from_id, e.to_id, e.type, edge_weight(e.type, e.confidence),
                     CONFIDENCE_VALUES.get(e.confidence, 1.0), _meta_json(e.metadata), fg.path, now, now))
    tx.conn.executemany(
        "INSERT INTO graph_edges(project_id, from_id, to_id, type, weight, confidence, metadata,"
        " origin_file, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
    return len(rows)


def _upsert_record(tx: Tx, rec: FileRecord, now: int) -> None:
    tx.execute("INSERT INTO graph_files(file_path, content_hash, size, mtime, language, module, indexed_at,"
               " status, skip_reason, facts) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT(file_path) DO UPDATE SET"
               " content_hash=excluded.content_hash, size=excluded.size, mtime=excluded.mtime,"
               " language=excluded.language, module=COALESCE(excluded.module, graph_files.module),"
               " indexed_at=excluded.indexed_at, status=excluded.status, skip_reason=excluded.skip_reason,"
               " facts=excluded.facts",
               (rec.path, rec.content_hash, rec.size, rec.mtime, rec.language, rec.module, now,
                rec.status, rec.skip_reason, rec.facts))


class ReplaceFiles(WriteOp[dict[str, int]]):
    """Replace the graph (and optionally the code chunks) of some files, delete others, in one step."""

    name: ClassVar[str] = "graph_replace_files"

    def __init__(self, files: Sequence[FileGraph], deleted: Sequence[str] = (), *,
                 skipped: Sequence[FileRecord] = (), closure: bool = True, depth: int = DEFAULT_DEPTH) -> None:
        self.files = list(files)
        self.deleted = list(deleted)
        self.skipped = list(skipped)
        self.closure = closure
        self.depth = depth

    def apply(self, tx: Tx) -> dict[str, int]:
        """Upsert nodes, drop vanished ones, swap edges, records and chunks, then fix the closure."""
        now = _now_ms(tx)
        track = ClosureTracker(self.depth)
        stats = {"nodes": 0, "edges": 0, "chunks_added": 0, "chunks_deleted": 0, "closure_rows": 0}
        known: set[str] = set()
        added_mem: list[int] = []
        deleted_mem: list[int] = []
        if self.files or self.deleted:
            tx.audit("code_index", None, actor="indexer", detail={
                "files": len(self.files), "deleted": len(self.deleted)})
        for path in self.deleted:
            old = [r[0] for r in tx.execute("SELECT id FROM graph_nodes WHERE file_path=?", (path,))]
            # from_id, to_id and type are TEXT NOT NULL.
            for f, t, ty in cast(list[tuple[str, str, str]], tx.execute(
                    "SELECT from_id, to_id, type FROM graph_edges WHERE origin_file=?"
                    " AND stale_at IS NULL", (path,)).fetchall()):
                track.note(f, t, ty, added=False)
            tx.execute("DELETE FROM graph_edges WHERE origin_file=?", (path,))
            _drop_nodes(tx, old, track)
            tx.execute("DELETE FROM graph_files WHERE file_path=?", (path,))
            deleted_mem += delete_code_memories(tx, path)
        for fg in self.files:  # all nodes first: edges of one file may point at another's
            if fg.nodes is None:
                continue
            new_ids = {n.id for n in fg.nodes}
            old = [r[0] for r in tx.execute("SELECT id FROM graph_nodes WHERE file_path=?", (fg.path,))]
            _drop_nodes(tx, [i for i in old if i not in new_ids], track)
            _upsert_nodes(tx, fg.nodes, now)
            known |= new_ids
            stats["nodes"] += len(fg.nodes)
        for fg in self.files:
            if fg.edges is not None:
                stats["edges"] += _replace_edges(tx, fg, known, track, now)
            if fg.record is not None:
                _upsert_record(tx, fg.record, now)
            if fg.chunks is not None:
                deleted_mem += delete_code_memories(tx, fg.path)
                added_mem += insert_code_memories(tx, fg.path, fg.module, fg.chunks)
        for rec in self.skipped:
            _upsert_record(tx, rec, now)
        if self.closure and track.changed:
            # The closure table is untouched until now, so it still describes the old graph.
            stats["closure_rows"] = track.recompute(tx, track.affected(tx))
        stats["chunks_added"] = len(added_mem)
        stats["chunks_deleted"] = len(deleted_mem)
        if added_mem:
            tx.changed("memory", "added", added_mem)
        if deleted_mem:
            tx.changed("memory", "deleted", deleted_mem)
        tx.changed("graph", "updated", [fg.path for fg in self.files] + self.deleted)
        return stats


class MarkStale(WriteOp[int]):
    """Glean-style: the moment a file is seen changing, its edges stop being visible to queries."""

    name: ClassVar[str] = "graph_mark_stale"

    def __init__(self, paths: Sequence[str], *, depth: int = DEFAULT_DEPTH) -> None:
        self.paths = sorted(set(paths))
        self.depth = depth

    def apply(self, tx: Tx) -> int:
        """Set stale_at on the files' fresh edges and drop their paths from the closure."""
        track = ClosureTracker(self.depth)
        rows = ids_in(tx, "SELECT from_id, to_id, type FROM graph_edges WHERE stale_at IS NULL"
                       " AND origin_file IN ({marks})", self.paths)
        for f, t, ty in rows:
            track.note(f, t, ty, added=False)
        if not rows:
            return 0
        affected = track.affected(tx)
        ids_in(tx, f"UPDATE graph_edges SET stale_at = {_now_ms(tx)} WHERE stale_at IS NULL"
                " AND origin_file IN ({marks})", self.paths)
        track.recompute(tx, affected)
        tx.changed("graph", "stale", self.paths)
        return len(rows)


class ReplaceClosure(WriteOp[int]):
    """Write closure rows computed outside the writer (cold index); ``clear`` empties the table first.

    Rows are ``ClosureRow`` objects or their INSERT parameters (``ClosureRow.as_params``).
    """

    name: ClassVar[str] = "graph_replace_closure"

    def __init__(self, rows: Sequence[ClosureRow | Params], *, clear: bool = False) -> None:
        self.rows = rows
        self.clear = clear

    def apply(self, tx: Tx) -> int:
        """Insert the rows."""
        if self.clear:
            tx.execute("DELETE FROM graph_closure")
        insert_closure_params(tx, (r.as_params() if isinstance(r, ClosureRow) else r for r in self.rows))
        return len(self.rows)


class RebuildClosure(WriteOp[int]):
    """Recompute the whole closure inside the writer (tests, repair; the indexer builds it outside)."""

    name: ClassVar[str] = "graph_rebuild_closure"

    def __init__(self, depth: int = DEFAULT_DEPTH) -> None:
        self.depth = depth

    def apply(self, tx: Tx) -> int:
        """Delete every row and recompute from the fresh edges."""
        from desktop.memory.graph.closure import adjacency_from_rows, full_closure

        adj = adjacency_from_rows(cast(list[tuple[str, str, str, float]], tx.execute(  # TEXT/REAL NOT NULL
            "SELECT from_id, to_id, type, weight FROM graph_edges WHERE stale_at IS NULL").fetchall()))
        tx.execute("DELETE FROM graph_closure")
        rows = list(full_closure(adj, self.depth))
        insert_closure(tx, rows)
        return len(rows)


class StoreModules(WriteOp[int]):
    """Record each file's module and one ``module`` node per detected module."""

    name: ClassVar[str] = "graph_store_modules"

    def __init__(self, modules: dict[str, str], *, source: str = "louvain") -> None:
        self.modules = modules
        self.source = source

    def apply(self, tx: Tx) -> int:
        """Update graph_files.module, upsert module nodes, drop module nodes no file names any more."""
        now = _now_ms(tx)
        tx.conn.executemany("UPDATE graph_files SET module=? WHERE file_path=?",
                            [(m, f) for f, m in self.modules.items()])
        names = sorted(set(self.modules.values()))
        counts: dict[str, int] = dict.fromkeys(names, 0)
        for m, n in ids_in(tx, "SELECT module, count(*) FROM graph_files WHERE module IN ({marks})"
                            " GROUP BY module", names):
            counts[m] = n
        for name, n in counts.items():
            meta = json.dumps({"community": True, "source": self.source, "file_count": n})
            tx.execute("INSERT INTO graph_nodes(id, project_id, type, label, metadata, created_at, updated_at,"
                       " confidence) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET"
                       " metadata=json_patch(graph_nodes.metadata, excluded.metadata), updated_at=excluded.updated_at",
                       (f"mod:{name}", tx.project_id, "module", name, meta, now, now, "inferred"))
        tx.changed("graph", "modules", list(counts))
        return len(counts)


@dataclass
class IndexState:
    """Counters kept in graph_index_state after a run."""

    nodes: int = 0
    edges: int = 0
    stale: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


class UpdateIndexState(WriteOp[IndexState]):
    """Refresh graph_index_state counters and garbage-collect orphan external nodes."""

    name: ClassVar[str] = "graph_update_state"

    def __init__(self, *, collect: bool = True) -> None:
        self.collect = collect

    def apply(self, tx: Tx) -> IndexState:
        """Count nodes and edges; on full runs remove ext: nodes nothing points at any more."""
        if self.collect:  # a scan of every external node: full runs only, never on a live edit
            tx.execute("DELETE FROM graph_nodes WHERE id LIKE 'ext:%' AND NOT EXISTS"
                       " (SELECT 1 FROM graph_edges e WHERE e.to_id = graph_nodes.id AND e.stale_at IS NULL)")
        nodes = count_of(tx.execute("SELECT count(*) FROM graph_nodes"))
        edges = count_of(tx.execute("SELECT count(*) FROM graph_edges WHERE stale_at IS NULL"))
        stale = count_of(tx.execute("SELECT count(*) FROM graph_edges WHERE stale_at IS NOT NULL"))
        tx.execute("INSERT INTO graph_index_state(project_id, last_indexed_at, node_count, edge_count,"
                   " stale_edge_count) VALUES (?,?,?,?,?) ON CONFLICT(project_id) DO UPDATE SET"
                   " last_indexed_at=excluded.last_indexed_at, node_count=excluded.node_count,"
                   " edge_count=excluded.edge_count, stale_edge_count=excluded.stale_edge_count",
                   (tx.project_id, _now_ms(tx), nodes, edges, stale))
        return IndexState(nodes, edges, stale)


__all__ = ["CLOSURE_TYPES", "FileGraph", "FileRecord", "MarkStale", "RebuildClosure", "ReplaceClosure",
           "ReplaceFiles", "StoreModules", "UpdateIndexState"]
