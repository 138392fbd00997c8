"""Hybrid retrieval: BM25 + dense + graph candidates, fusion and scoring, rerank/HyDE, packing.

Names are loaded on first use (PEP 562): the pipeline imports numpy, and commands
that only need ``retrieval.types`` (the CLI's parser, hooks) must not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.memory.lazy import lazy_getattr

if TYPE_CHECKING:
    from desktop.memory.retrieval.packing import pack
    from desktop.memory.retrieval.pipeline import RetrievalPipeline
    from desktop.memory.retrieval.service import SearchService, build_search_service
    from desktop.memory.retrieval.slo import SloMonitor
    from desktop.memory.retrieval.types import (
        Explanation,
        PackedContext,
        PackedItem,
        SearchRequest,
        SearchResponse,
        SearchResult,
    )

_WHERE = {
    "pack": "packing", "RetrievalPipeline": "pipeline", "SearchService": "service",
    "build_search_service": "service", "SloMonitor": "slo", "Explanation": "types", "PackedContext": "types",
    "PackedItem": "types", "SearchRequest": "types", "SearchResponse": "types", "SearchResult": "types",
}

__all__ = [
    "Explanation",
    "PackedContext",
    "PackedItem",
    "RetrievalPipeline",
    "SearchRequest",
    "SearchResponse",
    "SearchResult",
    "SearchService",
    "SloMonitor",
    "build_search_service",
    "pack",
]

__getattr__ = lazy_getattr(__name__, _WHERE)
