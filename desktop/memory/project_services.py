"""What an open project runs besides answering calls: its observer, background start-up, idle upkeep.

Every door builds these the same way through :class:`~desktop.memory.project.Project`:
the observer gets the project's gate (auto-memory opt-out, candidate quarantine, the
promotion preset read at each promotion) and, when the settings name a chat model, the
model that writes memories from each finished session.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop.memory.lifecycle.pruning import PruneReport
    from desktop.memory.lifecycle.staleness import StalenessReport
    from desktop.memory.models import ModelFactory
    from desktop.memory.observer.ingest import Ingestor, IngestReport
    from desktop.memory.observer.model_synthesis import ModelSynthesizer
    from desktop.memory.observer.novelty import Embedder
    from desktop.memory.observer.promotion import PromotionResult
    from desktop.memory.project import Project

log = logging.getLogger("engram.project")

# A checkpoint not saved for this long belongs to a session that crashed: hook-observed
# sessions checkpoint after every tool call, and Engram's own agent every few steps.
STALE_CHECKPOINT_S = 2 * 3600.0


def novelty_embedder(models: ModelFactory) -> Embedder:
    """What tells the observer a lesson is one it already holds: the configured embedding
    provider, else (no model installed) a hashing embedder so near-duplicates are still caught."""
    from desktop.memory.observer.novelty import HashingEmbedder

    try:
        provider = models.embedding_provider()
        if provider.available():
            return provider
    except Exception:  # the observer must work without an embedding model
        log.warning("no embedding provider for novelty; using the hashing embedder")
    return HashingEmbedder()


def build_ingestor(project: Project, embedder: Embedder | None = None) -> Ingestor:
    """The project's transcript ingestor, gated by its preferences, with the model synthesiser if any."""
    from desktop.memory.lifecycle.control import gated_promoter
    from desktop.memory.observer.ingest import Ingestor
    from desktop.memory.observer.novelty import Novelty

    # The promotion preset of the project's trust settings is read at every promotion, here and
    # only here, so every door (app sessions, engram run/ingest, hooks, engram serve) promotes alike.
    promoter = gated_promoter(project.db, novelty=Novelty(embedder or novelty_embedder(project.models)),
                              preset=project.preferences.promotion_preset, root=project.info.root)
    return Ingestor(project.db, promoter, project_dir=project.info.root, synthesizer=_synthesizer(project))


def _synthesizer(project: Project) -> ModelSynthesizer | None:
    """Model-written candidate memories, whenever the settings name a model (else the rules alone learn).

    Asked at each session: a model chosen while the project is open is used from the next one.
    """
    model = project.models.synthesis_model()
    if model is None:
        return None
    from desktop.memory.lifecycle.control import gate_items
    from desktop.memory.observer.model_synthesis import ModelSynthesizer

    project.hold("synthesis_model", model)
    return ModelSynthesizer(project.db, model, gate=lambda items: gate_items(project.db, items),
                            enabled=lambda: project.preferences.auto_memory() and model.available())


@dataclass
class Started:
    """What :func:`start_background` started (each part is optional: a failure is logged, not raised)."""

    started: list[str] = field(default_factory=list)
    recovered: list[PromotionResult] = field(default_factory=list)
    imported: list[IngestReport] = field(default_factory=list)
    watching: bool = False

    def learned(self) -> int:
        """Memories added from the past sessions imported at start."""
        return sum(r.added for r in self.imported if r.status == "imported")


def start_background(project: Project, *, learn_from_transcripts: bool = True, home: Path | None = None
                     ) -> Started:
    """Everything an open project runs in the background, each part optional.

    Conflict detection and anchoring on write (running since the project opened), the
    code graph brought up to date and watched, the hybrid search with its embedding
    indexer, team sync, sessions a crash left behind, and learning from the agents
    already installed: past Claude Code / Codex / Gemini sessions of this project are
    imported once, then new and growing transcripts are watched. Slow (seconds): call
    it off the GUI thread.
    """
    out = Started()
    for name, start in (("upkeep", project.start_upkeep), ("graph", project.keep_graph_live),
                        ("search", lambda: project.search), ("team", lambda: project.team)):
        try:
            start()
            out.started.append(name)
        except Exception:  # each service is optional; the app works without it
            log.exception("could not start %s", name)
    out.recovered = recover_crashed_sessions(project)
    if learn_from_transcripts and project.preferences.auto_memory():
        try:
            out.imported = project.observer.ingest_project(home)
            project.watch_transcripts(home)
            out.watching = True
        except Exception:
            log.exception("learning from installed agents' transcripts failed")
    return out


def recover_crashed_sessions(project: Project, *, older_than_s: float = STALE_CHECKPOINT_S
                             ) -> list[PromotionResult]:
    """Finalise and promote the sessions a crashed run left with only a checkpoint.

    Only checkpoints older than ``older_than_s`` (a session in another process may still be
    running); nothing when the project's auto-memory is off.
    """
    try:
        if not project.preferences.auto_memory():
            return []
        from desktop.memory.observer import journal
        from desktop.memory.observer.ingest import CheckpointStore

        # Usually none: look before building the ingestor (embedding provider, model synthesiser).
        if not CheckpointStore(project.db).pending(older_than_s=older_than_s) and \
                not journal.pending(project.db, older_than_s=older_than_s):
            return []
        return list(project.observer.recover(older_than_s=older_than_s))
    except Exception:  # recovery is best effort: a bad checkpoint must not stop the project opening
        log.exception("recovering crashed sessions failed")
        return []


@dataclass
class IdleWork:
    """What one idle pass did."""

    pruned: PruneReport | None = None
    anchored: int = 0
    staleness: StalenessReport | None = None


def idle_maintenance(project: Project) -> IdleWork:
    """Work for when the app is idle: pruning (at most once a day) and the staleness check against the code."""
    from desktop.memory.lifecycle.maintenance import anchor_unanchored
    from desktop.memory.lifecycle.pruning import prune_when_idle
    from desktop.memory.lifecycle.staleness import check_staleness

    out = IdleWork()
    try:
        future = prune_when_idle(project.db)
        out.pruned = future.result() if future is not None else None
        out.anchored = anchor_unanchored(project.db, project.info.root)
        out.staleness = check_staleness(project.db, project.info.root)
    except Exception:
        log.exception("idle maintenance failed")
    return out

