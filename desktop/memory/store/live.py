"""The one SQL spelling of "a live memory", and of "these memories", for every query that needs them.

``LIVE_SQL``: not deprecated (code chunks included: search and embedding index them).
``LIVE_MEMORY_SQL``: not deprecated and not a code chunk, what users and agents call a memory.
Partial indexes in ``schema.py`` keep their own text: a migration is frozen once shipped.
``IDS_IN`` with :func:`ids_param`: a set of memory ids as one JSON parameter.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Final

__all__ = ["IDS_IN", "LIVE_MEMORY_SQL", "LIVE_SQL", "ids_param", "live", "live_memory"]

LIVE_SQL: Final = "deprecated = 0"
LIVE_MEMORY_SQL: Final = "deprecated = 0 AND type <> 'code'"
# The ids go in one parameter, so a statement's text is the same whatever the ids and SQLite reuses
# its prepared form (an IN list of literals is parsed anew each time: ~35 us of a 50-id read), and
# any number of ids fits in one statement (no chunking under the variable limit).
IDS_IN: Final = "id IN (SELECT value FROM json_each(?))"


def ids_param(ids: Iterable[int]) -> str:
    """The ``?`` of :data:`IDS_IN`: the ids as a JSON array of integers."""
    return json.dumps([int(i) for i in ids])


def live(alias: str = "") -> str:
    """:data:`LIVE_SQL` for the ``memories`` table under ``alias`` (``live("m")`` -> ``m.deprecated = 0``)."""
    return f"{alias}.deprecated = 0" if alias else LIVE_SQL


def live_memory(alias: str = "") -> str:
    """:data:`LIVE_MEMORY_SQL` for the ``memories`` table under ``alias``."""
    return f"{alias}.deprecated = 0 AND {alias}.type <> 'code'" if alias else LIVE_MEMORY_SQL
