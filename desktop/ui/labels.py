"""Translated names for the core's stable vocabulary (types, statuses, sources, scopes, ...).

The core stores stable English keys; the UI shows words. Each table is written
with QT_TRANSLATE_NOOP so lupdate can extract every word (translating a dynamic
string with tr() would hide it from lupdate), and the lookup translates at call
time so a language switch takes effect on the next paint.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from desktop.ui.tr_noop import QT_TRANSLATE_NOOP

TYPE_NAMES: dict[str, str] = {
    "gotcha": QT_TRANSLATE_NOOP("MemoryTypes", "Gotcha"),
    "decision": QT_TRANSLATE_NOOP("MemoryTypes", "Decision"),
    "preference": QT_TRANSLATE_NOOP("MemoryTypes", "Preference"),
    "pattern": QT_TRANSLATE_NOOP("MemoryTypes", "Pattern"),
    "requirement": QT_TRANSLATE_NOOP("MemoryTypes", "Requirement"),
    "error_pattern": QT_TRANSLATE_NOOP("MemoryTypes", "Error pattern"),
    "module_insight": QT_TRANSLATE_NOOP("MemoryTypes", "Module insight"),
    "prefetch_pattern": QT_TRANSLATE_NOOP("MemoryTypes", "Prefetch pattern"),
    "work_state": QT_TRANSLATE_NOOP("MemoryTypes", "Work state"),
    "causal_dependency": QT_TRANSLATE_NOOP("MemoryTypes", "Causal dependency"),
    "task_calibration": QT_TRANSLATE_NOOP("MemoryTypes", "Task calibration"),
    "e2e_observation": QT_TRANSLATE_NOOP("MemoryTypes", "E2E observation"),
    "dead_end": QT_TRANSLATE_NOOP("MemoryTypes", "Dead end"),
    "work_unit_outcome": QT_TRANSLATE_NOOP("MemoryTypes", "Work outcome"),
    "workflow_recipe": QT_TRANSLATE_NOOP("MemoryTypes", "Workflow recipe"),
    "context_cost": QT_TRANSLATE_NOOP("MemoryTypes", "Context cost"),
    "code": QT_TRANSLATE_NOOP("MemoryTypes", "Code"),
    "note": QT_TRANSLATE_NOOP("MemoryTypes", "Note"),
}

STATUS_NAMES: dict[str, str] = {
    "active": QT_TRANSLATE_NOOP("MemoryStatus", "Active"),
    "needs_review": QT_TRANSLATE_NOOP("MemoryStatus", "Needs review"),
    "stale": QT_TRANSLATE_NOOP("MemoryStatus", "Stale"),
    "deprecated": QT_TRANSLATE_NOOP("MemoryStatus", "Forgotten"),
    "candidate": QT_TRANSLATE_NOOP("MemoryStatus", "Candidate"),
}

SOURCE_NAMES: dict[str, str] = {
    "agent_explicit": QT_TRANSLATE_NOOP("MemorySources", "Agent (explicit)"),
    "observer_inferred": QT_TRANSLATE_NOOP("MemorySources", "Observer (inferred)"),
    "qa_auto": QT_TRANSLATE_NOOP("MemorySources", "QA (automatic)"),
    "mcp_auto": QT_TRANSLATE_NOOP("MemorySources", "MCP (automatic)"),
    "commit_auto": QT_TRANSLATE_NOOP("MemorySources", "Commit (automatic)"),
    "user_taught": QT_TRANSLATE_NOOP("MemorySources", "Taught by you"),
    "imported": QT_TRANSLATE_NOOP("MemorySources", "Imported"),
    "code_index": QT_TRANSLATE_NOOP("MemorySources", "Code index"),
    "human_feedback": QT_TRANSLATE_NOOP("MemorySources", "Your correction"),
    "team": QT_TRANSLATE_NOOP("MemorySources", "Taught by a teammate"),
}

SCOPE_NAMES: dict[str, str] = {
    "global": QT_TRANSLATE_NOOP("MemoryScopes", "Whole project"),
    "module": QT_TRANSLATE_NOOP("MemoryScopes", "One module"),
    "work_unit": QT_TRANSLATE_NOOP("MemoryScopes", "This task"),
    "session": QT_TRANSLATE_NOOP("MemoryScopes", "This session"),
}

AUDIT_ACTIONS: dict[str, str] = {
    "add": QT_TRANSLATE_NOOP("AuditActions", "added"),
    "edit": QT_TRANSLATE_NOOP("AuditActions", "edited"),
    "pin": QT_TRANSLATE_NOOP("AuditActions", "pinned"),
    "unpin": QT_TRANSLATE_NOOP("AuditActions", "unpinned"),
    "verify": QT_TRANSLATE_NOOP("AuditActions", "confirmed"),
    "deprecate": QT_TRANSLATE_NOOP("AuditActions", "deprecated"),
    "forget": QT_TRANSLATE_NOOP("AuditActions", "forgotten"),
    "restore": QT_TRANSLATE_NOOP("AuditActions", "restored"),
    "hard_delete": QT_TRANSLATE_NOOP("AuditActions", "deleted"),
    "promote": QT_TRANSLATE_NOOP("AuditActions", "promoted"),
    "evict": QT_TRANSLATE_NOOP("AuditActions", "evicted"),
    "reinforce": QT_TRANSLATE_NOOP("AuditActions", "reinforced"),
    "stale": QT_TRANSLATE_NOOP("AuditActions", "marked stale"),
    "review": QT_TRANSLATE_NOOP("AuditActions", "sent to review"),
}

# What kind of evidence a learned memory came from (the observer's signal kinds); the
# behavioural statistics not listed fall back to their key.
LESSON_KINDS: dict[str, str] = {
    "user_rule": QT_TRANSLATE_NOOP("LessonKinds", "your instruction"),
    "command_fix": QT_TRANSLATE_NOOP("LessonKinds", "failed command, then one that worked"),
    "recipe": QT_TRANSLATE_NOOP("LessonKinds", "command that worked"),
    "error_fix": QT_TRANSLATE_NOOP("LessonKinds", "error fixed by an edit"),
    "stated_cause": QT_TRANSLATE_NOOP("LessonKinds", "cause stated by the agent"),
    "dead_end": QT_TRANSLATE_NOOP("LessonKinds", "abandoned approach"),
    "explicit": QT_TRANSLATE_NOOP("LessonKinds", "recorded by an agent"),
    "error_retry": QT_TRANSLATE_NOOP("LessonKinds", "recurring error"),
    "hook_block": QT_TRANSLATE_NOOP("LessonKinds", "command refused by a hook"),
    "wrong_place": QT_TRANSLATE_NOOP("LessonKinds", "looked in the wrong place"),
    "check_rule": QT_TRANSLATE_NOOP("LessonKinds", "checker's rule"),
    "check_gap": QT_TRANSLATE_NOOP("LessonKinds", "check that passed while a stronger one failed"),
    "project_fact": QT_TRANSLATE_NOOP("LessonKinds", "fact about the project"),
    "asked_tests": QT_TRANSLATE_NOOP("LessonKinds", "tests you asked for"),
    "reviewed_tests": QT_TRANSLATE_NOOP("LessonKinds", "tests you reviewed"),
    "shell_stray": QT_TRANSLATE_NOOP("LessonKinds", "shell left in another folder"),
    "shell_escape": QT_TRANSLATE_NOOP("LessonKinds", "command rewritten by the agent's shell tool"),
    "rejected_flag": QT_TRANSLATE_NOOP("LessonKinds", "option the program does not take"),
    "tool_args": QT_TRANSLATE_NOOP("LessonKinds", "tool call refused, then one that went through"),
    "type_clash": QT_TRANSLATE_NOOP("LessonKinds", "type of the project's own, mixed up with a plain one"),
}

# Retrieval score components, as the "why was this retrieved" view names them.
SCORE_PARTS: dict[str, str] = {
    "bm25": QT_TRANSLATE_NOOP("ScoreParts", "Keyword match"),
    "dense": QT_TRANSLATE_NOOP("ScoreParts", "Meaning match"),
    "graph": QT_TRANSLATE_NOOP("ScoreParts", "Code graph proximity"),
    "confidence": QT_TRANSLATE_NOOP("ScoreParts", "Confidence"),
    "recency": QT_TRANSLATE_NOOP("ScoreParts", "Recency"),
    "source_trust": QT_TRANSLATE_NOOP("ScoreParts", "Source trust"),
    "pinned": QT_TRANSLATE_NOOP("ScoreParts", "Pinned"),
    "usage": QT_TRANSLATE_NOOP("ScoreParts", "Past use"),
}


def _lookup(context: str, table: dict[str, str], value: str) -> str:
    source = table.get(value)
    if source is None:
        return value.replace("_", " ")
    return QCoreApplication.translate(context, source)


def type_label(value: str) -> str:
    """Translated name of a memory type."""
    return _lookup("MemoryTypes", TYPE_NAMES, value)


def status_label(value: str) -> str:
    """Translated name of a memory status."""
    return _lookup("MemoryStatus", STATUS_NAMES, value)


def source_label(value: str) -> str:
    """Translated name of a memory source."""
    return _lookup("MemorySources", SOURCE_NAMES, value)


def scope_label(value: str) -> str:
    """Translated name of a memory scope."""
    return _lookup("MemoryScopes", SCOPE_NAMES, value)


def action_label(value: str) -> str:
    """Translated past-tense verb of an audit action."""
    return _lookup("AuditActions", AUDIT_ACTIONS, value)


def lesson_label(value: str) -> str:
    """Translated name of the evidence kind a learned memory came from."""
    return _lookup("LessonKinds", LESSON_KINDS, value)


def score_label(value: str) -> str:
    """Translated name of a retrieval score component."""
    return _lookup("ScoreParts", SCORE_PARTS, value)
