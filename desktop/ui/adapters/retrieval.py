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
    multipliers: dict[str, float] = field(default_factory=dict)


@dataclass
class Answer:
    """Ask Memory's answer: text (may be empty with no LLM) and the cited hits."""

    text: str
    hits: list[Hit]
    used_llm: bool = False


USE_FACADE = True  # tests of the fallback ranker switch this off


def _facade() -> Any | None:
    if not USE_FACADE:
        return None
    try:
        return importlib.import_module("desktop.memory.retrieval")
    except ImportError:
        return None


def _from_facade(project: Any, text: str, limit: int) -> list[Hit] | None:
    """Search through the core's SearchService with explanations; None when it is unavailable."""
    facade = _facade()
    build = getattr(facade, "build_search_service", None) if facade else None
    if build is None or not text.strip():
        return None
    try:
        service = build(project)
        response = service.search(text, limit=limit, explain=True)
    except Exception:  # a facade still being built must not break the panel
        log.exception("retrieval facade failed; using the local ranker")
        return None
    hits = []
    for r in response.results:
        ex = r.explanation
        parts = {**{k: float(v) for k, v in ex.partial.items()}, **{k: float(v) for k, v in ex.boosts.items()}}
        hits.append(Hit(r.memory, float(r.score), parts, {k: float(v) for k, v in ex.multipliers.items()}))
    return hits


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


def _candidates(project: Any, text: str, n: int) -> list[Memory]:
    """Memories sharing any word with `text` (FTS5, OR of the terms), or the newest when no text."""
    from desktop.memory.text.tokens import fts_match_query

    match = fts_match_query(text, "or") if text.strip() else None
    if not match:
        return project.memories.list(MemoryQuery(statuses=["active", "needs_review"]), limit=n)
    ids = [r[0] for r in project.db.reads.conn().execute(
        "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?", (match, n * 2))]
    found = project.memories.get_many(ids)
    return [found[i] for i in ids if i in found and not found[i].deprecated][:n]


def search(project: Any, text: str, *, limit: int = 20) -> list[Hit]:
    """Ranked memories for `text`, each with a score breakdown (pool thread)."""
    found = _from_facade(project, text, limit)
    if found is not None:
        return found
    memories = _candidates(project, text, max(limit * 3, 30))
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
    """Answer a question from memory; with no LLM, the ranked memories and their citations.

    With a provider (desktop.agents Provider), the model writes a short answer that
    cites memories as [Memory #ID: brief]; the ranked hits are shown under it.
    """
    hits = search(project, question, limit=limit)
    if llm is None or not hits:
        return Answer("", hits, False)
    from desktop.agents.messages import ChatMessage

    context = "\n".join(f"{h.memory.citation()} {h.memory.content}" for h in hits)
    messages = [ChatMessage("system", "Answer from the project memories below only. Cite each memory you use "
                                      "exactly as [Memory #ID: brief]. Say so when they do not answer.\n\n"
                                      + context),
                ChatMessage("user", question)]
    try:
        turn = llm.chat(messages, [])
    except Exception as exc:  # the ranked memories are still an answer
        log.warning("Ask Memory model call failed: %s", exc)
        return Answer("", hits, False)
    return Answer(turn.text.strip(), hits, True)


def llm_from_settings(settings: Any) -> Any | None:
    """The chat provider chosen in Settings, or None (no model, no key, runtime absent). Pool thread."""
    name = getattr(settings, "llm_provider", "none")
    if name in ("", "none"):
        return None
    try:
        from desktop.agents.providers import make_provider

        return make_provider(name, settings=settings, model=getattr(settings, "llm_model", "") or "")
    except Exception as exc:
        log.info("no chat model for Ask Memory: %s", exc)
        return None


def tokens_of(memories: list[Memory]) -> int:
    """Token estimate of memories' text (what injecting them costs, or saves rediscovering)."""
    return sum(count_tokens(m.content) for m in memories)
