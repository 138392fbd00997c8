"""The memory vocabulary shared by every part of the core.

Values are stable strings: they are stored in the database, written to exports
and shown (translated) by the UI, so renaming one is a migration.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class MemoryType(enum.StrEnum):
    """What kind of knowledge a memory holds."""

    GOTCHA = "gotcha"
    DECISION = "decision"
    PREFERENCE = "preference"
    PATTERN = "pattern"
    REQUIREMENT = "requirement"
    ERROR_PATTERN = "error_pattern"
    MODULE_INSIGHT = "module_insight"
    PREFETCH_PATTERN = "prefetch_pattern"
    WORK_STATE = "work_state"
    CAUSAL_DEPENDENCY = "causal_dependency"
    TASK_CALIBRATION = "task_calibration"
    E2E_OBSERVATION = "e2e_observation"
    DEAD_END = "dead_end"
    WORK_UNIT_OUTCOME = "work_unit_outcome"
    WORKFLOW_RECIPE = "workflow_recipe"
    CONTEXT_COST = "context_cost"
    CODE = "code"  # an AST chunk of the project's own source
    NOTE = "note"  # a user-taught fact that fits no narrower type


class MemorySource(enum.StrEnum):
    """Who or what created a memory; drives the source-trust multiplier."""

    AGENT_EXPLICIT = "agent_explicit"
    OBSERVER_INFERRED = "observer_inferred"
    QA_AUTO = "qa_auto"
    MCP_AUTO = "mcp_auto"
    COMMIT_AUTO = "commit_auto"
    USER_TAUGHT = "user_taught"
    IMPORTED = "imported"
    CODE_INDEX = "code_index"
    TEAM = "team"  # a teammate's own word, pulled from the team server (never "taught by you" here)


class MemoryScope(enum.StrEnum):
    """How widely a memory applies."""

    GLOBAL = "global"
    MODULE = "module"
    WORK_UNIT = "work_unit"
    SESSION = "session"


class MemoryStatus(enum.StrEnum):
    """Lifecycle state derived from the deprecated/stale/needs_review columns."""

    ACTIVE = "active"
    NEEDS_REVIEW = "needs_review"
    STALE = "stale"
    DEPRECATED = "deprecated"
    CANDIDATE = "candidate"


# Days until confidence halves; None means the type never decays.
DEFAULT_HALF_LIFE_DAYS: dict[str, float | None] = {
    MemoryType.WORK_STATE.value: 7,
    MemoryType.E2E_OBSERVATION.value: 30,
    MemoryType.ERROR_PATTERN.value: 60,
    MemoryType.GOTCHA.value: 60,
    MemoryType.MODULE_INSIGHT.value: 90,
    MemoryType.DEAD_END.value: 90,
    MemoryType.CAUSAL_DEPENDENCY.value: 120,
    MemoryType.WORKFLOW_RECIPE.value: 120,
    MemoryType.TASK_CALIBRATION.value: 180,
    MemoryType.PREFETCH_PATTERN.value: 60,
    MemoryType.DECISION.value: None,
    MemoryType.PREFERENCE.value: None,
    MemoryType.REQUIREMENT.value: None,
    MemoryType.CODE.value: None,
}

def memory_status(deprecated: object, stale_at: object, candidate: object, needs_review: object) -> MemoryStatus:
    """The lifecycle state from the four flags (works on a Memory's fields or a raw row's columns)."""
    if deprecated:
        return MemoryStatus.DEPRECATED
    if stale_at:
        return MemoryStatus.STALE
    if candidate:
        return MemoryStatus.CANDIDATE
    if needs_review:
        return MemoryStatus.NEEDS_REVIEW
    return MemoryStatus.ACTIVE


MAX_CONTENT_CHARS = 20_000
CITATION_MAX_CHARS = 40


@dataclass
class Memory:
    """One memory as the core sees it (a row of the `memories` table)."""

    id: int
    type: str
    content: str
    confidence: float = 0.8
    tags: list[str] = field(default_factory=list)
    related_files: list[str] = field(default_factory=list)
    related_modules: list[str] = field(default_factory=list)
    scope: str = MemoryScope.GLOBAL.value
    source: str = MemorySource.AGENT_EXPLICIT.value
    session_id: str | None = None
    commit_sha: str | None = None
    provenance_session_ids: list[str] = field(default_factory=list)
    provenance: list[dict[str, Any]] = field(default_factory=list)
    relations: list[dict[str, Any]] = field(default_factory=list)
    work_unit_ref: dict[str, Any] | None = None
    methodology: str | None = None
    target_node_id: str | None = None
    impacted_node_ids: list[str] = field(default_factory=list)
    decay_half_life_days: float | None = None
    needs_review: bool = False
    user_verified: bool = False
    citation_text: str | None = None
    pinned: bool = False
    deprecated: bool = False
    deprecated_at: str | None = None
    stale_at: str | None = None
    candidate: bool = False
    created_at: str = ""
    updated_at: str = ""
    last_accessed_at: str = ""
    access_count: int = 0
    project_id: str = ""
    chunk_type: str | None = None
    chunk_start_line: int | None = None
    chunk_end_line: int | None = None
    context_prefix: str | None = None
    embedding_model_id: str | None = None
    fingerprint: str = ""
    external_id: str | None = None
    code_anchors: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> MemoryStatus:
        """The single lifecycle state a browser filter or badge shows."""
        return memory_status(self.deprecated, self.stale_at, self.candidate, self.needs_review)

    def citation(self) -> str:
        """The inline citation an agent writes, e.g. `[Memory #12: use argon2 not bcrypt]`."""
        text = self.citation_text or self.content
        text = " ".join(text.split())
        if len(text) > CITATION_MAX_CHARS:
            text = text[: CITATION_MAX_CHARS - 1].rstrip() + "…"
        return f"[Memory #{self.id}: {text}]"
