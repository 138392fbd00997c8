"""The project indexer: walk, parse (and chunk), resolve, store, close, detect modules.

Parsing happens in the calling (worker) thread; the writer thread only receives
ready-made rows in batches (``BATCH`` files per op), submitted without waiting so
SQLite commits while the next batch parses. Files are stored in two steps because an
edge needs both its endpoints: first every changed file's nodes (records marked
``pending``), then its resolved edges. A file becomes ``ok``/``partial`` only when the
run finishes, so a cancelled run is simply redone next time. The first run (or one
touching many files) builds the closure in one pass at the end; small runs keep it
incrementally inside each op.

Code chunks are redacted and fingerprinted in the parsing thread and go to the writer
(``CHUNK_BATCH`` files per op) while later files still parse, so their inserts overlap
with parsing instead of forming a serial phase; the module a chunk belongs to is only
known after community detection, so chunks whose module changed get one cheap UPDATE
of ``related_modules`` at the end (no FTS work).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any, cast

from desktop.memory.graph import facts as factlib
from desktop.memory.graph.closure import (
    CLOSURE_TYPES,
    DEFAULT_DEPTH,
    adjacency_from_rows,
    full_closure_params,
    json_list,
)
from desktop.memory.graph.code_memories import PreparedChunk, SetChunkModules, StoreChunks
from desktop.memory.graph.communities import detect_modules
from desktop.memory.graph.extract import extract_file
from desktop.memory.graph.model import FileExtraction
from desktop.memory.graph.parse_pool import (
    BACKGROUND_NICENESS,
    POOL_MIN_FILES,
    Parsed,
    ParseJob,
    ParsePipeline,
    fewer_collections,
)
from desktop.memory.graph.report import IndexProgress, IndexReport
from desktop.memory.graph.resolve import SymbolIndex, resolve_file
from desktop.memory.graph.store import (
    FileGraph,
    FileRecord,
    ReplaceClosure,
    ReplaceFiles,
    StoreModules,
    UpdateIndexState,
)
from desktop.memory.graph.walk import MAX_FILE_BYTES, IgnoreRules, classify, inside, walk
from desktop.memory.privacy.scanned import QuietParts
from desktop.memory.store.database import Database
from desktop.memory.store.writer import FnOp, Tx

log = logging.getLogger("engram.graph")

BATCH = 50
CHUNK_BATCH = 100  # files per StoreChunks op (the writer group-commits queued ops anyway)
CLOSURE_BATCH = 20_000
FULL_CLOSURE_FRACTION = 0.2  # above this share of changed files, rebuild the closure in one pass
_CLOSURE_FLAG = "graph_closure_complete"


Progress = Callable[[IndexProgress], None]


class ProjectIndexer:
    """Indexes one project folder into its database; keeps the symbol index for later updates."""

    def __init__(self, db: Database, root: Path | str, *, depth: int = DEFAULT_DEPTH, chunks: bool = True,
                 user_modules: dict[str, str] | None = None, workers: int | None = None,
                 pool_min_files: int = POOL_MIN_FILES) -> None:
        self.db = db
        self.workers = workers  # parse processes on big runs (None: one per core; 1: never)
        self.pool_min_files = pool_min_files
        self._niceness = 0
        self.root = Path(root).resolve()
        self.depth = depth
        self.chunks = chunks
        self.user_modules = user_modules  # path prefix -> module name, when the user defined modules
        self.rules = IgnoreRules(self.root)
        self.index: SymbolIndex | None = None
        self._lock = threading.Lock()  # one run at a time (CLI, first index, watcher)

    # -- reading ---------------------------------------------------------------
    def read(self, rel: str) -> tuple[bytes | None, str | None, float]:
        """Return (bytes, skip reason, mtime); never raises for a file that vanished or is odd."""
        p = self.root / rel
        try:
            real = p.resolve(strict=True)
            if not inside(self.root, real):  # a link (or a linked folder) pointing out of the project
                return None, "outside the project", 0.0
            st = real.stat()
            if not real.is_file():
                return None, "unreadable: not a regular file", 0.0
            if st.st_size > MAX_FILE_BYTES:
                return None, "too large", st.st_mtime
            # O_NOFOLLOW: a link swapped in since the check is refused, not followed.
            with open(os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)), "rb") as fh:
                data = fh.read(MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            if p.is_symlink():
                return None, "unreadable: dangling symlink", 0.0
            return None, "deleted", 0.0
        except (OSError, RuntimeError) as exc:  # permissions, symlink loops, FIFOs gone odd
            return None, f"unreadable: {getattr(exc, 'strerror', None) or exc}", 0.0
        why = classify(rel, data)
        return (None if why else data), why, st.st_mtime

    # -- state -----------------------------------------------------------------
    def _known(self) -> dict[str, tuple[str, str, str | None]]:
        conn = self.db.reads.conn()
        return {p: (h, s, m) for p, h, s, m in conn.execute(
            "SELECT file_path, content_hash, status, module FROM graph_files")}

    def load_index(self) -> SymbolIndex:
        """The symbol index of the stored project (built from the database, no parsing)."""
        if self.index is None:
            self.index = factlib.load_index(self.db.reads.conn())
        return self.index

    def _flag(self, value: str) -> Future[Any]:
        def set_flag(tx: Tx) -> None:
            tx.execute("INSERT INTO project_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE"
                       " SET value=excluded.value", (_CLOSURE_FLAG, value))
        return self.db.writer.submit(FnOp("graph_closure_flag", set_flag))

    def _closure_complete(self) -> bool:
        rows = self.db.reads.conn().execute("SELECT value FROM project_meta WHERE key=?",
                                            (_CLOSURE_FLAG,)).fetchall()
        return not rows or rows[0][0] == "1"

    # -- the run ---------------------------------------------------------------
    def run(self, progress: Progress | None = None, cancel: threading.Event | None = None, *,
            force: bool = False, paths: set[str] | None = None, deleted: set[str] | None = None,
            background: bool = False) -> IndexReport:
        """Index the project (``paths``/``deleted`` given: only those, as the watcher does).

        ``background``: nobody is waiting on this run, so its parse workers yield the CPU.
        """
        with self._lock, fewer_collections():
            self._niceness = BACKGROUND_NICENESS if background else 0
            return self._run(progress or (lambda p: None), cancel or threading.Event(), force,
                             paths, deleted or set())

    def _run(self, progress: Progress, cancel: threading.Event, force: bool,
             paths: set[str] | None, gone: set[str]) -> IndexReport:
        t0 = time.perf_counter()
        report = IndexReport()
        progress(IndexProgress("scan", 0, 0))
        known = self._known()
        if paths is None:
            found = walk(self.root, self.rules)
            candidates = found.files
            report.unsupported = found.unsupported
            for p, reason in found.ignored:
                report.skip(p, reason)
            gone = gone | {p for p in known if p not in set(candidates)}
        else:
            candidates = sorted(p for p in paths if not self.rules.reason(p, False))
            gone = gone | {p for p in paths if p not in candidates and p in known}
        index = self.load_index() if known and not force else SymbolIndex()
        if force or not known:
            self.index = index
        cold = force or not known
        # A file whose edges were marked stale is re-indexed even when its bytes are back to
        # what was indexed (touch, undo): otherwise its edges would stay invisible.
        stale_files = {r[0] for r in self.db.reads.conn().execute(
            "SELECT DISTINCT origin_file FROM graph_edges WHERE stale_at IS NOT NULL")}
        rebuild = cold or not self._closure_complete()
        parsed: list[Parsed] = []
        skipped: list[FileRecord] = []
        futures: list[Future[Any]] = []
        chunk_futures: list[Future[tuple[int, int]]] = []
        batch: list[FileGraph] = []
        chunk_batch: dict[str, tuple[str | None, list[PreparedChunk]]] = {}
        def jobs() -> Iterator[ParseJob]:
            """Read each candidate; unchanged, skipped and vanished files are settled here."""
            for i, rel in enumerate(candidates):
                if cancel.is_set():
                    report.cancelled = True
                    return
                progress(IndexProgress("parse", i, len(candidates), rel))
                data, why, mtime = self.read(rel)
                if data is None:
                    if why == "deleted":
                        gone.add(rel)
                        continue
                    report.skip(rel, why or "unreadable")
                    log.info("skipped %s: %s", rel, why)
                    skipped.append(FileRecord(rel, "", 0, mtime, None, None, "skipped", why))
                    if rel in known and known[rel][1] != "skipped":
                        gone.add(rel)
                    continue
                prev = known.get(rel)
                digest = hashlib.blake2b(data, digest_size=16).hexdigest()
                if not force and prev is not None and prev[0] == digest and prev[1] in ("ok", "partial") \
                        and rel not in stale_files:
                    report.unchanged += 1
                    continue
                yield ParseJob(rel, data, mtime, prev[2] if prev else None)

        # Parsing runs ahead in worker processes on big runs; the symbol index, the batches
        # and every write stay here, in file order, as on the serial path.
        with ParsePipeline(self.chunks, workers=self.workers, min_files=self.pool_min_files,
                           niceness=self._niceness) as pipeline:
            for job, result in pipeline.run(jobs(), expected=len(candidates) if cold else 0):
                rel = job.path
                if isinstance(result, str):  # a parser bug must cost one file, not the run
                    log.error("failed to parse %s\n%s", rel, result)
                    report.skip(rel, "parse error")
                    continue
                item = result
                before = factlib.shape(index, rel)
                index.update(rel, item.extraction)
                after = factlib.shape(index, rel)
                prev = known.get(rel)
                item.shape_changed = prev is None or before != after
                if prev is not None and before[1:] == after[1:] and set(before[0]) <= set(after[0]):
                    # Only new symbols: just files that name one of them can resolve differently.
                    item.added = {q for q, _ in after[0]} - {q for q, _ in before[0]}
                    item.shape_changed = False
                item.is_new = prev is None
                parsed.append(item)
                batch.append(FileGraph(rel, item.extraction.nodes, None, item.record))
                if len(batch) >= BATCH:
                    futures.append(self.db.writer.submit(ReplaceFiles(batch, closure=not rebuild,
                                                                      depth=self.depth)))
                    batch = []
                if self.chunks:
                    # Chunks go to the writer while later files parse; their module is fixed up
                    # once modules are known (an UPDATE of related_modules, no FTS work).
                    chunk_batch[rel] = (item.record.module, item.chunks)
                    if len(chunk_batch) >= CHUNK_BATCH:
                        chunk_futures.append(self.db.writer.submit(StoreChunks(chunk_batch)))
                        chunk_batch = {}
            report.pooled = pipeline.pooled
        if chunk_batch:
            chunk_futures.append(self.db.writer.submit(StoreChunks(chunk_batch)))
        for rel in gone:
            index.remove(rel)
        total_files = max(1, len(index.files))
        rebuild = rebuild or (len(parsed) + len(gone)) / total_files > FULL_CLOSURE_FRACTION
        if rebuild:
            futures.append(self._flag("0"))
        # Nodes of changed files and deletions first: later edges may point at any of them.
        futures.append(self.db.writer.submit(ReplaceFiles(batch, sorted(gone), skipped=skipped,
                                                          closure=not rebuild, depth=self.depth)))
        report.deleted = len(gone)
        _wait(futures)
        _wait(list(chunk_futures))
        report.chunks = sum(f.result()[0] for f in chunk_futures)
        if report.cancelled:
            report.seconds = time.perf_counter() - t0
            return report
        self._resolve(parsed, gone, index, rebuild, cold, progress)
        modules = self._modules(parsed, gone, cold or rebuild, progress)
        # Nothing re-clustered (a reopened, unchanged project): the modules are the stored ones.
        report.modules = len(set(modules.values())) if modules else self._module_count()
        # The writer fixes the chunks' modules while this thread computes the closure.
        moved = self._chunk_modules(parsed, progress)
        if rebuild:
            report.closure_rows = self.rebuild_closure(progress)
        _wait(moved)
        self._finish(parsed, full=paths is None)
        report.indexed = len(parsed)
        report.partial = sum(1 for p in parsed if p.extraction.had_errors)
        report.seconds = time.perf_counter() - t0
        log.info("indexed %d files (%d unchanged, %d skipped, %d deleted) in %.2fs", report.indexed,
                 report.unchanged, sum(report.skipped.values()), report.deleted, report.seconds)
        return report

    def _module_count(self) -> int:
        rows = cast(list[tuple[int]], self.db.reads.conn().execute(  # count(): an INTEGER
            "SELECT count(DISTINCT coalesce(module, '.')) FROM graph_files WHERE status <> 'skipped'").fetchall())
        return int(rows[0][0])

    def _dependents(self, changed: list[Parsed], gone: set[str], index: SymbolIndex) -> set[str]:
        """Files whose resolved edges may change because these files' symbols or paths changed."""
        conn = self.db.reads.conn()
        out: set[str] = set()
        targets = [p.path for p in changed if p.shape_changed] + sorted(gone)
        for path in targets:
            out.update(r[0] for r in conn.execute(
                "SELECT DISTINCT e.origin_file FROM graph_nodes n JOIN graph_edges e ON e.to_id = n.id"
                " WHERE n.file_path = ? AND e.origin_file IS NOT NULL", (path,)))
        new_paths = [p.path for p in changed if p.is_new] + sorted(gone)
        out |= factlib.files_importing(index, new_paths)
        added = set().union(*(p.added for p in changed)) if changed else set()
        if added:
            out |= {f for f, imps in index.imports.items()
                    if any(n in added or n == "*" for imp in imps for n, _ in imp.names)}
        return out - {p.path for p in changed} - gone

    def _resolve(self, parsed: list[Parsed], gone: set[str], index: SymbolIndex, rebuild: bool,
                 cold: bool, progress: Progress) -> None:
        """Store resolved edges of changed files and re-resolve their dependents."""
        extra = set() if cold else self._dependents(parsed, gone, index)
        work: list[tuple[str, FileExtraction]] = [(p.path, p.extraction) for p in parsed]
        for rel in sorted(extra):
            data, _, _ = self.read(rel)
            if data is not None:
                work.append((rel, extract_file(rel, data)))
        futures: list[Future[Any]] = []
        batch: list[FileGraph] = []
        for i, (rel, ex) in enumerate(work):
            if i % 25 == 0:
                progress(IndexProgress("resolve", i, len(work), rel))
            edges = list(ex.edges) + resolve_file(rel, ex, index)
            batch.append(FileGraph(rel, None, edges))
            if len(batch) >= BATCH:
                futures.append(self.db.writer.submit(ReplaceFiles(batch, closure=not rebuild, depth=self.depth)))
                batch = []
        if batch:
            futures.append(self.db.writer.submit(ReplaceFiles(batch, closure=not rebuild, depth=self.depth)))
        _wait(futures)

    def _modules(self, parsed: list[Parsed], gone: set[str], full: bool, progress: Progress) -> dict[str, str]:
        """Module of each file: the user's prefixes, else Louvain (full runs) or the folder's majority."""
        conn = self.db.reads.conn()
        files = [r[0] for r in conn.execute("SELECT file_path FROM graph_files WHERE status<>'skipped'")]
        progress(IndexProgress("modules", 0, len(files)))
        if self.user_modules:
            modules = {f: _user_module(f, self.user_modules) for f in files}
        elif full:
            # substr() of TEXT NOT NULL ids is TEXT.
            edges = cast(list[tuple[str, str]], conn.execute(
                "SELECT substr(from_id, 6), substr(to_id, 6) FROM graph_edges WHERE type='imports'"
                " AND stale_at IS NULL AND from_id LIKE 'file:%' AND to_id LIKE 'file:%'").fetchall())
            modules = detect_modules(edges, files)
        else:
            modules = factlib.guess_modules(conn, [p.path for p in parsed if p.record.module is None])
        if modules:
            self.db.writer.run(StoreModules(modules, source="user" if self.user_modules else "louvain"), None)
        for p in parsed:
            if p.path in modules:
                p.record = FileRecord(**{**p.record.__dict__, "module": modules[p.path]})
        return modules

    def _chunk_modules(self, parsed: list[Parsed], progress: Progress) -> list[Future[Any]]:
        """Give the chunks stored during parsing their final module (when it changed); returns the pending write."""
        if not self.chunks:
            return []
        progress(IndexProgress("chunks", 0, len(parsed)))
        moved = {p.path: p.record.module for p in parsed if p.record.module != p.chunk_module and p.chunks}
        return [self.db.writer.submit(SetChunkModules(moved))] if moved else []

    def rebuild_closure(self, progress: Progress | None = None) -> int:
        """Compute the whole closure here (not in the writer) and write it in batches."""
        conn = self.db.reads.conn()
        adj = adjacency_from_rows(cast(list[tuple[str, str, str, float]], conn.execute(  # TEXT/REAL NOT NULL
            "SELECT from_id, to_id, type, weight FROM graph_edges WHERE stale_at IS NULL").fetchall()))
        # Paths made only of quiet ids reach the writer as Scanned text (checked here once per id).
        quiet = QuietParts({n for n in adj} | {h for hops in adj.values() for h, _, _ in hops} | CLOSURE_TYPES)

        def encode(items: tuple[str, ...]) -> str:
            return quiet.json_list(items) or json_list(items)
        futures: list[Future[int]] = []
        rows: list[Any] = []
        first = True
        total = 0
        for part in full_closure_params(adj, self.depth, encode):
            rows.extend(part)
            if len(rows) >= CLOSURE_BATCH:
                futures.append(self.db.writer.submit(ReplaceClosure(rows, clear=first)))
                first, total, rows = False, total + len(rows), []
                if progress:
                    progress(IndexProgress("closure", total, 0))
        futures.append(self.db.writer.submit(ReplaceClosure(rows, clear=first)))
        total += len(rows)
        futures.append(self._flag("1"))
        _wait(futures)
        return total

    def _finish(self, parsed: list[Parsed], *, full: bool) -> None:
        final = [("partial" if p.extraction.had_errors else "ok", p.path) for p in parsed]

        def finish(tx: Tx) -> int:
            tx.conn.executemany("UPDATE graph_files SET status=? WHERE file_path=?", final)
            return len(final)
        self.db.writer.run(FnOp("graph_finish_files", finish), None)
        self.db.writer.run(UpdateIndexState(collect=full), None)


def _user_module(path: str, prefixes: dict[str, str]) -> str:
    best = max((p for p in prefixes if path == p or path.startswith(p.rstrip("/") + "/")), key=len, default=None)
    return prefixes[best] if best is not None else (path.split("/", 1)[0] if "/" in path else ".")


def _wait(futures: list[Future[Any]]) -> None:
    """Wait for submitted writes; the first failure is raised after all have settled."""
    error: BaseException | None = None
    for f in futures:
        exc = f.exception()
        if exc is not None and error is None:
            error = exc
    if error is not None:
        raise error


__all__ = ["IndexProgress", "IndexReport", "ProjectIndexer"]
