"""Decayed confidence: how much a memory is still worth, given how long it went unused.

A memory's stored ``confidence`` is its base value; decay is computed at read time
from ``last_accessed_at`` and the memory's half-life, so it never compounds and a
use (which moves ``last_accessed_at``) restores it at once. Pinned memories and
types without a half-life (decisions, preferences, requirements, code) never decay.

Everything here is pure: the clock is an argument, so retrieval, pruning and
tests agree on one formula. ``DECAYED_SQL`` is the same formula as SQL for
set-based passes over the whole table.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any, overload

from desktop.memory.types import DEFAULT_HALF_LIFE_DAYS, Memory

__all__ = [
    "DECAYED_SQL",
    "SOFT_DEPRECATE_HALF_LIVES",
    "days_between",
    "decayed_confidence",
    "half_life_for",
    "parse_ts",
]

# Past this many half-lives without use a memory is soft-deprecated (1/8 of its value left).
SOFT_DEPRECATE_HALF_LIVES = 3.0

# The formula of `decayed_confidence` for SQL; `:now` is an ISO timestamp parameter.
# max(0, ...) because a clock set backwards must not make a memory gain confidence.
DECAYED_SQL = (
    "(CASE WHEN pinned = 1 OR decay_half_life_days IS NULL OR decay_half_life_days <= 0 "
    "THEN confidence ELSE confidence * pow(0.5, max(0.0, julianday(:now) - julianday(last_accessed_at))"
    " / decay_half_life_days) END)"
)


def parse_ts(value: str | datetime | None) -> datetime | None:
    """Parse a stored ISO 8601 timestamp (``...Z`` or with offset) into an aware UTC datetime."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def days_between(earlier: str | datetime | None, later: datetime) -> float:
    """Days from `earlier` to `later`, never negative; 0 when `earlier` is unknown."""
    start = parse_ts(earlier)
    if start is None:
        return 0.0
    end = later if later.tzinfo else later.replace(tzinfo=UTC)
    return max(0.0, (end - start).total_seconds() / 86400.0)


def half_life_for(memory_type: str, override: float | None = None) -> float | None:
    """The half-life in days of a memory type (an explicit per-memory value wins); None = never decays."""
    if override is not None:
        return float(override) if override > 0 else None
    value = DEFAULT_HALF_LIFE_DAYS.get(memory_type)
    return None if value is None or math.isinf(value) else float(value)


@overload
def decayed_confidence(confidence: Memory, half_life_days: datetime, /) -> float: ...


@overload
def decayed_confidence(confidence: float, half_life_days: float | None,
                       last_accessed_at: str | datetime | None, pinned: bool, now: datetime) -> float: ...


def decayed_confidence(confidence: Any, half_life_days: Any = None, last_accessed_at: Any = None,
                       pinned: bool = False, now: datetime | None = None) -> float:
    """Confidence after exponential decay since the last use.

    Call as ``decayed_confidence(confidence, half_life_days, last_accessed_at, pinned, now)``
    or, for convenience, ``decayed_confidence(memory, now)``. Pinned memories and a
    missing/non-positive half-life return the confidence unchanged.
    """
    if isinstance(confidence, Memory):
        memory = confidence
        when = half_life_days if isinstance(half_life_days, datetime) else now
        if when is None:
            raise TypeError("decayed_confidence(memory, now) needs `now`")
        return decayed_confidence(memory.confidence, memory.decay_half_life_days,
                                  memory.last_accessed_at, memory.pinned, when)
    if now is None:
        raise TypeError("decayed_confidence needs `now` (inject the clock)")
    base = float(confidence)
    if pinned or half_life_days is None or float(half_life_days) <= 0:
        return base
    days = days_between(last_accessed_at, now)
    return base * math.pow(0.5, days / float(half_life_days))


def past_soft_deprecation(half_life_days: float | None, last_accessed_at: str | datetime | None,
                          pinned: bool, now: datetime) -> bool:
    """True when a memory went unused for more than three half-lives (the pruning rule)."""
    if pinned or half_life_days is None or half_life_days <= 0:
        return False
    return days_between(last_accessed_at, now) > SOFT_DEPRECATE_HALF_LIVES * float(half_life_days)
