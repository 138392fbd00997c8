"""The one composition root: builds every service from Settings.

GUI, CLI and MCP server all start here. Nothing else reads global configuration;
services get what they need through their constructors.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.memory.projects import ProjectInfo, ProjectRegistry
from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database
from desktop.memory.store.writer import Clock, utc_now
from desktop.settings import Settings

log = logging.getLogger("engram.app")


@dataclass
class ProjectServices:
    """Everything that belongs to one open project."""

    info: ProjectInfo
    db: Database
    memories: MemoryService
    settings: Settings
    extras: dict[str, Any] = field(default_factory=dict)

    def close(self, progress: Callable[[str], None] | None = None) -> None:
        """Stop background work and close the database (queued writes are flushed).

        Blocking (a running index, a transcript flush and the writer's drain can take
        seconds): the app calls it off the GUI thread. ``progress(name)`` is called
        before each part stops (``"database"`` last), for a visible progress line.
        """
        for name, svc in reversed(list(self.extras.items())):
            closer = getattr(svc, "close", None)
            if callable(closer):
                if progress is not None:
                    progress(name)
                try:
                    closer()
                except Exception:
                    log.exception("closing %s failed", name)
        if progress is not None:
            progress("database")
        self.db.close()


class Engram:
    """Application-level container: settings, the project registry, open projects."""

    def __init__(self, settings: Settings | None = None, *, clock: Clock = utc_now) -> None:
        self.settings = settings or Settings.load()
        self.clock = clock
        self.registry = ProjectRegistry(self.settings.data_dir)

    def open_project(self, folder: Path | str, *, remember: bool = True, maintain: bool = True,
                     check: bool = True) -> ProjectServices:
        """Open (creating if needed) the database of the project in `folder`.

        Every door (app, CLI, MCP, agent runs) opens projects here, so every door gets
        the same upkeep: with ``maintain`` (the default) memories written while the
        project is open are checked for conflicts and anchored to the files they name,
        and closing the project finishes that work first. ``maintain=False`` is for
        read-only inspection (``engram doctor``). ``check=False`` skips the whole-file integrity
        check (hooks, which open the database on every agent event; see Database).

        Raises CorruptDatabaseError, NewerDatabaseError, ReadOnlyLocationError as
        known errors; the caller decides how to word them.
        """
        info = self.registry.prepare(folder)
        db = Database(info.db_path, clock=self.clock, check=check).open()
        if remember:
            self.registry.remember(info.root)
        log.info("opened project %s (%s)", info.name, info.db_path)
        project = ProjectServices(info=info, db=db, memories=MemoryService(db), settings=self.settings)
        if maintain:
            from desktop.memory.lifecycle.maintenance import start_maintenance

            try:
                start_maintenance(project)
            except Exception:  # upkeep is optional; the project works without it
                log.exception("could not start memory upkeep")
        return project


def build_graph_service(project: ProjectServices, **options: Any) -> Any:
    """The project's code-graph service (indexer, watcher, impact queries), created on first use.

    Kept in ``project.extras['graph']`` so closing the project stops its watcher.
    """
    from desktop.memory.graph.service import build_graph_service as build

    return build(project, **options)


def build_search_service(project: ProjectServices, **options: Any) -> Any:
    """The project's SearchService (hybrid retrieval), created once and kept in ``project.extras['search']``.

    Starts the background embedding indexer unless ``start_indexer=False``; closing the
    project stops it. Options: ``provider``, ``start_indexer``, ``reranker``, ``hyde``, ``slo``.
    """
    from desktop.memory.retrieval.service import build_search_service as build

    return build(project, **options)


def novelty_embedder(settings: Settings) -> Any:
    """What tells the observer a lesson is one it already holds: the configured embedding
    provider, else (no model installed) a hashing embedder so near-duplicates are still caught."""
    from desktop.memory.observer.novelty import HashingEmbedder

    try:
        from desktop.memory.embedding.detect import detect_provider

        provider = detect_provider(settings)
        if provider.available():
            return provider
    except Exception:  # the observer must work without an embedding model
        log.warning("no embedding provider for novelty; using the hashing embedder")
    return HashingEmbedder()


def observer_for(project: ProjectServices, *, embedder: Any | None = None) -> Any:
    """The project's transcript ingestor (created once, kept in ``project.extras["observer"]``).

    Novelty uses ``embedder`` if given, else the configured embedding provider, else
    (no model installed) a hashing embedder so near-duplicates are still caught.
    """
    known = project.extras.get("observer")
    if known is not None:
        return known
    from desktop.memory.lifecycle.control import gated_promoter, project_promotion_preset
    from desktop.memory.observer.ingest import Ingestor
    from desktop.memory.observer.novelty import Novelty

    if embedder is None:
        embedder = novelty_embedder(project.settings)
    # The lifecycle gate honours the project's auto-memory opt-out and quarantines
    # auto-promoted memories as candidates until an agent uses them. The promotion preset
    # of the project's trust settings is read at every promotion, here and only here, so
    # every door (app sessions, engram run/ingest, hooks, engram serve) promotes alike.
    promoter = gated_promoter(project.db, novelty=Novelty(embedder),
                              preset=lambda: project_promotion_preset(project.db))
    ingestor = Ingestor(project.db, promoter,
                        project_dir=project.info.root, synthesizer=_model_synthesizer(project))
    project.extras["observer"] = ingestor
    return ingestor


def _model_synthesizer(project: ProjectServices) -> Any | None:
    """Model-written candidate memories, whenever Settings name a model (else the rules alone learn).

    The model is the one the settings name at each session (``ConfiguredModel``): a choice made
    in Settings, by this process or another door, applies without reopening the project.
    """
    from desktop.agents.json_model import ConfiguredModel
    from desktop.memory.lifecycle.control import auto_memory_enabled, gate_items
    from desktop.memory.observer.model_synthesis import ModelSynthesizer

    model = ConfiguredModel(project.settings)
    project.extras["synthesis_model"] = model  # closed with the project
    return ModelSynthesizer(project.db, model, gate=lambda items: gate_items(project.db, items),
                            enabled=lambda: auto_memory_enabled(project.db) and model.available())



def start_project_services(project: ProjectServices, *, learn_from_transcripts: bool = True,
                           home: Path | None = None) -> dict[str, Any]:
    """Everything an open project runs in the background, each part optional.

    Conflict detection and anchoring on write (already running since open_project),
    the code graph brought up to date and watched, the hybrid search with its
    embedding indexer, and learning from the agents already installed: past Claude Code / Codex / Gemini
    sessions of this project are imported once, then new and growing transcripts are
    watched. Slow (seconds): call it off the GUI thread. Returns what started.
    """
    started: dict[str, Any] = {}
    from desktop.memory.lifecycle.maintenance import keep_graph_live, start_maintenance

    upkeep: dict[str, Any] = {}
    try:  # already running since open_project: this only looks the services up
        upkeep = start_maintenance(project)
    except Exception:
        log.exception("could not start upkeep")
    for name, start in (("conflicts", lambda: upkeep["lifecycle"]),
                        ("anchors", lambda: upkeep["anchors"]),
                        ("graph", lambda: keep_graph_live(project)),
                        ("search", lambda: build_search_service(project)),
                        ("team", lambda: team_sync_for(project))):
        try:
            started[name] = start()
        except Exception:  # each service is optional; the app works without it
            log.exception("could not start %s", name)
    started["recovered"] = recover_crashed_sessions(project)
    if learn_from_transcripts:
        started.update(_learn_from_installed_agents(project, home))
    return started


# A checkpoint not saved for this long belongs to a session that crashed: hook-observed
# sessions checkpoint after every tool call, and Engram's own agent every few steps.
STALE_CHECKPOINT_S = 2 * 3600.0


def recover_crashed_sessions(project: ProjectServices, *, older_than_s: float = STALE_CHECKPOINT_S) -> list[Any]:
    """Finalise and promote the sessions a crashed run left with only a checkpoint.

    Only checkpoints older than ``older_than_s`` (a session in another process may still be
    running); nothing when the project's auto-memory is off. Returns the promotion results.
    """
    from desktop.memory.lifecycle.control import auto_memory_enabled

    try:
        if not auto_memory_enabled(project.db):
            return []
        from desktop.memory.observer.ingest import CheckpointStore

        # Usually none: look before building the ingestor (embedding provider, model synthesiser).
        if not CheckpointStore(project.db).pending(older_than_s=older_than_s):
            return []
        return list(observer_for(project).recover(older_than_s=older_than_s))
    except Exception:  # recovery is best effort: a bad checkpoint must not stop the project opening
        log.exception("recovering crashed sessions failed")
        return []


def team_sync_for(project: ProjectServices) -> Any:
    """The project's background team sync (push/pull with its PostgreSQL server), or None when not in a team.

    Kept in ``project.extras['team']``; closing the project stops it.
    """
    from desktop.memory.team.service import start_team_sync

    return start_team_sync(project)


def _learn_from_installed_agents(project: ProjectServices, home: Path | None) -> dict[str, Any]:
    from desktop.memory.lifecycle.control import auto_memory_enabled
    from desktop.memory.observer.watcher import TranscriptWatcher, watch_roots

    if not auto_memory_enabled(project.db):
        return {}
    out: dict[str, Any] = {}
    try:
        ingestor = observer_for(project)
        out["imported"] = ingestor.ingest_project(home)
        if "transcript_watcher" not in project.extras:
            watcher = TranscriptWatcher(ingestor, watch_roots(project.info.root, home))
            watcher.start()
            project.extras["transcript_watcher"] = watcher
        out["watcher"] = project.extras["transcript_watcher"]
    except Exception:
        log.exception("learning from installed agents' transcripts failed")
    return out


def idle_maintenance(project: ProjectServices) -> dict[str, Any]:
    """Work for when the app is idle: pruning (at most once a day) and the staleness check against the code."""
    from desktop.memory.lifecycle.maintenance import anchor_unanchored
    from desktop.memory.lifecycle.pruning import prune_when_idle
    from desktop.memory.lifecycle.staleness import check_staleness

    out: dict[str, Any] = {}
    try:
        future = prune_when_idle(project.db)
        out["pruned"] = future.result() if future is not None else None
        out["anchored"] = anchor_unanchored(project.db, project.info.root)
        out["staleness"] = check_staleness(project.db, project.info.root)
    except Exception:
        log.exception("idle maintenance failed")
    return out
