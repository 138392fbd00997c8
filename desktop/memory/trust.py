"""Provenance decides trust, not the caller: who may change what, and what may reach an agent.

Every door (GUI, CLI, MCP server, the agent's memory tools, hooks) passes an
``actor`` to the core. This module is the one place that turns the actor into a
policy, so every door gets the same answer:

- Agent-facing actors (``mcp``, ``agent``, ``hook``, ...) cannot pin, unpin,
  forget, deprecate, restore, verify, edit or delete the user's words (what a person
  taught, confirmed or pinned, an instruction the observer heard them give, the rules
  imported from their instruction files), and can never ``verify`` anything
  (verifying *is* a person's word). They may pin only a memory that stands on
  independent evidence, never an agent's word.
- What an agent-facing actor records is a candidate: never user-taught, never
  pinned or verified, at most :data:`AGENT_MAX_CONFIDENCE`, and quarantined until a
  person confirms it. Repeating it, citing it or searching for it changes nothing:
  an agent's word never rises above that cap without a person's confirmation or
  independent evidence (what the user typed, a real command outcome):
  :func:`evidence_ceiling` and :data:`CEILING_SQL` say how far use may lift a memory.
- No injection path returns a candidate, a memory waiting for review, a stale or
  deprecated one, or a code chunk (:data:`INJECTABLE_SQL`, :func:`injectable`).
"""

from __future__ import annotations

import json
from typing import Any, Final

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


def _metadata(row: dict[str, Any]) -> dict[str, Any]:
    """A row's metadata as a dict, whether it holds the decoded value or the stored JSON text."""
    meta = row.get("metadata")
    if isinstance(meta, str):
        try:
            meta = json.loads(meta or "{}")
        except ValueError:
            return {}
    return meta if isinstance(meta, dict) else {}


def users_word(row: dict[str, Any]) -> bool:
    """The user's own words: taught, confirmed or pinned by them, an instruction the observer
    heard them give, or a rule imported from their instruction files (CLAUDE.md, AGENTS.md)."""
    if user_owned(row) or row.get("source") == MemorySource.IMPORTED.value:
        return True
    meta = _metadata(row)
    return meta.get("signal") == USER_RULE_SIGNAL or meta.get("promoted_on") == "user_instruction"


def check_action(actor: str, action: str, row: dict[str, Any]) -> None:
    """Raise NotAllowedError when ``actor`` may not take ``action`` on the memory ``row``."""
    if not is_agent(actor):
        return
    if action == "verify":
        raise NotAllowedError("Only the user can confirm a memory.")
    if action in ("pin", "unpin") and (row.get("candidate") or row.get("needs_review")):
        raise NotAllowedError(f"Memory #{row.get('id')} is not confirmed yet; only the user can pin it.")
    if action in PROTECTED_ACTIONS and users_word(row):
        raise NotAllowedError(f"Memory #{row.get('id')} belongs to the user; an agent cannot {action} it.")
    if action == "pin" and evidence_ceiling(row) < CAP:
        # Pinning is "always inject": an agent's word (or a file's) never gets there by an agent's say.
        raise NotAllowedError(f"Memory #{row.get('id')} rests on no word of yours and no evidence; "
                              "only the user can pin it.")


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
CAP: Final = 0.95
"""The most confidence use or repetition can give a memory that stands on evidence."""

#: Sources whose text is an agent's (or a file's) word, not evidence: what an agent recorded
#: (explicitly, over MCP, in a QA run), a commit message, what a file said about itself.
AGENT_WORD_SOURCES: Final = frozenset({MemorySource.AGENT_EXPLICIT.value, MemorySource.MCP_AUTO.value,
                                       MemorySource.QA_AUTO.value, MemorySource.COMMIT_AUTO.value,
                                       MemorySource.IMPORTED.value,
                                       # What a teammate said arrives as sure as they said it (team/pull.py)
                                       # and use here never makes it surer.
                                       MemorySource.TEAM.value})
#: Observer signal classes whose text is the agent's own words (its record_memory calls, the causes
#: it states in prose): repeating them across sessions is the same agent saying it again.
AGENT_WORD_SIGNALS: Final = frozenset({"explicit", "stated_cause"})
#: What the observer writes in ``metadata.promoted_on`` when independent evidence promoted a memory
#: (candidates.STRONG_EVIDENCE): the user said it, a passing run proved it, the user's hook enforces it.
STRONG_EVIDENCE: Final = frozenset({"user_instruction", "proven_fix", "enforced_by_hook", "command_outcome"})
USER_RULE_SIGNAL: Final = "user_rule"
"""The observer's signal for an instruction the user typed (observer/signals.py USER_RULE)."""


def evidence_ceiling(row: dict[str, Any]) -> float:
    """How high use, citations and repetition may lift this memory's confidence (never lowering it).

    :data:`CAP` for the user's word and for what independent evidence promoted (or what the
    observer measured); :data:`AGENT_MAX_CONFIDENCE` for an agent's or a file's word.
    """
    meta = _metadata(row)
    if user_owned(row) or meta.get("promoted_on") in STRONG_EVIDENCE:
        return CAP
    if row.get("source") in AGENT_WORD_SOURCES or meta.get("signal") in AGENT_WORD_SIGNALS:
        return AGENT_MAX_CONFIDENCE
    return CAP


def _sql_list(values: frozenset[str]) -> str:
    return ",".join(f"'{v}'" for v in sorted(values))


_META = "CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.{key}') END"
CEILING_SQL: Final = (
    f"(CASE WHEN source = '{MemorySource.USER_TAUGHT.value}' OR user_verified = 1 OR pinned = 1 "
    f"OR {_META.format(key='promoted_on')} IN ({_sql_list(STRONG_EVIDENCE)}) THEN {CAP} "
    f"WHEN source IN ({_sql_list(AGENT_WORD_SOURCES)}) "
    f"OR {_META.format(key='signal')} IN ({_sql_list(AGENT_WORD_SIGNALS)}) THEN {AGENT_MAX_CONFIDENCE} "
    f"ELSE {CAP} END)")
"""The SQL twin of :func:`evidence_ceiling` over a ``memories`` row (set-based feedback uses it)."""


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
