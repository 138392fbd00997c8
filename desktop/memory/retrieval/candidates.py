"""The candidate set of one search, light memory rows for scoring, and the filters.

Scoring needs only a dozen columns of a few hundred candidates; full
``Memory`` objects (every JSON column decoded) are built only for the results
returned, which keeps fusion within a couple of milliseconds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from types import MappingProxyType
from typing import Any

from desktop.memory.retrieval.types import Explanation, SearchRequest
from desktop.memory.store.connection import rows_as_dicts
from desktop.memory.store.live import IDS_IN, LIVE_SQL, ids_param
from desktop.memory.store.rows import row_to_memory
from desktop.memory.types import Memory, MemoryType

__all__ = ["CandidateSet", "LightMemory", "has_filters", "load_light", "passes_filters", "related_files"]

_LIGHT = ("id, type, source, confidence, pinned, scope, last_accessed_at, created_at, access_count, "
          "decay_half_life_days, stale_at, related_files, related_modules, session_id")


class CandidateSet:
    """Everything found for one query: per-path rankings, raw scores, relevance and explanations."""

    def __init__(self, paths: dict[str, list[tuple[int, float]]]) -> None:
        """``paths`` maps a path name to its (memory id, raw score) list, best first."""
        self.paths = {name: hits for name, hits in paths.items() if hits}
        self._ranks = {name: {mid: i + 1 for i, (mid, _s) in enumerate(hits)} for name, hits in self.paths.items()}
        self.raw: dict[str, dict[int, float]] = {}
        self.relevance: dict[int, float] = {}
        self.explanations: dict[int, Explanation] = {}
        self._explain: Callable[[int], Explanation] | None = None
        self.light: dict[int, Memory] = {}  # scoring rows read early (absent id: not live or not read)
        self.memo: dict[int, str] = {}  # contents read during this search, by id (read each once)
        self.sessions: dict[int, str | None] = {}  # session of each id read during this search

    def explain_with(self, build: Callable[[int], Explanation]) -> None:
        """Set how a scored candidate's explanation is built (lazily; forgets earlier ones)."""
        self._explain = build
        self.explanations = {}

    def explanation(self, memory_id: int) -> Explanation:
        """The candidate's explanation, built on first use."""
        ex = self.explanations.get(memory_id)
        if ex is None:
            ex = self._explain(memory_id) if self._explain is not None else Explanation()
            self.explanations[memory_id] = ex
        return ex

    def add_path(self, name: str, hits: list[tuple[int, float]]) -> None:
        """Add a late path (HyDE)."""
        if hits:
            self.paths[name] = hits
            self._ranks[name] = {mid: i + 1 for i, (mid, _s) in enumerate(hits)}

    def rank(self, path: str, memory_id: int) -> int:
        """1-based rank of the memory in ``path`` (0 when that path did not find it)."""
        return self._ranks.get(path, {}).get(memory_id, 0)

    @staticmethod
    def contents(conn: Any, ids: list[int]) -> dict[int, str]:
        """The content of each memory (for the reranker)."""
        if not ids:
            return {}
        rows = conn.execute(f"SELECT id, content FROM memories WHERE {IDS_IN}", (ids_param(ids),))
        return {int(i): str(c) for i, c in rows}

    @staticmethod
    def full_memories(conn: Any, ids: list[int]) -> dict[int, Memory]:
        """Complete Memory objects of the returned results."""
        if not ids:
            return {}
        cur = conn.execute(f"SELECT * FROM memories WHERE {IDS_IN}", (ids_param(ids),))
        return {int(r["id"]): row_to_memory(r) for r in rows_as_dicts(cur)}


@dataclass
class LightMemory(Memory):
    """A candidate with only the scoring columns; its JSON lists are decoded on first use."""

    files_json: str = "[]"
    modules_json: str = "[]"


# A light row is built by filling its __dict__ with the columns read: the dataclass __init__ of
# Memory's 41 fields cost ~8 us a row, a third of load_light for the few hundred candidates of a
# search. Every other field reads its class-level default: Memory's plain defaults, and for its list
# and dict fields an empty, immutable one set on LightMemory below (a tuple, a read-only mapping), so
# writing into one fails loudly instead of sharing state between rows; related_files/modules are
# assigned, not mutated.
for _field in fields(LightMemory):
    if _field.default is MISSING and _field.default_factory is not MISSING:
        setattr(LightMemory, _field.name, () if _field.default_factory is list else MappingProxyType({}))
del _field


def _light_memory(values: dict[str, Any]) -> LightMemory:
    """A LightMemory with ``values`` and every other field at its (read-only) default."""
    mem = object.__new__(LightMemory)
    mem.__dict__.update(values)
    return mem


def related_files(memory: Memory) -> list[str]:
    """The memory's related files, decoding a light candidate's JSON once."""
    raw = getattr(memory, "files_json", "[]")
    if not memory.related_files and raw and raw != "[]":
        memory.related_files = json.loads(raw)
        memory.files_json = "[]"  # type: ignore[attr-defined]
    return memory.related_files or []  # a light row's empty default is a tuple


def _related_modules(memory: Memory) -> list[str]:
    raw = getattr(memory, "modules_json", "[]")
    if not memory.related_modules and raw and raw != "[]":
        memory.related_modules = json.loads(raw)
        memory.modules_json = "[]"  # type: ignore[attr-defined]
    return memory.related_modules or []


def load_light(conn: Any, ids: list[int], *, decode: bool = True) -> dict[int, Memory]:
    """Live (not deprecated) candidates with just the columns scoring and filters need.

    With ``decode=False`` the JSON lists stay undecoded until :func:`related_files` asks
    (most candidates are scored and dropped without anyone looking at their files).
    """
    out: dict[int, Memory] = {}
    if not ids:
        return out
    rows = conn.execute(f"SELECT {_LIGHT} FROM memories WHERE {LIVE_SQL} AND {IDS_IN}", (ids_param(ids),))
    for (mid, typ, source, conf, pinned, scope, accessed, created, count, half, stale, files, mods,
         session) in rows:
        mem = _light_memory({
            "id": int(mid), "type": typ, "content": "", "source": source, "confidence": float(conf),
            "pinned": bool(pinned), "scope": scope, "last_accessed_at": accessed, "created_at": created,
            "access_count": int(count), "decay_half_life_days": half, "stale_at": stale,
            "session_id": session, "files_json": files or "[]", "modules_json": mods or "[]"})
        if decode:
            related_files(mem)
            _related_modules(mem)
        out[int(mid)] = mem
    return out


def has_filters(req: SearchRequest) -> bool:
    """Whether :func:`passes_filters` can reject anything for this request (keep the two in step)."""
    return bool(req.exclude_ids or req.types or req.scope or req.min_confidence is not None or req.files
                or req.modules or not req.code)


def passes_filters(conn: Any, memory: Memory, req: SearchRequest, light: dict[int, Memory]) -> bool:
    """Whether a (live) memory satisfies the request's filters."""
    if memory.id in req.exclude_ids:
        return False
    if not req.code and memory.type == MemoryType.CODE.value:
        return False
    if req.types and memory.type not in req.types:
        return False
    if req.scope and memory.scope not in req.scope:
        return False
    if req.min_confidence is not None and memory.confidence < req.min_confidence:
        return False
    if req.files:
        wanted = {f.replace("\\", "/") for f in req.files}
        if not any(f.replace("\\", "/") in wanted for f in related_files(memory)):
            return False
    return not (req.modules and not set(req.modules) & set(_related_modules(memory)))
