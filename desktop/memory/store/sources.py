"""The observer rows a memory was learned from, deleted with it (hard and emergency delete)."""

from __future__ import annotations

from typing import Any

from desktop.memory.store.writer import Tx

SOURCE_SQL = (
    # What the observer kept about the signal a memory came from: its count row and, for a
    # learned error, the error pattern quoting the message. Deleted with the memory so the
    # text it was learned from goes too.
    "DELETE FROM observer_signal_counts WHERE memory_id IN ({ids}) OR signal_key IN "
    "(SELECT json_extract(metadata, '$.signal_key') FROM memories WHERE id IN ({ids}) AND json_valid(metadata))",
    "DELETE FROM observer_error_patterns WHERE id IN (SELECT substr(json_extract(metadata, '$.signal_key'), 13) "
    "FROM memories WHERE id IN ({ids}) AND json_valid(metadata) "
    "AND json_extract(metadata, '$.signal_key') LIKE 'error_retry:%')",
)


def drop_sources(tx: Tx, ids_sql: str, params: list[Any]) -> None:
    """Delete the observer rows a memory was learned from (``ids_sql`` selects the memory ids)."""
    for sql in SOURCE_SQL:
        tx.execute(sql.format(ids=ids_sql), params * sql.count("{ids}"))
