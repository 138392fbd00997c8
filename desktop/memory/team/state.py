"""This project's team settings and sync progress, kept in the local database.

`team_state` is a key/value table (migration 0019). Reads use the caller's read
connection; every write is a WriteOp through the one writer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

from desktop.memory.store.writer import Tx, WriteOp
from desktop.memory.types import MemoryType

# Shared by default: lessons about the code a teammate would otherwise relearn.
# Personal by default: a person's preferences, their work in progress and the
# machine's own bookkeeping (prefetch, calibration, code chunks).
DEFAULT_SHARED_TYPES: tuple[str, ...] = (
    MemoryType.DECISION.value, MemoryType.GOTCHA.value, MemoryType.DEAD_END.value,
    MemoryType.PATTERN.value, MemoryType.ERROR_PATTERN.value, MemoryType.REQUIREMENT.value,
    MemoryType.MODULE_INSIGHT.value, MemoryType.WORKFLOW_RECIPE.value, MemoryType.CAUSAL_DEPENDENCY.value,
)
NEVER_SHARED_TYPES: frozenset[str] = frozenset({MemoryType.CODE.value})


@dataclass
class TeamState:
    """The project's team connection (no credentials: those live in the keyring)."""

    team_id: str = ""
    team_name: str = ""
    member_name: str = ""
    client_id: str = ""
    project_key: str = ""
    server: str = ""  # host/database only, for display
    shared_types: list[str] = field(default_factory=lambda: list(DEFAULT_SHARED_TYPES))
    cursor: int = 0
    last_sync_at: str = ""
    last_error_code: str = ""
    last_error: str = ""

    @property
    def joined(self) -> bool:
        """True when this project is connected to a team."""
        return bool(self.team_id)

    @property
    def keyring_name(self) -> str:
        """The keyring entry holding this team's connection string."""
        return keyring_name(self.team_id, self.client_id)


def keyring_name(team_id: str, client_id: str) -> str:
    """Keyring username for a team's connection string (per project database)."""
    return f"team-{team_id}-{client_id[:8]}"


_INT_KEYS = {"cursor"}
_JSON_KEYS = {"shared_types"}


def read_state(conn: Any) -> TeamState:
    """The state as stored (defaults when the project never joined)."""
    state = TeamState()
    for key, value in conn.execute("SELECT key, value FROM team_state").fetchall():
        if not hasattr(state, key):
            continue
        if key in _INT_KEYS:
            setattr(state, key, int(value))
        elif key in _JSON_KEYS:
            setattr(state, key, list(json.loads(value)))
        else:
            setattr(state, key, str(value))
    return state


def _encode(key: str, value: Any) -> str:
    if key in _JSON_KEYS:
        return json.dumps(list(value))
    return str(value)


class SaveTeamState(WriteOp[None]):
    """Set some state keys (an empty string value removes the key)."""

    name: ClassVar[str] = "team_save_state"

    def __init__(self, **values: Any) -> None:
        unknown = [k for k in values if not hasattr(TeamState, k) and k not in TeamState.__dataclass_fields__]
        if unknown:
            raise ValueError(f"unknown team state keys: {unknown}")
        self.values = values

    def apply(self, tx: Tx) -> None:
        """Upsert each key."""
        for key, value in self.values.items():
            if value == "" or value is None:
                tx.execute("DELETE FROM team_state WHERE key = ?", (key,))
            else:
                tx.execute("INSERT INTO team_state(key, value) VALUES (?, ?) "
                           "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, _encode(key, value)))
        tx.changed("team", "state")


class JoinLocal(WriteOp[int]):
    """Record the team and queue every memory for the first push (one transaction)."""

    name: ClassVar[str] = "team_join"

    def __init__(self, state: TeamState) -> None:
        self.state = state

    def apply(self, tx: Tx) -> int:
        """Write the state, clear leftovers of an earlier team, queue all memories."""
        tx.execute("DELETE FROM team_state")
        tx.execute("DELETE FROM team_links")
        tx.execute("DELETE FROM team_outbox")
        for key in TeamState.__dataclass_fields__:
            value = getattr(self.state, key)
            if value not in ("", None):
                tx.execute("INSERT INTO team_state(key, value) VALUES (?, ?)", (key, _encode(key, value)))
        tx.execute("INSERT INTO team_outbox(memory_id, op, queued_at) SELECT id, 'upsert', ? FROM memories "
                   "ORDER BY id", (tx.now,))
        queued = int(cast(int, tx.execute("SELECT count(*) FROM team_outbox").fetchall()[0][0]))
        tx.changed("team", "state")
        return queued


class LeaveLocal(WriteOp[None]):
    """Forget the team: state, links, queue and choices; the memories themselves stay."""

    name: ClassVar[str] = "team_leave"

    def apply(self, tx: Tx) -> None:
        """Clear every team table."""
        for table in ("team_state", "team_links", "team_outbox"):
            tx.execute(f"DELETE FROM {table}")
        tx.changed("team", "state")


class SetShared(WriteOp[None]):
    """A person's choice for one memory: shared with the team, personal, or back to the type policy."""

    name: ClassVar[str] = "team_set_shared"

    def __init__(self, memory_id: int, shared: bool | None) -> None:
        self.memory_id = memory_id
        self.shared = shared

    def apply(self, tx: Tx) -> None:
        """Store the choice and queue the memory so the push applies it."""
        if self.shared is None:
            tx.execute("DELETE FROM team_share WHERE memory_id = ?", (self.memory_id,))
        else:
            tx.execute("INSERT INTO team_share(memory_id, shared) VALUES (?, ?) ON CONFLICT(memory_id) "
                       "DO UPDATE SET shared = excluded.shared", (self.memory_id, int(self.shared)))
        _queue(tx, [self.memory_id])
        tx.changed("memory", "updated", [self.memory_id])


class SetSharedTypes(WriteOp[None]):
    """Change which memory types are shared; re-queues every memory so the push applies it."""

    name: ClassVar[str] = "team_set_shared_types"

    def __init__(self, types: list[str]) -> None:
        self.types = sorted(set(types) - NEVER_SHARED_TYPES)

    def apply(self, tx: Tx) -> None:
        """Save the policy and queue everything."""
        tx.execute("INSERT INTO team_state(key, value) VALUES ('shared_types', ?) ON CONFLICT(key) "
                   "DO UPDATE SET value = excluded.value", (json.dumps(self.types),))
        if tx.execute("SELECT 1 FROM team_state WHERE key='team_id'").fetchall():
            ids = [int(cast(int, r[0])) for r in tx.execute("SELECT id FROM memories").fetchall()]
            _queue(tx, ids)
        tx.changed("team", "state")


def _queue(tx: Tx, ids: list[int]) -> None:
    if not tx.execute("SELECT 1 FROM team_state WHERE key='team_id'").fetchall():
        return
    for mid in ids:
        tx.execute("DELETE FROM team_outbox WHERE memory_id = ? AND op = 'upsert'", (mid,))
        tx.execute("INSERT INTO team_outbox(memory_id, op, queued_at) VALUES (?, 'upsert', ?)", (mid, tx.now))
