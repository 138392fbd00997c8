"""Parse, extract, chunk and redact files on every core, returning plain data in file order.

Tree-sitter parsing, extraction, chunking, secret redaction and fingerprints are pure
CPU work on one file's bytes, and measured as 70 % of a cold index of the Python
standard library (py-spy, 678 files; the rest is the writer's SQLite/FTS work and the
closure). :class:`ParsePipeline` runs :func:`parse_job` for each file, serially for
the first few files, and in a process pool once a run has ``min_files`` files to
parse. Workers never touch the database: they return :class:`Parsed` (frozen
dataclasses and strings, pickled back), and the indexer thread updates the symbol
index and hands rows to the one writer, exactly as on the serial path. Results come
back in submission order, so a pooled run stores the same rows as a serial one.

Workers are started with ``spawn`` (no ``fork`` of a process that has a writer
thread holding locks); they import only the graph package. A pool that dies (a
worker killed, out of memory) costs nothing: its unfinished files are parsed in the
calling thread.
"""

from __future__ import annotations

import gc
import hashlib
import logging
import multiprocessing
import os
import threading
import traceback
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field

from desktop.memory.graph import facts as factlib
from desktop.memory.graph.chunking import chunk_file
from desktop.memory.graph.code_memories import PreparedChunk, prepare_chunks
from desktop.memory.graph.extract import extract_file
from desktop.memory.graph.model import FileExtraction
from desktop.memory.graph.store import FileRecord
from desktop.memory.privacy.scanned import adopt_key, worker_key

log = logging.getLogger("engram.graph")

__all__ = ["BACKGROUND_NICENESS", "GC_THRESHOLD0", "POOL_MIN_FILES", "ParseJob", "ParsePipeline", "Parsed",
           "default_workers", "fewer_collections", "parse_job"]

# Below this many files to parse, starting processes (~0.3-1 s of imports each, in
# parallel) costs more than it saves at ~40 files/s per core; live updates (a few
# files) never reach it, so they stay in the calling thread.
POOL_MIN_FILES = 48
# Files in flight per worker: enough to keep each busy while the indexer thread
# stores results, few enough that parsed-but-unstored files stay a small buffer.
_WINDOW_PER_WORKER = 8
# Files per task: amortises pickling and queue round trips over small files.
_TASK_FILES = 4
# A background index (the app's first index, agents) runs its workers a little below normal
# priority: when the cores are busy the GUI thread and the writer (in the parent) win; on an idle
# machine it changes nothing. A foreground `engram index`, which the user waits for, does not.
BACKGROUND_NICENESS = 5


# Young objects per garbage collection while indexing (CPython's default is 700). A cold
# index keeps ~10^6 container objects alive (parse results, the symbol index, rows in
# flight, the splitter's caches) while allocating many more, and each collection of the
# older generations walks all of them: on the standard library that was 0.3-0.4 s of the
# main process's CPU and about as much in the workers. Almost nothing here forms cycles,
# so collecting less often only delays freeing the rare cycle.
GC_THRESHOLD0 = 50_000
_gc_lock = threading.Lock()
_gc_users = 0
_gc_saved: tuple[int, int, int] = (700, 10, 10)


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the garbage collector's first threshold for the duration of an index run (nested runs share it)."""
    global _gc_users, _gc_saved
    with _gc_lock:
        if _gc_users == 0:
            _gc_saved = gc.get_threshold()
            gc.set_threshold(max(_gc_saved[0], GC_THRESHOLD0), _gc_saved[1], _gc_saved[2])
        _gc_users += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_users -= 1
            if _gc_users == 0:
                gc.set_threshold(*_gc_saved)


def _init_worker(niceness: int, key: bytes) -> None:
    """Vouch for redacted chunks with the parent's key, collect garbage less often, lower the CPU priority.

    With the key, the chunk texts this worker redacts reach the parent's writer as
    ``Scanned`` (see privacy.scanned) and are not scanned a second time there. The
    priority is lowered on POSIX only (Windows has no os.nice).
    """
    adopt_key(key)
    gc.set_threshold(GC_THRESHOLD0, *gc.get_threshold()[1:])
    if niceness and hasattr(os, "nice"):
        try:
            os.nice(niceness)
        except OSError:
            pass


@dataclass(frozen=True)
class ParseJob:
    """One file to parse: its bytes as read, mtime, and the module it had (None if new)."""

    path: str
    data: bytes
    mtime: float
    module: str | None


@dataclass
class Parsed:
    """A parsed file: extraction, its pending file record and prepared chunks."""

    path: str
    extraction: FileExtraction
    record: FileRecord
    chunks: list[PreparedChunk]
    is_new: bool = False
    shape_changed: bool = True
    added: set[str] = field(default_factory=set)
    chunk_module: str | None = None  # the module its chunks were stored with


