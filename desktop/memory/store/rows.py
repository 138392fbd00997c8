"""Mapping between `memories` rows and `Memory` objects, and the shared filter query."""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field, fields
from typing import Any

from desktop.digests import sha256
from desktop.memory.store.live import LIVE_SQL
from desktop.memory.text.lazy_re import lazy
from desktop.memory.types import Memory, MemoryStatus

JSON_LIST_FIELDS = ("tags", "related_files", "related_modules", "provenance_session_ids",
                    "provenance", "relations", "impacted_node_ids")
JSON_DICT_FIELDS = ("code_anchors", "metadata")
BOOL_FIELDS = ("needs_review", "user_verified", "pinned", "deprecated", "candidate")
_MEMORY_FIELDS = {f.name for f in fields(Memory)}
# Columns that are not Memory fields are ignored when mapping.
MEMORY_COLUMNS = [f.name for f in fields(Memory)]

_PUNCT = lazy(r"[^\w\s]+", re.UNICODE)
_SPACE = lazy(r"\s+")


def fingerprint(content: str) -> str:
    """Normalised-content hash: case, spacing, punctuation and Unicode forms don't make a new memory."""
    text = unicodedata.normalize("NFKC", content).casefold()
    text = _SPACE.sub(" ", _PUNCT.sub(" ", text)).strip()
    return sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def row_to_memory(row: dict[str, Any]) -> Memory:
    """Build a Memory from a row dict (JSON columns decoded, flags as bools)."""
    values = dict(row)
    for key in values.keys() - _MEMORY_FIELDS:  # columns that are not Memory fields
        del values[key]
    for key, decode in _DECODER_ITEMS:
        if key in values:
            values[key] = decode(values[key])
    if len(values) < len(_MEMORY_FIELDS):
        return Memory(**values)  # a partial row: the dataclass fills (and checks) the rest
    # A whole row names every field: filling __dict__ skips the dataclass __init__ of 41 keyword
    # arguments, half of this function's time (search builds a Memory per returned result).
    memory = object.__new__(Memory)
    memory.__dict__.update(values)
    return memory


def _json_list(value: Any) -> Any:
    return json.loads(value) if value and value != "[]" else []


def _json_dict(value: Any) -> Any:
    return json.loads(value) if value and value != "{}" else {}


def _json_or_none(value: Any) -> Any:
    return json.loads(value) if value else None


_DECODERS: dict[str, Any] = {**dict.fromkeys(JSON_LIST_FIELDS, _json_list),
                             **dict.fromkeys(JSON_DICT_FIELDS, _json_dict),
                             "work_unit_ref": _json_or_none, **dict.fromkeys(BOOL_FIELDS, bool)}
_DECODER_ITEMS = tuple(_DECODERS.items())


def decode_column(key: str, value: Any) -> Any:
    """One column's stored value as Python: JSON columns decoded, flags as bools."""
    decode = _DECODERS.get(key)
    return value if decode is None else decode(value)


def to_column(name: str, value: Any) -> Any:
    """Encode one Memory field for its column."""
    if name in JSON_LIST_FIELDS or name in JSON_DICT_FIELDS or name == "work_unit_ref":
        if not value and value is not None:
            return "[]" if name in JSON_LIST_FIELDS else "{}"
        return None if value is None and name == "work_unit_ref" else json.dumps(
            value if value is not None else ([] if name in JSON_LIST_FIELDS else {}), ensure_ascii=False)
    if name in BOOL_FIELDS:
        return 1 if value else 0
    return value


@dataclass
class MemoryQuery:
    """Filters shared by list, count, the browser and the CLI. Empty means no filter.

    The code index is not a memory anyone taught: its chunks are left out unless
    asked for (``code=True``, or ``types`` naming ``code``), so every list and count
    a person sees is of memories.
    """

    types: list[str] = field(default_factory=list)
    scopes: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)
    text: str | None = None
    ids: list[int] = field(default_factory=list)
    pinned: bool | None = None
    min_confidence: float | None = None
    external_id: str | None = None
    code: bool = False

    def where(self) -> tuple[str, list[Any]]:
        """SQL WHERE clause (without the keyword) and its parameters."""
        from desktop.memory.text.tokens import fts_match_query

        clauses: list[str] = []
        params: list[Any] = []

        def any_of(column: str, values: list[Any]) -> None:
            clauses.append(f"{column} IN ({','.join('?' * len(values))})")
            params.extend(values)

        if self.statuses:
            parts = [_STATUS_SQL[s] for s in self.statuses if s in _STATUS_SQL]
            clauses.append("(" + " OR ".join(parts or ["0"]) + ")")
        else:
            clauses.append(LIVE_SQL)
        if self.types:
            any_of("type", self.types)
        elif not self.code:
            clauses.append("type <> 'code'")
        if self.scopes:
            any_of("scope", self.scopes)
        if self.sources:
            any_of("source", self.sources)
        if self.ids:
            any_of("id", self.ids)
        if self.pinned is not None:
            clauses.append("pinned = ?")
            params.append(1 if self.pinned else 0)
        if self.min_confidence is not None:
            clauses.append("confidence >= ?")
            params.append(self.min_confidence)
        if self.external_id is not None:
            clauses.append("external_id = ?")
            params.append(self.external_id)
        if self.files:
            clauses.append(f"id IN (SELECT memory_id FROM memory_files WHERE file_path IN "
                           f"({','.join('?' * len(self.files))}))")
            params.extend(self.files)
        if self.modules:
            clauses.append(f"id IN (SELECT memory_id FROM memory_modules WHERE module IN "
                           f"({','.join('?' * len(self.modules))}))")
            params.extend(self.modules)
        if self.text and self.text.strip():
            match = fts_match_query(self.text, "and")
            if match is None:
                clauses.append("0")
            else:
                clauses.append("id IN (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?)")
                params.append(match)
        return " AND ".join(clauses) or "1", params


_STATUS_SQL = {
    MemoryStatus.ACTIVE.value:
        "(deprecated = 0 AND stale_at IS NULL AND candidate = 0 AND needs_review = 0)",
    MemoryStatus.NEEDS_REVIEW.value: "(deprecated = 0 AND needs_review = 1)",
    MemoryStatus.STALE.value: "(deprecated = 0 AND stale_at IS NOT NULL)",
    MemoryStatus.CANDIDATE.value: "(deprecated = 0 AND candidate = 1)",
    MemoryStatus.DEPRECATED.value: "(deprecated = 1)",
}

ORDERS = {
    "recent": "id DESC",
    "oldest": "id ASC",
    "confidence": "confidence DESC, id DESC",
    "accessed": "last_accessed_at DESC, id DESC",
}
