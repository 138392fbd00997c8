"""SearchService: the one retrieval API for GUI, CLI, MCP and agents, and its construction.

Usage::

    search = build_search_service(project)          # starts the embedding indexer
    resp = search.search("why is login slow", limit=8, phase="implement", explain=True)
    ctx = search.pack(resp.results, 1500, "implement")
    search.close()
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from desktop.memory.retrieval.llm_stages import ChatReranker, HydeWriter, OllamaHyde, OllamaReranker, Reranker
from desktop.memory.retrieval.packing import pack as pack_results
from desktop.memory.retrieval.pipeline import RetrievalPipeline
from desktop.memory.retrieval.slo import SloMonitor
from desktop.memory.retrieval.types import PackedContext, SearchResponse, SearchResult

__all__ = ["SearchService", "build_search_service"]

log = logging.getLogger("engram.retrieval")


class SearchService:
    """Hybrid memory search of one project, with its embedding service and indexer."""

    def __init__(self, db: Any, memories: Any, pipeline: RetrievalPipeline, *, embeddings: Any | None = None,
                 indexer: Any | None = None) -> None:
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


def _llm_stages(settings: Any) -> tuple[Reranker | None, HydeWriter | None]:
    """Rerank (when ``extra.rerank``) with any configured LLM; HyDE only through Ollama (local, cheap)."""
    provider = getattr(settings, "llm_provider", "none")
    model = getattr(settings, "llm_model", "")
    extra = getattr(settings, "extra", {}) or {}
    if provider in ("openai", "anthropic") and model and extra.get("rerank"):
        return _chat_reranker(settings, provider, model, float(extra.get("llm_stage_timeout_s", 3.0))), None
    if provider != "ollama" or not model:
        return None, None
    host = getattr(settings, "ollama_host", "http://127.0.0.1:11434")
    timeout = float(extra.get("llm_stage_timeout_s", 3.0))
    reranker = OllamaReranker(host, model, timeout=timeout) if extra.get("rerank") else None
    hyde = OllamaHyde(host, model, timeout=timeout) if extra.get("hyde", True) else None
    return reranker, hyde


def _chat_reranker(settings: Any, provider: str, model: str, timeout: float) -> Reranker | None:
    """A reranker on the user's OpenAI-compatible or Anthropic model; None (logged) when it cannot be
    built (no key stored, no key store): search then simply runs without the stage."""
    from desktop.agents.providers import make_provider

    try:
        return ChatReranker(make_provider(provider, model=model, settings=settings, timeout=timeout))
    except Exception as exc:  # a missing key must not stop search from opening
        log.info("rerank off: %s", exc)
        return None


def build_search_service(project: Any, *, provider: Any | None = None, start_indexer: bool = True,
                         reranker: Reranker | None = None, hyde: HydeWriter | None = None,
                         slo: SloMonitor | None = None) -> SearchService:
    """The project's SearchService, created once and kept in ``project.extras['search']``.

    ``provider`` overrides the embedding provider chosen from the settings. With
    ``start_indexer`` a background thread keeps vectors current; without it call
    :meth:`SearchService.sync_vectors` before searching (what the CLI does).
    """
    known = project.extras.get("search")
    if known is not None:
        return known
    from desktop.memory.embedding.indexer import EmbeddingIndexer
    from desktop.memory.embedding.service import EmbeddingService

    if provider is None:
        from desktop.memory.embedding.detect import detect_provider

        provider = detect_provider(project.settings)
    embeddings: EmbeddingService | None = EmbeddingService(project.db, provider)
    try:
        if embeddings is not None and embeddings.open_space() is None:
            log.warning("dense search off until %s answers", provider.model_id)
    except Exception:  # search must work without any embedding model
        log.exception("embedding space could not be opened; dense search off")
    graph = None
    try:
        from desktop.memory.graph.queries import GraphQueries

        graph = GraphQueries(project.db)
    except Exception:  # the graph path is optional
        log.debug("graph queries unavailable", exc_info=True)
    cfg_rerank, cfg_hyde = _llm_stages(project.settings)
    pipeline = RetrievalPipeline(project.db, embeddings, graph=graph, reranker=reranker or cfg_rerank,
                                 hyde=hyde or cfg_hyde, slo=slo)
    indexer = EmbeddingIndexer(embeddings).start() if start_indexer and embeddings is not None else None
    service = SearchService(project.db, project.memories, pipeline, embeddings=embeddings, indexer=indexer)
    project.extras["search"] = service
    return service