def parse_job(job: ParseJob, chunks: bool) -> Parsed:
    """Extract, chunk and redact one file (pure CPU; any thread or process)."""
    ex = extract_file(job.path, job.data)
    prepared = prepare_chunks(job.path, chunk_file(job.path, job.data, ex)) if chunks else []
    rec = FileRecord(job.path, hashlib.blake2b(job.data, digest_size=16).hexdigest(), len(job.data), job.mtime,
                     ex.language, job.module, "pending", "syntax errors" if ex.had_errors else None,
                     factlib.dump(ex))
    return Parsed(job.path, ex, rec, prepared, chunk_module=job.module)


def _safe_parse(job: ParseJob, chunks: bool) -> Parsed | str:
    """:func:`parse_job`, with a parser bug turned into its traceback text (one file lost, not the run)."""
    try:
        return parse_job(job, chunks)
    except Exception:
        return traceback.format_exc()


def _parse_many(jobs: list[ParseJob], chunks: bool) -> list[Parsed | str]:
    """The worker's task: a few files in a row."""
    return [_safe_parse(job, chunks) for job in jobs]


def default_workers() -> int:
    """One worker per core the process may use (at least 1, at most 8)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS, Windows
        cores = os.cpu_count() or 1
    return max(1, min(8, cores))


class ParsePipeline:
    """Turns a stream of :class:`ParseJob` into ``(job, Parsed | traceback text)`` in the same order."""

    def __init__(self, chunks: bool, *, workers: int | None = None, min_files: int = POOL_MIN_FILES,
                 niceness: int = 0) -> None:
        """``workers`` <= 1 keeps everything in the calling thread (the serial path)."""
        self.chunks = chunks
        self.niceness = niceness
        self.workers = default_workers() if workers is None else max(1, workers)
        self.min_files = max(1, min_files)
        self.pooled = 0  # files parsed by the pool in the last run (for reports and tests)
        self._executor: ProcessPoolExecutor | None = None
        self._broken = False

    def run(self, jobs: Iterable[ParseJob], *, expected: int = 0) -> Iterator[tuple[ParseJob, Parsed | str]]:
        """Yield each job with its result, in order; parses ahead in the pool when it is worth it.

        ``expected`` is how many jobs the caller knows are coming (a first index: every
        file): at ``min_files`` or more the pool starts before the first job, so its
        start-up overlaps reading instead of following ``min_files`` serial parses.
        """
        if expected >= self.min_files and self.workers > 1:
            self._start()
        pending: deque[tuple[list[ParseJob], Future[list[Parsed | str]] | list[Parsed | str]]] = deque()
        group: list[ParseJob] = []
        window = max(1, self.workers * _WINDOW_PER_WORKER // _TASK_FILES)
        for seen, job in enumerate(jobs, 1):
            if self._executor is None and not self._broken and self.workers > 1 and seen >= self.min_files:
                self._start()
            if self._executor is None:
                pending.append(([job], [_safe_parse(job, self.chunks)]))
            else:
                group.append(job)
                if len(group) >= _TASK_FILES:
                    pending.append((group, self._submit(group)))
                    group = []
            # Serial results go out at once (parsing interleaves with the writer as before);
            # pooled ones when the window is full, oldest first.
            while pending and (isinstance(pending[0][1], list) or len(pending) > window):
                yield from self._resolve(pending.popleft())
        if group:
            pending.append((group, self._submit(group)))
        while pending:
            yield from self._resolve(pending.popleft())

    def close(self) -> None:
        """Stop the workers (queued tasks are dropped); safe to call twice."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    def __enter__(self) -> ParsePipeline:
        """Use as a context manager so workers never outlive a run."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop the workers."""
        self.close()

    # -- internals -------------------------------------------------------------
    def _start(self) -> None:
        """Start the pool (spawned processes: no fork of a threaded process)."""
        try:
            self._executor = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_init_worker,
                                                 initargs=(self.niceness, worker_key()))
            log.info("parsing with %d worker processes", self.workers)
        except (OSError, ValueError, NotImplementedError) as exc:  # no semaphores, sandboxed, ...
            log.warning("no process pool (%s); parsing in this thread", exc)
            self._broken = True

    def _submit(self, group: list[ParseJob]) -> Future[list[Parsed | str]] | list[Parsed | str]:
        """Send a task to the pool, or parse it here if the pool is gone."""
        if self._executor is not None:
            try:
                return self._executor.submit(_parse_many, group, self.chunks)
            except (BrokenProcessPool, RuntimeError):
                self._give_up_pool()
        return _parse_many(group, self.chunks)

    def _resolve(self, entry: tuple[list[ParseJob], Future[list[Parsed | str]] | list[Parsed | str]],
                 ) -> Iterator[tuple[ParseJob, Parsed | str]]:
        """Yield a task's results, waiting for the pool if needed (or redoing it here if the pool broke)."""
        group, result = entry
        if isinstance(result, Future):
            try:
                values = result.result()
                self.pooled += len(group)
            except BrokenProcessPool:
                self._give_up_pool()
                values = _parse_many(group, self.chunks)
        else:
            values = result
        yield from zip(group, values, strict=True)

    def _give_up_pool(self) -> None:
        """A worker died: finish the run in the calling thread."""
        log.warning("the parse pool stopped; parsing the remaining files in this thread")
        self._broken = True
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
