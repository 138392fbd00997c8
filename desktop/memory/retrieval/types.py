"""What a search takes and returns: requests, results with explanations, packed context."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from desktop.memory.types import Memory

__all__ = [
    "MODES",
    "PHASES",
    "Explanation",
    "PackedContext",
    "PackedItem",
    "SearchRequest",
    "SearchResponse",
    "SearchResult",
]

PHASES = ("define", "implement", "validate", "refine", "explore", "reflect")
MODES = ("reactive", "proactive")


@dataclass
class SearchRequest:
    """One search. Empty filters mean "no filter"; deprecated memories are never returned."""

    query: str
    limit: int = 10
    types: list[str] | None = None
    files: list[str] | None = None
    modules: list[str] | None = None
    scope: list[str] | None = None
    min_confidence: float | None = None
    exclude_ids: tuple[int, ...] = ()
    phase: str | None = None
    touched_files: tuple[str, ...] = ()
    mode: str = "reactive"
    explain: bool = False
    code: bool = True  # code-index chunks may be returned (a person's search asks for memories only)

    def validate(self) -> None:
        """Reject values that cannot be searched with (bad phase/mode/limit)."""
        if self.phase is not None and self.phase not in PHASES:
            raise ValueError(f"unknown phase {self.phase!r} (one of {', '.join(PHASES)})")
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r} (reactive or proactive)")
        if self.limit < 1:
            raise ValueError("limit must be at least 1")


@dataclass
class Explanation:
    """Why a memory ranks where it does: paths with ranks, partial scores, boosts and multipliers."""

    paths: dict[str, int] = field(default_factory=dict)        # path -> 1-based rank in that path
    raw: dict[str, float] = field(default_factory=dict)        # path -> raw score (bm25, cosine, graph)
    partial: dict[str, float] = field(default_factory=dict)    # path -> weighted normalised contribution
    rrf: float = 0.0
    relevance: float = 0.0
    boosts: dict[str, float] = field(default_factory=dict)     # additive boosts (context, graph, ...)
    multipliers: dict[str, float] = field(default_factory=dict)  # phase, trust, confidence, recency...
    query_type: str = ""
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (rounded for reading)."""
        data = asdict(self)
        for key in ("raw", "partial", "boosts", "multipliers"):
            data[key] = {k: round(v, 5) for k, v in data[key].items()}
        data["rrf"] = round(self.rrf, 6)
        data["relevance"] = round(self.relevance, 5)
        return data


@dataclass
class SearchResult:
    """One memory found, its final score and why."""

    memory: Memory
    score: float
    explanation: Explanation

    def to_dict(self, *, explain: bool = True) -> dict[str, Any]:
        """JSON view: id, external_id, type, content, score (and explanation)."""
        m = self.memory
        data: dict[str, Any] = {"id": m.id, "external_id": m.external_id, "type": m.type, "content": m.content,
                                "score": round(self.score, 6), "related_files": m.related_files,
                                "citation": m.citation()}
        if explain:
            data["explanation"] = self.explanation.to_dict()
        return data


@dataclass
class PackedItem:
    """One block of the packed context: one or more merged memories about the same file(s)."""

    memory_ids: list[int]
    text: str
    tokens: int
    file: str | None
    type: str


@dataclass
class PackedContext:
    """Memories packed into a token budget, grouped by file, each with its citation."""

    text: str
    items: list[PackedItem]
    tokens: int
    budget: int
    dropped_ids: list[int] = field(default_factory=list)

    @property
    def memory_ids(self) -> list[int]:
        """Every memory that made it into the context."""
        return [mid for item in self.items for mid in item.memory_ids]


@dataclass
class SearchResponse:
    """Results best first, the packed context (when asked), whether it degraded, per-stage timings (ms)."""

    results: list[SearchResult]
    packed: PackedContext | None = None
    degraded: bool = False
    timings: dict[str, float] = field(default_factory=dict)
    query_type: str = ""
    skipped: dict[str, str] = field(default_factory=dict)  # stage -> why it was skipped
    dense_method: str = ""  # "exact", "binary" (first pass + exact re-scoring), "sqlite-vec", ...

    @property
    def ids(self) -> list[int]:
        """Result ids in order."""
        return [r.memory.id for r in self.results]

    def to_dict(self, *, explain: bool = True) -> dict[str, Any]:
        """JSON view of the whole answer."""
        return {"results": [r.to_dict(explain=explain) for r in self.results], "degraded": self.degraded,
                "query_type": self.query_type, "timings_ms": {k: round(v, 2) for k, v in self.timings.items()},
                "skipped": self.skipped, "dense_method": self.dense_method}
