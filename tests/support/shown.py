"""Put memories in the injection ledger as a hook would have shown them (feedback counts only those)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from desktop.agents.hooks.ledger import record_shown


def show(db: Any, session_id: str, memory_ids: Iterable[int], *, agent: str = "claude-code",
         event: str = "prompt") -> None:
    """Record that ``session_id`` was shown ``memory_ids`` (waits for the write)."""
    record_shown(db, session_id, agent, event, list(memory_ids), "test").result(10)
