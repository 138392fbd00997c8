"""The one SQL spelling of "a live memory", for every query that needs it.

``LIVE_SQL``: not deprecated (code chunks included: search and embedding index them).
``LIVE_MEMORY_SQL``: not deprecated and not a code chunk, what users and agents call a memory.
Partial indexes in ``schema.py`` keep their own text: a migration is frozen once shipped.
"""

from __future__ import annotations

from typing import Final

__all__ = ["LIVE_MEMORY_SQL", "LIVE_SQL", "live", "live_memory"]

LIVE_SQL: Final = "deprecated = 0"
LIVE_MEMORY_SQL: Final = "deprecated = 0 AND type <> 'code'"


def live(alias: str = "") -> str:
    """:data:`LIVE_SQL` for the ``memories`` table under ``alias`` (``live("m")`` -> ``m.deprecated = 0``)."""
    return f"{alias}.deprecated = 0" if alias else LIVE_SQL


def live_memory(alias: str = "") -> str:
    """:data:`LIVE_MEMORY_SQL` for the ``memories`` table under ``alias``."""
    return f"{alias}.deprecated = 0 AND {alias}.type <> 'code'" if alias else LIVE_MEMORY_SQL
