"""One open project: the object every door (app, CLI, MCP, hooks, warm service, agents) calls.

The role Anki's ``Collection`` plays: the database and its one writer, the memory
service, the preferences, and the services built on them (search, code graph,
observer, team sync, upkeep watchers), each typed and built on first use, closed
with the project. Models come from the injected :class:`~desktop.memory.models.ModelFactory`,
so the core never imports the agents. Every action a person takes on a project is a
method here, with one implementation whatever the door (see :mod:`desktop.memory.actions`).

The composition root (``desktop/composition.py``) loads the user's settings once and
builds a Project; nothing else reads configuration.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol, TypeVar, cast

from desktop.memory.preferences import Preferences
from desktop.memory.projects import InstanceLock, ProjectInfo
from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database

if TYPE_CHECKING:
    from desktop.memory.actions import ExportResult
    from desktop.memory.embedding.base import EmbeddingProvider
    from desktop.memory.graph.service import GraphService
    from desktop.memory.lifecycle.anchoring import AnchorWatcher
    from desktop.memory.lifecycle.conflict_store import ConflictWatcher
    from desktop.memory.lifecycle.feedback import FeedbackReport
    from desktop.memory.lifecycle.portable import ImportReport
    from desktop.memory.models import ModelFactory
    from desktop.memory.observer.ingest import Ingestor
    from desktop.memory.observer.novelty import Embedder
    from desktop.memory.observer.watcher import TranscriptWatcher
    from desktop.memory.retrieval.llm_stages import HydeWriter, Reranker
    from desktop.memory.retrieval.service import SearchService
    from desktop.memory.retrieval.slo import SloMonitor
    from desktop.memory.store.memory_ops import AddResult
    from desktop.memory.team.engine import TeamSync
    from desktop.memory.team.state import TeamState
    from desktop.settings import Settings

log = logging.getLogger("engram.project")

T = TypeVar("T")


class Closable(Protocol):
    """A part of the project that stops with it."""

    def close(self) -> None:
        """Stop background work; queued writes are flushed by the database afterwards."""
        ...


class Project:
    """An open project: its database, memories, preferences and lazily built services."""

    def __init__(self, info: ProjectInfo, db: Database, settings: Settings, models: ModelFactory) -> None:
        """Wire an open database; services start on first use (see the properties)."""
        self.info = info
        self.db = db
        self.settings = settings
        self.models = models
        self.memories = MemoryService(db)
        self.preferences = Preferences(db)
        #: True when another Engram window holds this project (see :meth:`lock_instance`).
        self.open_elsewhere = False
        self._guard = threading.Lock()
        self._building: dict[str, threading.Lock] = {}
        self._made: dict[str, object] = {}     # each part built once, by name
        self._parts: dict[str, Closable] = {}  # what stops with the project, in creation order
        self._search: SearchService | None = None
        self._graph: GraphService | None = None
        self._observer: Ingestor | None = None
        self._team: TeamSync | None = None
        self._search_thread: threading.Thread | None = None
        self._closed = False

    # -- parts ---------------------------------------------------------------------------
    def _once(self, name: str, build: Callable[[], T], keep: Callable[[T], Closable | None]) -> T:
        """Build the part ``name`` once (one builder at a time per part; others wait for it)."""
        with self._guard:
            lock = self._building.setdefault(name, threading.Lock())
        with lock:
            if name in self._made:
                return cast(T, self._made[name])  # stored under its name by this method only
            part = build()
            closable = keep(part)
            with self._guard:
                closed = self._closed
                self._made[name] = part
                if closable is not None and not closed:
                    self._parts[name] = closable
            if closed and closable is not None:  # built on a thread that outlived the project
                closable.close()
            return part

    def hold(self, name: str, part: Closable) -> None:
        """Close ``part`` with the project (before the parts made earlier); at once if it is closed."""
        with self._guard:
            closed = self._closed
            if not closed:
                self._parts[name] = part
        if closed:
            part.close()

    def part(self, name: str) -> Closable | None:
        """A part already running (None when it has not been built)."""
        return self._parts.get(name)

    @property
    def conflicts(self) -> ConflictWatcher:
        """Conflict detection on write (started at open by every door that may write)."""
        from desktop.memory.lifecycle.conflict_store import ConflictWatcher

        return self._once("lifecycle", lambda: ConflictWatcher(self.db).start(), lambda w: w)

    @property
    def anchors(self) -> AnchorWatcher:
        """Anchoring on write: memories naming files get the code they are about."""
        from desktop.memory.lifecycle.anchoring import AnchorWatcher

        return self._once("anchors", lambda: AnchorWatcher(self.db, self.info.root).start(), lambda w: w)

    def start_upkeep(self) -> None:
        """Conflict checks and anchoring on write (idempotent); they close after every other part."""
        _ = self.conflicts, self.anchors

    @property
    def graph(self) -> GraphService:
        """The code graph service (indexer, watcher, impact queries); not started until asked."""
        return self.build_graph()

    def build_graph(self, **options: Any) -> GraphService:
        """The code graph service; ``options`` (depth, chunks, debounce) apply to the first build only."""
        from desktop.memory.graph.service import GraphService

        def build() -> GraphService:
            self._graph = GraphService(self.db, self.info.root, **options)
            return self._graph
        return self._once("graph", build, lambda g: g)

    def keep_graph_live(self) -> GraphService:
        """Bring the code graph up to date in the background and watch the files."""
        graph = self.graph
        graph.start(watch=True)
        return graph

    @property
    def search(self) -> SearchService:
        """Hybrid search with its embedding indexer (built on first use: loads a model, seconds)."""
        return self.build_search()

    def build_search(self, *, provider: EmbeddingProvider | None = None, start_indexer: bool = True,
                     reranker: Reranker | None = None, hyde: HydeWriter | None = None,
                     slo: SloMonitor | None = None) -> SearchService:
        """The search service; the options apply to the first build only (tests, the CLI's synchronous use)."""
        from desktop.memory.retrieval.service import build_search_service

        def build() -> SearchService:
            stages = self.models.search_stages()
            self._search = build_search_service(
                self.db, self.memories, provider or self.models.embedding_provider(), start_indexer=start_indexer,
                reranker=reranker or stages[0], hyde=hyde or stages[1], slo=slo)
            return self._search
        return self._once("search", build, lambda s: s)

    def search_if_built(self) -> SearchService | None:
        """The search service when it is already built, else None (a hook never waits for a model)."""
        return self._search

    def prewarm_search(self, *, on_ready: Callable[[SearchService], None] | None = None) -> None:
        """Build the search service on a background thread (idempotent); ``on_ready`` runs there after."""
        with self._guard:
            if self._search is not None or self._search_thread is not None:
                return
            self._search_thread = threading.Thread(target=self._build_search_now, args=(on_ready,),
                                                   name="engram-search-build", daemon=True)
            self._search_thread.start()

    def _build_search_now(self, on_ready: Callable[[SearchService], None] | None) -> None:
        try:
            search = self.search
            if on_ready is not None:
                on_ready(search)
        except Exception:  # no model, no vectors: keyword search still answers
            log.exception("could not start the search service; using keyword search")

    def wait_search(self, timeout: float = 60.0) -> bool:
        """Wait for :meth:`prewarm_search` to finish (tests, callers that can afford it)."""
        self.prewarm_search()
        thread = self._search_thread
        if thread is not None:
            thread.join(timeout)
        return self._search is not None

    @property
    def observer(self) -> Ingestor:
        """The transcript ingestor and live-session learner of this project."""
        return self.build_observer()

    def build_observer(self, *, embedder: Embedder | None = None) -> Ingestor:
        """The observer; ``embedder`` (novelty) applies to the first build only."""
        from desktop.memory.project_services import build_ingestor

        def build() -> Ingestor:
            self._observer = build_ingestor(self, embedder)
            return self._observer
        return self._once("observer", build, lambda _i: None)

    @property
    def team(self) -> TeamSync | None:
        """The background team sync, started when the project has joined a team (else None)."""
        from desktop.memory.team.service import start_team_sync

        with self._guard:
            lock = self._building.setdefault("team", threading.Lock())
        with lock:
            if self._team is None:
                self._team = start_team_sync(self.db)
                if self._team is not None:
                    self.hold("team", self._team)
            return self._team

    def team_if_started(self) -> TeamSync | None:
        """The team sync when it is running (its status and last error), else None; starts nothing."""
        return self._team

    def watch_transcripts(self, home: Path | None = None) -> TranscriptWatcher:
        """Learn from agents' transcripts as they are written (the app's background learning)."""
        from desktop.memory.observer.watcher import TranscriptWatcher, watch_roots

        def build() -> TranscriptWatcher:
            watcher = TranscriptWatcher(self.observer, watch_roots(self.info.root, home))
            watcher.start()
            return watcher
        return self._once("transcript_watcher", build, lambda w: w)

    def lock_instance(self) -> bool:
        """Take the app's instance lock; False (and :attr:`open_elsewhere`) when another app holds it."""
        lock = InstanceLock(self.info.db_path)
        self.open_elsewhere = not lock.acquire()
        self.hold("instance_lock", lock)
        return not self.open_elsewhere

    # -- actions (one implementation for every door) -----------------------------------
    def teach(self, content: str, *, actor: str = "user", reason: str | None = None,
              **fields: Any) -> Future[AddResult]:
        """What a person wrote down: a verified memory (``fields``: type, scope, related_files, tags, pinned...)."""
        from desktop.memory.actions import taught

        return self.memories.add(taught(content, **fields), actor=actor, reason=reason)

    def remember(self, text: str, *, actor: str = "user") -> Future[AddResult]:
        """``/remember TEXT`` typed in a session: a verified note saved at once."""
        from desktop.memory.actions import remembered

        return self.memories.add(remembered(text), actor=actor, reason="/remember")

    def correct(self, memory_id: int, kind: str, text: str = "", *, actor: str = "user") -> Future[int]:
        """Apply one correction kind in one write; the future gives the id now holding the right text."""
        from desktop.memory.lifecycle.correction import ApplyCorrection

        return self.db.writer.submit(ApplyCorrection(memory_id, kind, text, actor=actor))

    def confirm(self, memory_id: int, *, actor: str = "user", reason: str | None = None
                ) -> Future[FeedbackReport]:
        """A person says a memory is right: strengthened, out of quarantine and review."""
        from desktop.memory.lifecycle.feedback import confirm_right

        return confirm_right(self.db, memory_id, reason=reason, actor=actor)

    def flag(self, memory_id: int, *, actor: str = "user", reason: str | None = None) -> Future[FeedbackReport]:
        """Someone says a memory is wrong: weakened and marked for review."""
        from desktop.memory.lifecycle.feedback import flag_wrong

        return flag_wrong(self.db, memory_id, reason=reason, actor=actor)

    def export(self, fmt: str, out: Path | IO[str], *, limit: int = 200) -> ExportResult:
        """Export in ``fmt`` (json, markdown, claude-md, agents-md) to a file or a stream.

        Into a file, claude-md and agents-md replace only Engram's managed block: the user's
        own lines in CLAUDE.md / AGENTS.md are kept byte for byte. Blocking (pool thread).
        """
        from desktop.memory.actions import export_memories

        return export_memories(self, fmt, out, limit=limit)

    def import_file(self, path: Path, fmt: str | None = None, *, trusted: bool = False) -> ImportReport:
        """Import memories from a file or folder (format guessed from the name unless ``fmt``). Blocking."""
        from desktop.memory.lifecycle.formats import import_path

        return import_path(self.memories, path, fmt, trusted=trusted)

    def delete_all(self, *, actor: str = "user", reason: str | None = None) -> int:
        """Delete every memory for good and scrub the file; returns how many. Blocking (pool thread)."""
        from desktop.memory.lifecycle.control import delete_all

        return delete_all(self, actor=actor, reason=reason)

    def join_team(self, url: str, *, member: str | None = None, project_key: str | None = None) -> TeamState:
        """Connect to the team ``url`` logs in as (syncing starts with :attr:`team`). Blocking (network)."""
        from desktop.memory.team.service import default_project_key, join_team

        return join_team(self.db, url, member=member, project_key=project_key or default_project_key(self.info.root))

    def leave_team(self) -> bool:
        """Stop syncing and disconnect; the memories on this computer are kept. False if not in a team."""
        from desktop.memory.team.service import leave_team

        with self._guard:
            engine, self._team = self._team, None
            self._parts.pop("team", None)
        if engine is not None:
            engine.close()
        return leave_team(self.db)

    # -- closing --------------------------------------------------------------------------
    def close(self, progress: Callable[[str], None] | None = None) -> None:
        """Stop background work and close the database (queued writes are flushed).

        Blocking (a running index, a transcript flush and the writer's drain can take
        seconds): the app calls it off the GUI thread. ``progress(name)`` is called
        before each part stops (``"database"`` last), for a visible progress line.
        """
        with self._guard:
            self._closed = True
            parts = list(self._parts.items())
            self._parts.clear()
        for name, part in reversed(parts):
            if progress is not None:
                progress(name)
            try:
                part.close()
            except Exception:
                log.exception("closing %s failed", name)
        if progress is not None:
            progress("database")
        self.db.close()
