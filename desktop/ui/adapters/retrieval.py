"""Search with explanations, for the browser's "why was this retrieved" and Ask Memory.

When the core's retrieval facade (desktop.memory.retrieval) is present its answer
is used as is; until then a small local ranker stands in: full-text match order,
confidence, recency, source trust and pinning, each reported as a score part so
the UI can always show *why* a memory came back. Runs on pool threads only.
"""

from __future__ import annotations

import importlib
import logging
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from desktop.memory.store.rows import MemoryQuery
from desktop.memory.text.tokens import count_tokens
from desktop.memory.types import Memory

log = logging.getLogger("engram.ui")

SOURCE_TRUST = {"user_taught": 1.0, "imported": 0.9, "agent_explicit": 0.8, "commit_auto": 0.75,
                "qa_auto": 0.7, "mcp_auto": 0.7, "observer_inferred": 0.6, "code_index": 0.6}
WEIGHTS = {"bm25": 0.45, "confidence": 0.2, "recency": 0.1, "source_trust": 0.15, "pinned": 0.1}


@dataclass
class Hit:
    """One retrieved memory with its total score and the parts that make it up."""

    memory: Memory
    score: float
    parts: dict[str, float] = field(default_factory=dict)


@dataclass
class Answer:
    """Ask Memory's answer: text (may be empty with no LLM) and the cited hits."""

    text: str
    hits: list[Hit]
    used_llm: bool = False


def _facade() -> Any | None:
    try:
        return importlib.import_module("desktop.memory.retrieval")
    except ImportError:
        return None


def _age_days(stamp: str, now: datetime) -> float:
    try:
        then = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return 365.0
    return max(0.0, (now - then).total_seconds() / 86400)


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[^\w]+", text.lower()) if w]


def _overlap(terms: set[str], content: str) -> float:
    # Share of the query's words found in the memory: a keyword score a person can check.
    words = set(_words(content))
    return sum(1 for t in terms if t in words or any(w.startswith(t) for w in words)) / len(terms)


def search(project: Any, text: str, *, limit: int = 20) -> list[Hit]:
    """Ranked memories for `text`, each with a score breakdown (pool thread)."""
    facade = _facade()
    explain = getattr(facade, "search_explained", None) if facade else None
    if callable(explain):
        try:
            return [Hit(r.memory, float(r.score), dict(r.parts)) for r in explain(project, text, limit=limit)]
        except Exception:  # a facade still being built must not break the panel
            log.exception("retrieval facade failed; using the local ranker")
    query = MemoryQuery(text=text.strip() or None, statuses=["active", "needs_review"])
    memories = project.memories.list(query, limit=max(limit * 3, 30),
                                     order="confidence" if text.strip() else "recent")
    terms = {t for t in _words(text) if len(t) > 1}
    now = datetime.now(UTC)
    hits = []
    for m in memories:
        parts = {
            "bm25": _overlap(terms, m.content) if terms else 0.0,
            "confidence": float(m.confidence),
            "recency": math.exp(-_age_days(m.last_accessed_at or m.updated_at or m.created_at, now) / 60),
            "source_trust": SOURCE_TRUST.get(m.source, 0.6),
            "pinned": 1.0 if m.pinned else 0.0,
        }
        weighted = {k: round(v * WEIGHTS[k], 4) for k, v in parts.items()}
        hits.append(Hit(m, round(sum(weighted.values()), 4), weighted))
    hits.sort(key=lambda h: -h.score)
    return hits[:limit]


def explain(project: Any, memory: Memory, text: str) -> Hit | None:
    """The score breakdown of one memory for a query (None when it does not match)."""
    for hit in search(project, text, limit=60):
        if hit.memory.id == memory.id:
            return hit
    return None


def ask(project: Any, question: str, *, llm: Any | None = None, limit: int = 8) -> Answer:
    """Answer a question from memory; with no LLM, the ranked memories and their citations."""
    facade = _facade()
    asker = getattr(facade, "ask", None) if facade else None
    if callable(asker) and llm is not None:
        try:
            result = asker(project, question, llm=llm)
            return Answer(result.text, [Hit(h.memory, h.score, dict(h.parts)) for h in result.hits], True)
        except Exception:
            log.exception("Ask Memory facade failed; showing ranked memories")
    hits = search(project, question, limit=limit)
    return Answer("", hits, False)


def tokens_of(memories: list[Memory]) -> int:
    """Token estimate of memories' text (what injecting them costs, or saves rediscovering)."""
    return sum(count_tokens(m.content) for m in memories)
