"""Shared helpers of the retrieval tests."""

from __future__ import annotations

from typing import Any

from desktop.memory.embedding.service import EmbeddingService
from desktop.memory.retrieval.pipeline import RetrievalPipeline
from desktop.memory.store.database import Database


def pipeline(db: Database, provider: Any, **kw: Any) -> tuple[RetrievalPipeline, EmbeddingService]:
    """An embedding service with every memory embedded, and a pipeline over it."""
    emb = EmbeddingService(db, provider)
    emb.sync()
    return RetrievalPipeline(db, emb, **kw), emb


def add(db: Database, *items: Any) -> list[int]:
    """Add memories (NewMemory or plain text) in one transaction and return their ids."""
    from desktop.memory.service import MemoryService
    from desktop.memory.store.memory_ops import NewMemory

    news = [i if isinstance(i, NewMemory) else NewMemory(content=i) for i in items]
    return [r.id for r in MemoryService(db).add_many(news).result()]
