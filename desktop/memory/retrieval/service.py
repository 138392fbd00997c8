"""SearchService: the one retrieval API for GUI, CLI, MCP and agents, and its construction.

Usage::

    search = project.search                          # built once; starts the embedding indexer
    resp = search.search("why is login slow", limit=8, phase="implement", explain=True)
    ctx = search.pack(resp.results, 1500, "implement")
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from desktop.memory.embedding.base import EmbeddingProvider
from desktop.memory.retrieval.llm_stages import HydeWriter, Reranker
from desktop.memory.retrieval.packing import pack as pack_results
from desktop.memory.retrieval.pipeline import RetrievalPipeline
from desktop.memory.retrieval.slo import SloMonitor
from desktop.memory.retrieval.types import PackedContext, SearchResponse, SearchResult

if TYPE_CHECKING:
    from desktop.memory.embedding.indexer import EmbeddingIndexer
    from desktop.memory.embedding.service import EmbeddingService
    from desktop.memory.service import MemoryService
    from desktop.memory.store.database import Database

__all__ = ["SearchService", "build_search_service"]

log = logging.getLogger("engram.retrieval")


class SearchService:
    """Hybrid memory search of one project, with its embedding service and indexer."""

    def __init__(self, db: Database, memories: MemoryService, pipeline: RetrievalPipeline, *,
                 embeddings: EmbeddingService | None = None, indexer: EmbeddingIndexer | None = None) -> None:
        """Prefer :func:`build_search_service`; this wires already-built parts together."""
        self.db = db
        self.memories = memories
        self.pipeline = pipeline
        self.embeddings = embeddings
        self.indexer = indexer
        self._closed = False

    def search(self, query: str, *, limit: int = 10, types: list[str] | None = None,
               files: list[str] | None = None, modules: list[str] | None = None,
               scope: list[str] | str | None = None, min_confidence: float | None = None,
               exclude_ids: Sequence[int] = (), phase: str | None = None, touched_files: Sequence[str] = (),
               mode: str = "reactive", explain: bool = False, pack_tokens: int | None = None,
               inject: bool = False, code: bool = False) -> SearchResponse:
        """Search memories (see :class:`~desktop.memory.retrieval.types.SearchRequest`).

        The project's code index is searched only when asked (``code=True``, or ``types``
        naming ``code``): a question is answered from what was taught and learned, and a
        project's thousands of code chunks never crowd those few memories out.

        ``inject=True`` means the results are being handed to an agent: their use is
        recorded (``access_count``, ``last_accessed_at``) - only the packed ones when
        packing ran. Plain searches (browsing, the CLI) record nothing.
        """
        resp = self.pipeline.search(query, limit=limit, types=types, files=files, modules=modules, scope=scope,
                                    min_confidence=min_confidence, exclude_ids=tuple(exclude_ids), phase=phase,
                                    touched_files=tuple(touched_files), mode=mode, explain=explain,
                                    pack_tokens=pack_tokens, code=code)
        if inject:
            ids = resp.packed.memory_ids if resp.packed is not None else resp.ids
            if ids:
                self.memories.record_access(ids, source="retrieval")
        return resp

    @staticmethod
    def pack(results: Sequence[SearchResult], budget_tokens: int | None = None,
             phase: str | None = None) -> PackedContext:
        """Pack results into a token budget (default: the phase's), grouped by file, with citations.

        Static: packing needs no index, so the agent's injections use it without a service.
        """
        return pack_results(results, budget_tokens, phase)

    def sync_vectors(self, *, timeout_s: float | None = None, progress: Any = None) -> int:
        """Embed, now and on this thread, every memory without a vector (the CLI calls this)."""
        if self.embeddings is None:
            return 0
        deadline = time.monotonic() + timeout_s if timeout_s is not None else None
        return int(self.embeddings.sync(deadline=deadline, progress=progress))

    @property
    def degraded(self) -> bool:
        """True while the SLO monitor has the pipeline degraded."""
        return self.pipeline.slo.degraded

    def close(self) -> None:
        """Stop the indexer and the search workers (safe to call twice)."""
        if self._closed:
            return
        self._closed = True
        if self.indexer is not None:
            self.indexer.close()
        self.pipeline.close()  # with its LLM stages' HTTP clients
        closer = getattr(getattr(self.embeddings, "provider", None), "close", None)
        if callable(closer):
            try:
                closer()
            except Exception:  # closing HTTP pools must not fail a project close
                log.debug("closing the embedding provider failed", exc_info=True)


def build_search_service(db: Database, memories: MemoryService, provider: EmbeddingProvider, *,
                         start_indexer: bool = True, reranker: Reranker | None = None, hyde: HydeWriter | None = None,
                         slo: SloMonitor | None = None) -> SearchService:
    """A SearchService over ``db`` embedding with ``provider`` (``Project.search`` builds and keeps one).

    With ``start_indexer`` a background thread keeps vectors current; without it call
    :meth:`SearchService.sync_vectors` before searching (what the CLI does). ``reranker``
    and ``hyde`` are the optional LLM stages the project's model factory chose.
    """
    from desktop.memory.embedding.indexer import EmbeddingIndexer
    from desktop.memory.embedding.service import EmbeddingService
    from desktop.memory.graph.queries import GraphQueries

    embeddings = EmbeddingService(db, provider)
    try:
        if embeddings.open_space() is None:
            log.warning("dense search off until %s answers", provider.model_id)
    except Exception:  # search must work without any embedding model
        log.exception("embedding space could not be opened; dense search off")
    pipeline = RetrievalPipeline(db, embeddings, graph=GraphQueries(db), reranker=reranker, hyde=hyde, slo=slo)
    indexer = EmbeddingIndexer(embeddings).start() if start_indexer else None
    return SearchService(db, memories, pipeline, embeddings=embeddings, indexer=indexer)
