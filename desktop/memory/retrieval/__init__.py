"""Hybrid retrieval: BM25 + dense + graph candidates, fusion and scoring, rerank/HyDE, packing."""

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
