"""Configuration, events and results of an agent session (plain data, Qt-free).

The GUI receives :class:`SessionEvent` objects through a callback (called in the
session's thread) or by draining ``AgentSession.events`` (a thread-safe queue),
and re-emits them as Qt signals from its QThread wrapper.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from desktop.agents.messages import ChatMessage, Provider
from desktop.agents.tools.registry import ApprovalPolicy

# Event kinds a session emits, in the order they usually appear.
STARTED = "started"              # data: session_id, ab_group, step_limit, injected (T1/T2 summary)
INJECTION = "injection"          # data: tier, trigger, memory_ids, tokens, content
TEXT = "text"                    # data: delta (streamed model text)
ASSISTANT = "assistant"          # data: text, tool_calls, citations
TOOL_CALL = "tool_call"          # data: call_id, tool, arguments, summary
TOOL_RESULT = "tool_result"      # data: call_id, tool, output, is_error, augmented
STEP = "step"                    # data: step
ERROR = "error"                  # data: code, message, detail
FINISHED = "finished"            # data: SessionResult.as_dict()
EVENT_KINDS = (STARTED, INJECTION, TEXT, ASSISTANT, TOOL_CALL, TOOL_RESULT, STEP, ERROR, FINISHED)

StepHook = Callable[["Any", int, list[ChatMessage]], "list[ChatMessage] | None"]


@dataclass
class SessionConfig:
    """How to run one session."""

    task: str
    provider: Provider
    max_steps: int = 40
    ab_group: str | None = None  # None: stable hash of session + project
    approval: ApprovalPolicy = field(default_factory=ApprovalPolicy)
    system_prompt: str | None = None
    session_id: str | None = None
    parent_session_id: str | None = None
    session_type: str = "interactive"
    agent_format: str | None = None  # override the provider's (xml | markdown | plain)
    memory_timeout: float = 3.0
    bash_timeout: float = 120.0
    learn: bool = True  # feed the observer and promote at the end
    promote: bool = True  # False for parallel children: the group promotes after merging
    step_hooks: list[StepHook] = field(default_factory=list)
    max_absolute_steps: int = 500
    # The trust level's injection floor (None: the pipeline's own) and the retrieval phase of the work.
    min_confidence: float | None = None
    phase: str | None = "implement"


@dataclass
class SessionEvent:
    """One thing that happened in a session."""

    session_id: str
    kind: str
    step: int
    data: dict[str, Any] = field(default_factory=dict)
    at: float = field(default_factory=time.time)


@dataclass
class SessionResult:
    """How a session ended."""

    session_id: str
    outcome: str  # success | failure | abandoned
    steps: int
    final_text: str = ""
    error_code: str | None = None
    error_message: str | None = None
    ab_group: str = ""
    step_limit: int = 0
    metrics: dict[str, Any] = field(default_factory=dict)
    promoted: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (CLI --json, GUI summary)."""
        return dict(self.__dict__)


DEFAULT_SYSTEM_PROMPT = (
    "You are a careful software engineer working in the project folder. Use the tools to read, search "
    "and change files; every path is relative to the project root. Prefer small, verified changes. "
    "Use search_memory when you need project knowledge and record_memory for anything a future session "
    "should know (gotchas, decisions, dead ends). When you are done, answer with a short summary and no "
    "tool call."
)
