"""What a committed transaction changed: typed change notices (the role of Anki's OpChanges).

The writer publishes one :class:`ChangeSet` per commit; views and services refresh only
what it names. Entities and actions are closed sets: a listener asking about an entity
nobody announces, or an op announcing an unknown one, fails loudly.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Entity(enum.StrEnum):
    """What a change notice is about. A typed set (like Anki's OpChanges): a listener asking
    about an entity nobody announces, or an op announcing an unknown one, fails loudly."""

    MEMORY = "memory"
    AUDIT = "audit"
    EMBEDDING_JOB = "embedding_job"
    VECTOR = "vector"
    VECTOR_SPACE = "vector_space"
    GRAPH = "graph"
    OBSERVER = "observer"            # the observer's own tables (signals, co-access, ...)
    SESSION_METRICS = "session_metrics"
    PROJECT_META = "project_meta"
    EXTERNAL_INJECTIONS = "external_injections"  # what hooks told an external agent (issue 16)
    TEAM = "team"                    # team sync state and outbox (issue 18)


class Action(enum.StrEnum):
    """What happened to the entity's ids."""

    ADDED = "added"
    UPDATED = "updated"
    DELETED = "deleted"
    ACCESSED = "accessed"    # used by an agent: nothing a view shows changed
    ANCHORED = "anchored"    # code anchors recorded
    SCRUBBED = "scrubbed"    # history text scrubbed (emergency delete)
    STALE = "stale"          # graph edges marked stale
    MODULES = "modules"      # graph modules recomputed
    STATE = "state"          # team sync settings or status changed
    PUSHED = "pushed"        # queued team changes acknowledged by the server


@dataclass(frozen=True)
class Change:
    """One kind of change to one entity kind: which ids were added, updated or deleted."""

    entity: Entity
    action: Action
    ids: frozenset[Any] = frozenset()

    def __post_init__(self) -> None:
        # Strings are accepted (and stay equal to the enum members) but must be known ones.
        object.__setattr__(self, "entity", Entity(self.entity))
        object.__setattr__(self, "action", Action(self.action))


@dataclass
class ChangeSet:
    """Everything one committed transaction changed."""

    changes: list[Change] = field(default_factory=list)

    def touches(self, entity: Entity | str) -> bool:
        """True when anything of `entity` changed."""
        entity = Entity(entity)
        return any(c.entity == entity for c in self.changes)

    def ids(self, entity: Entity | str, action: Action | str | None = None) -> set[Any]:
        """Ids of `entity` changed (optionally only by `action`)."""
        entity = Entity(entity)
        action = Action(action) if action is not None else None
        out: set[Any] = set()
        for c in self.changes:
            if c.entity == entity and (action is None or c.action == action):
                out |= c.ids
        return out
