"""JSON from outside (transcripts, imports, MCP) with size and depth limits checked before parsing.

``json.loads`` of a 100,000-deep ``[[[[...`` line raises RecursionError, which no
``except ValueError`` catches: one hostile line aborted a whole import. Here the
depth is measured first on the text itself (string literals removed, brackets
counted), and every failure is a ``ValueError``, so the existing per-line error
handling reports it and carries on.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

MAX_DEPTH = 64
MAX_CHARS = 16 * 1024 * 1024  # one transcript line or record; a whole export has its own limit
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(r"[\[\]{}]")


class JSONLimitError(ValueError):
    """The JSON text is larger or deeper than Engram accepts."""


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting of a JSON text (string contents ignored)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return text.count("[") + text.count("{")  # cannot be deeper than the number of openers
    steps = (1 if b in "[{" else -1 for b in _BRACKET.findall(_STRING.sub("", text)))
    return max(accumulate(steps, initial=0))


def loads(text: str | bytes, *, max_chars: int = MAX_CHARS, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` with limits; every failure (too big, too deep, bad JSON) is a ValueError."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")  # UnicodeDecodeError is a ValueError too
    if len(text) > max_chars:
        raise JSONLimitError(f"too large ({len(text)} characters, at most {max_chars})")
    if nesting_depth(text) > max_depth:
        raise JSONLimitError(f"nested too deeply (more than {max_depth} levels)")
    try:
        return json.loads(text)
    except RecursionError as exc:  # belt and braces: the count above should have stopped it
        raise JSONLimitError("nested too deeply") from exc
