"""One schema for a memory record: types, ranges and sizes, the same at every door.

Import (JSONL, JSON restore, Markdown), MCP ``record_memory``, the CLI and the
agent's hooks all build a ``NewMemory`` (or restore columns) and pass them here
before anything is queued. A wrong type is refused with the field's name
("decay_half_life_days must be a number"), never stored to break a later search.
"""

from __future__ import annotations

import json
import math
from typing import Any

from desktop.memory.store.errors import ValidationError

SQL_INT_MAX = 2**63 - 1
MAX_LIST_ITEMS = 500
MAX_SHORT_TEXT = 2_000  # ids, paths, session ids, shas, module names
MAX_LONG_TEXT = 20_000  # methodology, context prefix
MAX_JSON_CHARS = 200_000  # metadata, relations, provenance, code anchors: dumped size
MAX_DEPTH = 32
MAX_HALF_LIFE_DAYS = 36_500.0

_STR_LISTS = ("tags", "related_files", "related_modules", "provenance_session_ids", "impacted_node_ids")
_SHORT = ("session_id", "commit_sha", "target_node_id", "chunk_type", "embedding_model_id", "external_id",
          "created_at", "citation_text")
_LONG = ("methodology", "context_prefix")
_DICT_LISTS = ("relations", "provenance")
_DICTS = ("metadata", "code_anchors")


def depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """Nesting depth of a JSON-like value, stopping early past ``limit`` (iterative: no recursion)."""
    stack = [(value, 1)]
    deepest = 0
    while stack:
        item, d = stack.pop()
        deepest = max(deepest, d)
        if deepest > limit:
            return deepest
        if isinstance(item, dict):
            stack.extend((v, d + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, d + 1) for v in item)
    return deepest


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValidationError(f"{name} must be a number.")
    if isinstance(value, int) and abs(value) > SQL_INT_MAX:
        raise ValidationError(f"{name} is out of range.")
    f = float(value)
    if not math.isfinite(f):
        raise ValidationError(f"{name} must be a finite number.")
    return f


def _json_sized(value: Any, name: str) -> None:
    if not value:
        return
    if depth(value) > MAX_DEPTH:
        raise ValidationError(f"{name} is nested too deeply (more than {MAX_DEPTH} levels).")
    try:
        dumped = json.dumps(value, ensure_ascii=False)
        dumped.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValidationError(f"{name} holds text that is not valid UTF-8 (a lone surrogate).") from exc
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValidationError(f"{name} is not JSON data.") from exc
    size = len(dumped)
    if size > MAX_JSON_CHARS:
        raise ValidationError(f"{name} is too large ({size} characters, at most {MAX_JSON_CHARS}).")


def _encodable(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _utf8(values: dict[str, Any]) -> None:
    """Refuse text SQLite cannot store (lone surrogates from a ``"\\ud800"`` escape).

    Plain text and lists of text are checked here; JSON fields in ``_json_sized``.
    """
    for name, value in values.items():
        if isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            bad = not all(_encodable(v) for v in ([value] if isinstance(value, str) else value))
        elif isinstance(value, (dict, list)) and value:
            try:  # nested data (unknown keys land in metadata): one dump finds any bad string
                bad = not _encodable(json.dumps(value, ensure_ascii=False, default=str))
            except (TypeError, ValueError, RecursionError) as exc:
                raise ValidationError(f"{name} is not JSON data.") from exc
        else:
            continue
        if bad:
            raise ValidationError(f"{name} holds text that is not valid UTF-8 (a lone surrogate).")


def check_fields(values: dict[str, Any]) -> None:
    """Raise ValidationError naming the first field of ``values`` with a wrong type, range or size."""
    if "confidence" in values and not 0.0 <= _number(values["confidence"], "confidence") <= 1.0:
        raise ValidationError("Confidence must be between 0 and 1.")
    _utf8(values)
    half = values.get("decay_half_life_days")
    if half is not None and not 0.0 < _number(half, "decay_half_life_days") <= MAX_HALF_LIFE_DAYS:
        raise ValidationError(f"decay_half_life_days must be between 0 and {MAX_HALF_LIFE_DAYS:.0f}.")
    for name in ("chunk_start_line", "chunk_end_line", "access_count", "id"):
        v = values.get(name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= SQL_INT_MAX):
            raise ValidationError(f"{name} must be a whole number from 0 to {SQL_INT_MAX}.")
    for name in _STR_LISTS:
        v = values.get(name)
        if v is None:
            continue
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise ValidationError(f"{name} must be a list of text.")
        if len(v) > MAX_LIST_ITEMS or any(len(x) > MAX_SHORT_TEXT for x in v):
            raise ValidationError(f"{name} is too long.")
    for name, limit in [(n, MAX_SHORT_TEXT) for n in _SHORT] + [(n, MAX_LONG_TEXT) for n in _LONG]:
        v = values.get(name)
        if v is not None and not isinstance(v, str):
            raise ValidationError(f"{name} must be text.")
        if isinstance(v, str) and len(v) > limit:
            raise ValidationError(f"{name} is too long ({len(v)} characters, at most {limit}).")
    for name in _DICT_LISTS:
        v = values.get(name)
        if v is None:
            continue
        if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
            raise ValidationError(f"{name} must be a list of objects.")
        _json_sized(v, name)
    for name in _DICTS:
        v = values.get(name)
        if v is None:
            continue
        if not isinstance(v, dict):
            raise ValidationError(f"{name} must be an object.")
        _json_sized(v, name)
    anchors = values.get("code_anchors")
    if isinstance(anchors, dict) and not all(isinstance(k, str) and isinstance(x, str) for k, x in anchors.items()):
        raise ValidationError("code_anchors must map file paths to text.")
    ref = values.get("work_unit_ref")
    if ref is not None:
        if not isinstance(ref, dict):
            raise ValidationError("work_unit_ref must be an object.")
        _json_sized(ref, "work_unit_ref")
    for name in ("pinned", "candidate", "needs_review", "user_verified", "deprecated"):
        v = values.get(name)
        if v is not None and not isinstance(v, (bool, int)):
            raise ValidationError(f"{name} must be true or false.")
