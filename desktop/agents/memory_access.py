"""The agent runtime's one door to memory: a small protocol and its store-backed implementation.

Everything the agent loop, the memory tools, the injection tiers and the MCP
server need from memory goes through :class:`MemoryAccess`. The implementation
searches through the project's hybrid search (``Project.search``) once it is
built, and through FTS5 over the ``memories`` table while the model still loads,
so an agent never waits for a model.

:class:`TimedMemoryAccess` wraps any implementation so that every call gives up
after 3 s (design: the agent carries on without memory rather than stall).
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from desktop.memory.store.connection import rows_as_dicts
from desktop.memory.store.rows import MemoryQuery, row_to_memory
from desktop.memory.trust import INJECTABLE_SQL, injectable
from desktop.memory.types import Memory, MemoryType

if TYPE_CHECKING:
    from desktop.memory.graph.service import GraphService
    from desktop.memory.project import Project
    from desktop.memory.retrieval.service import SearchService

log = logging.getLogger("engram.agents")

T = TypeVar("T")
MEMORY_TIMEOUT_S = 3.0
PREFETCH_RANKED = 24  # ranked files asked for; the session start keeps at most 12 within its budget
GOTCHA_TYPES = (MemoryType.GOTCHA.value, MemoryType.DEAD_END.value, MemoryType.ERROR_PATTERN.value)
CRITICAL_TYPES = (MemoryType.GOTCHA.value, MemoryType.DEAD_END.value, MemoryType.REQUIREMENT.value,
                  MemoryType.DECISION.value)
# One filter for every injection path, defined in the core (candidates, memories waiting for
# review, stale, deprecated and code chunks never reach an agent).
_INJECTABLE = INJECTABLE_SQL


class MemoryAccess(Protocol):
    """What the agent runtime needs from memory. Every method is a read except record_access."""

    def search(self, query: str, *, limit: int = 8, types: Iterable[str] = (), phase: str | None = None,
               touched_files: Iterable[str] = (), min_confidence: float | None = None) -> list[Memory]:
        """Memories relevant to ``query``, best first (phase weights, graph path from touched files)."""
        ...

    def always_inject(self, limit: int = 5) -> list[Memory]:
        """Pinned memories, then critical ones (verified, high-confidence gotchas/decisions)."""
        ...

    def scoped(self, modules: Iterable[str], limit: int = 8) -> list[Memory]:
        """Global memories plus module memories of ``modules``."""
        ...

    def gotchas_for(self, files: Iterable[str], *, exclude: set[int] | None = None, limit: int = 4,
                    min_confidence: float = 0.65) -> list[Memory]:
        """Gotchas, dead ends and error patterns attached to ``files``."""
        ...

    def warnings_for(self, tool: str, args: dict[str, Any], files: list[str], *,
                     exclude: set[int] | None = None, output: str | None = None,
                     passed: bool = False) -> list[Memory]:
        """Lessons whose trigger matches a tool call (the core's warnings_for): before it runs, or
        with ``output`` after it ran (``passed``: it succeeded)."""
        ...

    def guess_note(self, tool: str, args: dict[str, Any], files: list[str]) -> str:
        """A live note before a look at something not on disk where an earlier session's look missed
        too (the core's guess_note; '' when none)."""
        ...

    def tests_habit(self, *, exclude: set[int] | None = None) -> list[Memory]:
        """The user's learned habit of asking for tests, when it may be said (the core's tests_habit)."""
        ...

    def known_for_pattern(self, pattern: str, *, exclude: set[int] | None = None,
                          touched_files: Iterable[str] = (), phase: str | None = None) -> Memory | None:
        """A memory that already answers a Grep/Glob for ``pattern``, if any (files touched so far rank)."""
        ...

    def workflow_recipes(self, task: str, limit: int = 3) -> list[str]:
        """Workflow recipes for a task like ``task`` (memories first, each with its id, then learned sequences)."""
        ...

    def recipe_memories(self, task: str, limit: int = 3) -> list[Memory]:
        """Workflow-recipe memories for a task like ``task`` (the most trusted when none matches)."""
        ...

    def learned_recipes(self, limit: int = 3) -> list[str]:
        """Tool sequences that worked across sessions, one line each (they are not memories)."""
        ...

    def work_state(self, limit: int = 3) -> list[Memory]:
        """The most recent work-state memories (where the last session stopped)."""
        ...

    def conflicts(self, memories: list[Memory]) -> list[tuple[Memory, Memory]]:
        """Pairs among ``memories`` that contradict each other."""
        ...

    def prefetch_candidates(self, task: str) -> list[tuple[str, float]]:
        """(file, prefetch score) for the files a session on ``task`` should read first, best first."""
        ...

    def calibration_factor(self, task: str) -> float:
        """How much longer than planned tasks here run (1.0 = as planned)."""
        ...

    def analyze_impact(self, target: str, depth: int = 3) -> dict[str, Any]:
        """What depends on ``target`` in the code graph."""
        ...

    def record_access(self, memory_ids: Iterable[int]) -> None:
        """Count memories as used (cited or injected)."""
        ...


def _fts_or(query: str) -> str | None:
    from desktop.memory.text.tokens import fts_match_query

    return fts_match_query(query, "or")


def _catch_up(search: SearchService) -> None:
    """Embed what has no vector yet (bounded), so the first searches by meaning find it."""
    search.sync_vectors(timeout_s=30.0)


class StoreMemoryAccess:
    """MemoryAccess over one open :class:`~desktop.memory.project.Project`."""

    def __init__(self, project: Project, *, graph: GraphService | None = None) -> None:
        """``graph``: a GraphService; the project's own (built on first use) when None."""
        self.project = project
        self.db = project.db
        self._graph = graph

    # -- helpers -------------------------------------------------------------------------
    def _conn(self) -> Any:
        return self.db.reads.conn()

    def _select(self, where: str, params: list[Any], order: str, limit: int) -> list[Memory]:
        sql = f"SELECT * FROM memories WHERE {where} ORDER BY {order} LIMIT ?"
        return self._now([row_to_memory(r) for r in rows_as_dicts(self._conn().execute(sql, [*params, limit]))])

    def _now(self, memories: list[Memory]) -> list[Memory]:
        """As they may be said now: the code each is anchored to is checked at this moment."""
        from desktop.memory.lifecycle.freshness import as_of_now

        return as_of_now(memories, self.project.info.root)

    def _search_service(self) -> SearchService | None:
        """The hybrid search when it is built; else None, and its build starts in the background."""
        search = self.project.search_if_built()
        if search is None:
            self.prewarm()
        return search

    def prewarm(self) -> None:
        """Start building the hybrid search service in the background (idempotent).

        Sessions, the MCP server and `engram run` deserve search by meaning, not only
        keywords, but loading the model and catching up on vectors takes seconds: until
        it is ready, searches fall back to keywords instead of blocking the agent.
        """
        self.project.prewarm_search(on_ready=_catch_up)

    def wait_ready(self, timeout: float = 60.0) -> bool:
        """Wait until the hybrid search is built and caught up (tests, and callers that can afford to wait)."""
        self.prewarm()
        return self.project.wait_search(timeout)

    # -- protocol ------------------------------------------------------------------
    def search(self, query: str, *, limit: int = 8, types: Iterable[str] = (), phase: str | None = None,
               touched_files: Iterable[str] = (), min_confidence: float | None = None) -> list[Memory]:
        """The retrieval pipeline (phase, touched files for the graph path, the trust level's
        confidence floor); BM25 over FTS5 only while the pipeline is being built."""
        types = list(types)
        service = self._search_service()
        if service is not None:
            try:
                # Ask for more: quarantined hits are dropped here, after ranking.
                response = service.search(query, limit=limit * 2, types=types or None, phase=phase,
                                          touched_files=tuple(touched_files), min_confidence=min_confidence)
                found = [r.memory for r in response.results if not types or r.memory.type in types]
                return self._now([m for m in found if injectable(m)][:limit])
            except Exception:  # a retrieval bug must not take the agent's memory away
                log.exception("hybrid search failed; falling back to FTS")
        match = _fts_or(query)
        if match is None:
            return []
        where = f"m.{_INJECTABLE.replace(' AND ', ' AND m.')} AND memories_fts MATCH ?"
        params: list[Any] = [match]
        if min_confidence is not None:
            where += " AND (m.confidence >= ? OR m.pinned = 1)"
            params.append(float(min_confidence))
        if types:
            where += f" AND m.type IN ({','.join('?' * len(types))})"
            params += types
        sql = (f"SELECT m.* FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid WHERE {where}"
               f" ORDER BY bm25(memories_fts) LIMIT ?")
        return self._now([row_to_memory(r) for r in rows_as_dicts(self._conn().execute(sql, [*params, limit]))])

    def always_inject(self, limit: int = 5) -> list[Memory]:
        """Pinned first (newest first), then critical ones, at most ``limit``."""
        pinned = self._select(f"{_INJECTABLE} AND pinned = 1", [], "id DESC", limit)
        if len(pinned) >= limit:
            return pinned
        marks = ",".join("?" * len(CRITICAL_TYPES))
        critical = self._select(
            f"{_INJECTABLE} AND pinned = 0 AND (tags LIKE '%\"critical\"%' OR (user_verified = 1 AND "
            f"confidence >= 0.9 AND type IN ({marks})))", list(CRITICAL_TYPES),
            "confidence DESC, id DESC", limit - len(pinned))
        return pinned + critical

    def scoped(self, modules: Iterable[str], limit: int = 8) -> list[Memory]:
        """Global decisions/preferences/requirements, then module insights of ``modules``."""
        mods = list(dict.fromkeys(modules))
        out = self._select(f"{_INJECTABLE} AND pinned = 0 AND scope = 'global' AND type IN "
                           f"('decision','preference','requirement','pattern','note')", [],
                           "confidence DESC, id DESC", max(1, limit // 2))
        if mods:
            marks = ",".join("?" * len(mods))
            out += self._select(f"{_INJECTABLE} AND pinned = 0 AND id IN (SELECT memory_id FROM memory_modules"
                                f" WHERE module IN ({marks}))", mods, "confidence DESC, id DESC",
                                limit - len(out))
        return out[:limit]

    def gotchas_for(self, files: Iterable[str], *, exclude: set[int] | None = None, limit: int = 4,
                    min_confidence: float = 0.65) -> list[Memory]:
        """Indexed lookup through memory_files; cheap at 100,000 memories."""
        paths = [f for f in dict.fromkeys(files) if f]
        if not paths:
            return []
        skip = sorted(exclude or ())[:500]
        where = (f"{_INJECTABLE} AND confidence >= ? AND type IN ({','.join('?' * len(GOTCHA_TYPES))})"
                 f" AND id IN (SELECT memory_id FROM memory_files WHERE file_path IN ({','.join('?' * len(paths))}))")
        params: list[Any] = [min_confidence, *GOTCHA_TYPES, *paths]
        if skip:
            where += f" AND id NOT IN ({','.join('?' * len(skip))})"
            params += skip
        # dead ends first: re-entering a known dead end is the costliest mistake
        return self._select(where, params, "CASE type WHEN 'dead_end' THEN 0 ELSE 1 END, confidence DESC",
                            limit)

    def warnings_for(self, tool: str, args: dict[str, Any], files: list[str], *,
                     exclude: set[int] | None = None, output: str | None = None,
                     passed: bool = False, raw_tool: str = "") -> list[Memory]:
        """The core's lessons for this call (every door asks the same function), as of now
        (``raw_tool``: the agent's own name of a tool with no canonical one, such as an MCP tool)."""
        from desktop.memory.lifecycle.folder_listing import looked_for
        from desktop.memory.lifecycle.freshness import as_of_now
        from desktop.memory.triggers.model import shape_of
        from desktop.memory.triggers.warn import warnings_for

        found = warnings_for(self._conn(), self.project.memories, shape_of(tool, args, files, raw_tool=raw_tool),
                             self.project.info.root, exclude=exclude or (), output=output, passed=passed)
        return as_of_now([w.memory for w in found], self.project.info.root, looked_for(args))

    def guess_note(self, tool: str, args: dict[str, Any], files: list[str]) -> str:
        """The core's live note before a look at something not on disk where an earlier session's
        look missed too ('' when none)."""
        from desktop.memory.lifecycle.folder_listing import looked_for
        from desktop.memory.triggers.guesses import guess_note
        from desktop.memory.triggers.model import LOOK_TOOLS, shape_of

        if tool not in LOOK_TOOLS:
            return ""  # an edit's shape would reduce its text to line shapes for nothing
        return guess_note(self._conn(), shape_of(tool, args, files), self.project.info.root, looked_for(args))

    def tests_habit(self, *, exclude: set[int] | None = None) -> list[Memory]:
        """The core's tests habit, above the project's trust floor (the hooks' threshold)."""
        from desktop.memory.triggers.untested import tests_habit

        return tests_habit(self._conn(), self.project.memories, self.project.preferences.injection_floor(),
                           exclude or ())

    def known_for_pattern(self, pattern: str, *, exclude: set[int] | None = None,
                          touched_files: Iterable[str] = (), phase: str | None = None) -> Memory | None:
        """The best memory whose text contains every term of the search pattern.

        "Best" is the retrieval pipeline's rank with the session's phase and the files it has
        touched so far (graph path, context boost); SQL by confidence only when the search
        finds no memory containing every term.
        """
        terms = [t for t in re.split(r"[^\w]+", pattern) if len(t) >= 3][:6]
        if not terms:
            return None
        skip = set(exclude or ())
        wanted = [t.casefold() for t in terms]
        for m in self.search(" ".join(terms), limit=5, phase=phase, touched_files=touched_files,
                             min_confidence=0.6):
            text = m.content.casefold()
            if m.id not in skip and all(t in text for t in wanted):
                return m
        q = MemoryQuery(text=" ".join(terms), min_confidence=0.6)
        where, params = q.where()
        ids = sorted(skip)[:500]
        if ids:
            where += f" AND id NOT IN ({','.join('?' * len(ids))})"
            params += ids
        found = self._select(f"{where} AND {_INJECTABLE}", params, "confidence DESC", 1)
        return found[0] if found else None

    def workflow_recipes(self, task: str, limit: int = 3) -> list[str]:
        """Recipe memories matching the task (as ``#id ...``, citable), then learned tool sequences."""
        out = [f"#{m.id} {m.content}" for m in self.recipe_memories(task, limit)]
        if len(out) < limit:
            out += self.learned_recipes(limit - len(out))
        return out[:limit]

    def recipe_memories(self, task: str, limit: int = 3) -> list[Memory]:
        """Recipe memories matching the task, else the most trusted ones."""
        mems = self.search(task, limit=limit, types=[MemoryType.WORKFLOW_RECIPE.value]) if task.strip() else []
        if not mems:
            mems = self._select(f"{_INJECTABLE} AND type = 'workflow_recipe'", [], "confidence DESC", limit)
        return mems[:limit]

    def learned_recipes(self, limit: int = 3) -> list[str]:
        """Tool sequences that worked in several sessions (cross_session.recipes), one line each."""
        if limit <= 0:
            return []
        from desktop.memory.observer.cross_session import recipes

        return [f"{' → '.join(r['steps'])} (worked in {r['sessions']} sessions, {r['success_rate']:.0%} success)"
                for r in recipes(self._conn())[:limit]]

    def work_state(self, limit: int = 3) -> list[Memory]:
        """Newest work-state memories."""
        return self._select(f"{_INJECTABLE} AND type = 'work_state'", [], "id DESC", limit)

    def conflicts(self, memories: list[Memory]) -> list[tuple[Memory, Memory]]:
        """The core's conflict detector over these memories (same stance, opposite polarity, same subject)."""
        from desktop.memory.lifecycle.conflicts import conflicting_pairs

        return conflicting_pairs(memories)

    def prefetch_candidates(self, task: str) -> list[tuple[str, float]]:
        """(file, score) a session on ``task`` should read first, best first: ``observer.prefetch``'s ranker.

        The ranker weighs history (recent and all-time share), the last session's edits, the
        task's words and the files it names, and what the session start knows (slash-command
        text, handoff notes, git state); files no longer in the project are left out.
        """
        from desktop.memory.observer.prefetch import prefetch_plan
        from desktop.memory.observer.start_context import start_context

        root = self.project.info.root
        context = start_context(task, root, home=Path.home())
        items = prefetch_plan(self._conn(), task, PREFETCH_RANKED, exclude_missing_under=str(root), context=context)
        return [(i.file, i.score) for i in items]

    def calibration_factor(self, task: str) -> float:
        """The recorded actual/planned step ratio of past overruns (the highest of the 5 most trusted).

        Only measured numbers count: the observer stores ``planned`` and ``actual`` on a
        step-overrun memory. A memory's wording never sets the factor.
        """
        mems = self._select(f"{_INJECTABLE} AND type = 'task_calibration'", [], "confidence DESC", 5)
        best = 1.0
        for m in mems:
            meta = m.metadata or {}
            try:
                planned, actual = float(meta.get("planned") or 0), float(meta.get("actual") or 0)
            except (TypeError, ValueError):
                continue
            if planned > 0 and actual > 0:
                best = max(best, actual / planned)
        return best

    def analyze_impact(self, target: str, depth: int = 3) -> dict[str, Any]:
        """Through the project's GraphService (built on first use)."""
        graph = self._graph or self.project.graph
        return dict(graph.analyze_impact(target, depth))

    def record_access(self, memory_ids: Iterable[int]) -> None:
        """Queued on the writer; never waited for on the agent's hot path."""
        ids = sorted(set(memory_ids))
        if ids:
            self.project.memories.record_access(ids)


class TimedMemoryAccess:
    """Wraps a MemoryAccess: each call gives up after ``timeout`` s and returns a neutral answer."""

    _DEFAULTS: ClassVar[dict[str, Callable[[], Any]]] = {
        "search": list, "always_inject": list, "scoped": list, "gotchas_for": list, "warnings_for": list,
        "tests_habit": list, "guess_note": str,
        "known_for_pattern": lambda: None, "workflow_recipes": list, "recipe_memories": list,
        "learned_recipes": list, "work_state": list,
        "conflicts": list, "prefetch_candidates": list, "calibration_factor": lambda: 1.0,
        "analyze_impact": lambda: {"error": "memory_timeout", "message": "The code graph did not answer in time."},
        "record_access": lambda: None,
    }

    def __init__(self, inner: Any, *, timeout: float = MEMORY_TIMEOUT_S, workers: int = 4) -> None:
        """``inner`` is any MemoryAccess."""
        self.inner = inner
        self.timeout = timeout
        self.timeouts = 0
        self.failures = 0
        self._pool = cf.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="engram-memory")

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.inner, name)
        if name not in self._DEFAULTS:
            return target

        def call(*args: Any, **kwargs: Any) -> Any:
            fut = self._pool.submit(target, *args, **kwargs)
            try:
                return fut.result(self.timeout)
            except cf.TimeoutError:
                self.timeouts += 1
                log.warning("memory call %s timed out after %.1f s; carrying on without memory", name,
                            self.timeout)
            except Exception:
                self.failures += 1
                log.exception("memory call %s failed; carrying on without memory", name)
            return self._DEFAULTS[name]()
        return call

    def close(self) -> None:
        """Stop the worker threads (calls still running finish in the background)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
