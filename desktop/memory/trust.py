"""Provenance decides trust, not the caller: who may change what, and what may reach an agent.

Every door (GUI, CLI, MCP server, the agent's memory tools, hooks) passes an
``actor`` to the core. This module is the one place that turns the actor into a
policy, so every door gets the same answer:

- Agent-facing actors (``mcp``, ``agent``, ``hook``, ...) cannot pin, unpin,
  forget, deprecate, restore, verify, edit or delete a memory a person taught or
  confirmed, and can never ``verify`` anything (verifying *is* a person's word).
- What an agent-facing actor records is a candidate: never user-taught, never
  pinned or verified, quarantined until reinforced, used without correction, or
  confirmed by the user.
- No injection path returns a candidate, a memory waiting for review, a stale or
  deprecated one, or a code chunk (:data:`INJECTABLE_SQL`, :func:`injectable`).
"""

from __future__ import annotations

from typing import Any

from desktop.memory.store.errors import EngramError
from desktop.memory.store.live import LIVE_SQL
from desktop.memory.types import MemorySource

# Actors that speak for a person at a keyboard. Everything else is treated as an agent
# or an automatic process: unknown actors get the stricter answer.
USER_ACTORS = frozenset({"user", "cli", "gui", "app"})
# Automatic processes of Engram itself (not reachable by an agent's words): they may
# maintain memories (decay, staleness, pruning, indexing) but are never a user's word.
SYSTEM_ACTORS = frozenset({"engram", "indexer", "observer", "import", "lifecycle", "pruning", "restore",
                           # Team sync applies what a teammate did on their machine (their own
                           # door already applied this policy there): never an agent's word here.
                           "team"})
# Agent-facing actors ("mcp", "agent", "hook") need no list: anything not above is one (fail closed).

# Actions on an existing memory an agent may not take when the memory is the user's.
PROTECTED_ACTIONS = frozenset({"pin", "unpin", "forget", "deprecate", "restore", "verify", "edit",
                               "hard_delete"})

INJECTABLE_SQL = f"{LIVE_SQL} AND candidate = 0 AND needs_review = 0 AND stale_at IS NULL AND type <> 'code'"
"""The one filter every injection path (T1-T4, MCP search, hooks, CLAUDE.md block) applies."""


class NotAllowedError(EngramError):
    """An agent-facing door asked for something only the user may do."""

    code = "not_allowed"


def is_user(actor: str) -> bool:
    """True when ``actor`` speaks for the person using Engram."""
    return actor in USER_ACTORS


def is_agent(actor: str) -> bool:
    """True for agent-facing doors, and for any actor this module does not know (fail closed)."""
    return actor not in USER_ACTORS and actor not in SYSTEM_ACTORS and not actor.startswith("team:")


def user_owned(row: dict[str, Any]) -> bool:
    """A memory the user taught, confirmed or pinned: only the user may change it."""
    return (row.get("source") == MemorySource.USER_TAUGHT.value or bool(row.get("user_verified"))
            or bool(row.get("pinned")))


def check_action(actor: str, action: str, row: dict[str, Any]) -> None:
    """Raise NotAllowedError when ``actor`` may not take ``action`` on the memory ``row``."""
    if not is_agent(actor):
        return
    if action == "verify":
        raise NotAllowedError("Only the user can confirm a memory.")
    if action in ("pin", "unpin") and (row.get("candidate") or row.get("needs_review")):
        raise NotAllowedError(f"Memory #{row.get('id')} is not confirmed yet; only the user can pin it.")
    if action in PROTECTED_ACTIONS and user_owned(row):
        raise NotAllowedError(f"Memory #{row.get('id')} belongs to the user; an agent cannot {action} it.")


def agent_record(item: Any) -> Any:
    """Make a memory an agent-facing actor is adding a candidate (the object is changed and returned)."""
    if item.source in (MemorySource.USER_TAUGHT.value, MemorySource.IMPORTED.value,
                       MemorySource.CODE_INDEX.value):
        item.source = MemorySource.AGENT_EXPLICIT.value
    item.candidate = True
    item.pinned = False
    item.user_verified = False
    item.confidence = min(float(item.confidence), AGENT_MAX_CONFIDENCE)
    return item


AGENT_MAX_CONFIDENCE = 0.7
"""An agent's word alone never outranks what the user taught (0.8 by default)."""


def injectable(memory: Any) -> bool:
    """The Python twin of :data:`INJECTABLE_SQL`, for results that come from elsewhere (retrieval)."""
    return not (getattr(memory, "deprecated", False) or getattr(memory, "candidate", False)
                or getattr(memory, "needs_review", False) or getattr(memory, "stale_at", None)
                or getattr(memory, "type", "") == "code")


CONFIRMED_CONFIDENCE = 0.8
"""A memory a person confirmed stands at least where what they teach starts (NewMemory's default)."""

IMPORT_CONFIDENCE = 0.6
"""What a file says about itself is not evidence: imported memories start here (or lower)."""
IMPORT_ACTORS = frozenset({"import"})


def imported_record(item: Any) -> Any:
    """Demote a memory read from a file: ``imported``, unpinned, unverified, at import confidence."""
    item.source = MemorySource.IMPORTED.value
    item.pinned = False
    item.user_verified = False
    item.confidence = min(float(item.confidence), IMPORT_CONFIDENCE)
    return item


def imported_columns(values: dict[str, Any]) -> dict[str, Any]:
    """:func:`imported_record` for a restore's column values (the dict is changed and returned)."""
    values["source"] = MemorySource.IMPORTED.value
    values["pinned"] = 0
    values["user_verified"] = 0
    conf = values.get("confidence", IMPORT_CONFIDENCE)
    values["confidence"] = min(float(conf), IMPORT_CONFIDENCE) if isinstance(conf, (int, float)) \
        and not isinstance(conf, bool) else IMPORT_CONFIDENCE
    return values
