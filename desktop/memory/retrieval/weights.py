"""Query-type detection and the weight tables of the scoring stage (phase, source trust, decay).

Values follow the reference design (V5 section 7); everything multiplicative is
kept near 1 so that it re-orders close calls and never buries a clearly
relevant memory under a loosely relevant but "trusted" one.
"""

from __future__ import annotations

import functools
import math
import re
from datetime import UTC, datetime

from desktop.memory.types import DEFAULT_HALF_LIFE_DAYS, Memory

__all__ = [
    "PATH_WEIGHTS",
    "PHASE_WEIGHTS",
    "SOURCE_TRUST",
    "decayed_confidence",
    "detect_query_type",
    "parse_time",
    "quality_multipliers",
]

# Weighted fusion per query type (path -> weight). Identifier queries are
# lexical by nature; semantic ones lean on the embedding; structural ones on
# the graph. Lexical keeps a large share everywhere: on conversational and code
# memories alike it is the strongest single path measured.
PATH_WEIGHTS: dict[str, dict[str, float]] = {
    "identifier": {"bm25": 0.6, "dense": 0.25, "graph": 0.15},
    "semantic": {"bm25": 0.6, "dense": 0.4, "graph": 0.1},
    "structural": {"bm25": 0.3, "dense": 0.2, "graph": 0.5},
}
# The design's RRF weights, used by the plain weighted-RRF fusion mode.
RRF_WEIGHTS: dict[str, dict[str, float]] = {
    "identifier": {"bm25": 0.5, "graph": 0.3, "dense": 0.2},
    "semantic": {"dense": 0.5, "bm25": 0.25, "graph": 0.25},
    "structural": {"graph": 0.6, "bm25": 0.25, "dense": 0.15},
}

PHASE_WEIGHTS: dict[str, dict[str, float]] = {
    "define": {"workflow_recipe": 1.4, "dead_end": 1.2, "requirement": 1.2, "decision": 1.1,
               "task_calibration": 1.1, "gotcha": 0.8, "error_pattern": 0.8},
    "implement": {"gotcha": 1.4, "error_pattern": 1.3, "causal_dependency": 1.2, "pattern": 1.1,
                  "dead_end": 1.2, "prefetch_pattern": 1.1, "code": 1.1},
    "validate": {"error_pattern": 1.4, "e2e_observation": 1.4, "requirement": 1.2, "work_unit_outcome": 1.1},
    "refine": {"error_pattern": 1.3, "gotcha": 1.2, "dead_end": 1.2, "pattern": 1.0},
    "explore": {"module_insight": 1.4, "decision": 1.2, "pattern": 1.1, "causal_dependency": 1.0, "code": 1.1},
    "reflect": {"work_unit_outcome": 1.4, "task_calibration": 1.3, "dead_end": 1.1},
}

SOURCE_TRUST: dict[str, float] = {
    "user_taught": 1.4, "agent_explicit": 1.2, "qa_auto": 1.1, "mcp_auto": 1.0, "commit_auto": 1.0,
    "imported": 1.0, "code_index": 1.0, "observer_inferred": 0.85, "team": 1.0,
}
_LOG1P_100 = math.log1p(100)
_TRUST_NORM = 1.2  # trust is divided by this so agent-explicit memories keep their fused score

# A path is looked for from the start of a word only: ``[\w-]+/`` tried at every position of a long
# word backtracks over the rest of it each time (a pasted 100 kB prompt took 37 s); the strings that
# match are the same, since a path inside a word is also one from the word's start.
_IDENTIFIER = re.compile(r"[a-z][A-Z]|[A-Za-z0-9]_[A-Za-z0-9]|(?<![\w-])[\w-]+/[\w.-]+|"
                         r"\w\.(?:py|ts|tsx|js|rs|go|java|kt|rb|c|h|cpp|hpp|cs|md|json|toml|yaml|yml|sql)\b|"
                         r"::|\(\)|#[A-Za-z_]")
_STRUCTURAL = re.compile(r"\b(?:depend\w*|import\w*|call(?:s|ers|ed by)?|impact\w*|used by|uses|"
                         r"who uses|references?|inherit\w*|subclass\w*|neighbou?r\w*)\b", re.IGNORECASE)


def detect_query_type(query: str, *, recent_tools: tuple[str, ...] = ()) -> str:
    """``identifier`` (camelCase, snake_case, paths, calls), ``structural`` (dependency words or a
    recent graph tool call) or ``semantic`` (everything else)."""
    if _IDENTIFIER.search(query):
        return "identifier"
    if any(t in ("analyzeImpact", "getDependencies", "graph_impact", "graph_dependencies") for t in recent_tools):
        return "structural"
    if _STRUCTURAL.search(query):
        return "structural"
    return "semantic"


@functools.lru_cache(maxsize=65536)
def parse_time(value: str | None) -> datetime | None:
    """Parse the store's ISO timestamps (``...Z``); None when absent or malformed.

    Cached: the same memories' timestamps are parsed for query after query.
    """
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _days_since(value: str | None, now: datetime) -> float:
    if not value:
        return 0.0  # never used (most memories): no parse, no cache lookup
    when = parse_time(value)
    if when is None:
        return 0.0
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (now - when).total_seconds() / 86400.0)


def decayed_confidence(memory: Memory, now: datetime) -> float:
    """Confidence halved every half-life since last use; pinned memories and decisions never decay."""
    if memory.pinned:
        return memory.confidence
    half_life = memory.decay_half_life_days
    if half_life is None:
        half_life = DEFAULT_HALF_LIFE_DAYS.get(memory.type)
    if not half_life:
        return memory.confidence
    days = _days_since(memory.last_accessed_at or memory.created_at, now)
    return memory.confidence * 0.5 ** (days / half_life)


def quality_multipliers(memory: Memory, phase: str | None, now: datetime) -> dict[str, float]:
    """The multiplicative factors applied to a memory's relevance, by name (all near 1)."""
    out: dict[str, float] = {}
    if phase:
        out["phase"] = PHASE_WEIGHTS.get(phase, {}).get(memory.type, 1.0)
    out["trust"] = SOURCE_TRUST.get(memory.source, 1.0) / _TRUST_NORM
    # Confidence matters, but a 0.5-confidence exact answer should still beat a vague 0.9 one.
    out["confidence"] = 0.6 + 0.4 * decayed_confidence(memory, now)
    recency = math.exp(-_days_since(memory.last_accessed_at, now) / 30.0)
    frequency = math.log1p(memory.access_count) / _LOG1P_100
    out["usage"] = 1.0 + 0.08 * recency + 0.07 * min(1.0, frequency)
    if memory.stale_at:
        out["stale"] = 0.7
    if memory.pinned:
        out["pinned"] = 1.1
    return out
