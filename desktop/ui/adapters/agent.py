"""The agent session seen from the UI: Engram's agent loop, its events worded for the view.

Every provider runs ``desktop.agents.AgentSession`` with the window's approval policy and the
project's trust level and write policy. The "scripted" choice is the guided tour's agent
(``desktop.tour.tour_session``: the same loop with a scripted model): it runs only on the
sample project Engram creates, never on a user's project, and is never the default.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from desktop.memory.preferences import ProjectPrefs

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.ui")

CITATION = re.compile(r"\[Memory #(\d+):\s*([^\]]*)\]")
PROVIDERS = ("scripted", "ollama", "openai", "anthropic")


def _shared_by(project: Project, ids: list[int]) -> dict[int, str]:
    """Teammates who shared these memories (citation chips say so); empty outside a team."""
    from desktop.memory.team.service import shared_by

    try:
        return shared_by(project.db.reads.conn(), ids)
    except Exception:  # provenance is a nicety: a session must not fail for it
        return {}


@dataclass
class SessionEvent:
    """One thing that happened in a session.

    kind: status | injected | shown | tool_call | tool_result | text | done | error
    """

    kind: str
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)


Emit = Callable[[SessionEvent], None]


@dataclass
class SessionRequest:
    """What to run: the project, the user's prompt, the provider and the project's preferences."""

    project: Project
    prompt: str
    provider: str = "scripted"
    prefs: ProjectPrefs = field(default_factory=ProjectPrefs)
    graph: Any | None = None
    delay: float = 0.015  # pause between streamed chunks, so the stream is visible
    approval: Any | None = None  # an agents ApprovalPolicy (the window's dialog); None denies writes


def run(request: SessionRequest, emit: Emit, cancel: threading.Event) -> None:
    """Run one session to the end in the calling (worker) thread, emitting events."""
    from desktop.agents import session_types as st
    from desktop.agents.providers import make_provider
    from desktop.agents.session import AgentSession
    from desktop.tour import NotTheTour, tour_session

    project = request.project
    started = time.perf_counter()
    injected: list[int] = []
    translate = _translator(project, emit, injected)
    # The project's trust level and write policy reach every agent, the tour's included.
    floor, writes_memory = request.prefs.injection_floor(), request.prefs.agents_may_learn()
    provider = None
    if request.provider == "scripted":
        try:
            session = tour_session(project, request.prompt, on_event=translate, prefs=request.prefs,
                                   pace=request.delay)
        except NotTheTour as exc:  # the tour's agent changes nothing: it must not claim work in a real project
            emit(SessionEvent("error", str(exc), {"code": exc.code}))
            emit(SessionEvent("done", data={"error": True, "used": [], "learned": []}))
            return
    else:
        provider = make_provider(request.provider, settings=project.settings, model=project.settings.llm_model)
        config = st.SessionConfig(task=request.prompt, provider=provider, min_confidence=floor,
                                  learn=writes_memory, promote=writes_memory)
        if request.approval is not None:
            config.approval = request.approval
        session = AgentSession(project, config, on_event=translate)
    thread = session.start()
    try:
        while thread.is_alive():
            if cancel.wait(0.1):
                session.cancel()
                break
        result = session.wait(60)
    finally:
        if provider is not None:
            provider.close()  # its HTTP connections must not outlive the session
    metrics = (result.metrics if result else {}) or {}
    cited = [int(i) for i in metrics.get("citations", []) if str(i).isdigit()]
    conn = project.db.reads.conn()
    learned = [int(str(r[0])) for r in conn.execute(
        "SELECT id FROM memories WHERE session_id=? AND type<>'code'", (session.session_id,))]
    used = project.memories.get_many(cited or injected)
    emit(SessionEvent("done", data={"session_id": session.session_id, "used": list(used), "learned": learned,
                                    "seconds": round(time.perf_counter() - started, 2),
                                    "cancelled": cancel.is_set(), "error": bool(result and result.error_code)}))


def _translator(project: Project, emit: Emit, injected: list[int]) -> Callable[[Any], None]:
    """The agents' session events, as the view's events (injected and found memories with their types)."""
    from desktop.agents import session_types as st

    def memories(kind: str, ids: list[int]) -> None:
        found = project.memories.get_many(ids)
        emit(SessionEvent(kind, data={"ids": ids, "types": {i: m.type for i, m in found.items()},
                                      "shared_by": _shared_by(project, ids)}))

    def translate(e: Any) -> None:
        d = e.data
        if e.kind == st.STARTED:
            emit(SessionEvent("status", "recall"))
        elif e.kind == st.INJECTION:
            ids = [int(i) for i in d.get("memory_ids", [])]
            injected.extend(i for i in ids if i not in injected)
            memories("injected", ids)
        elif e.kind == st.TEXT:
            emit(SessionEvent("text", str(d.get("delta", ""))))
        elif e.kind == st.TOOL_CALL:
            emit(SessionEvent("tool_call", str(d.get("tool", "")), {"arguments": d.get("arguments", {})}))
        elif e.kind == st.TOOL_RESULT:
            if d.get("found"):  # what the agent's own search showed it: chips need their types
                memories("shown", [int(i) for i in d["found"]])
            emit(SessionEvent("tool_result", str(d.get("tool", "")), {"result": str(d.get("output", ""))[:2000]}))
        elif e.kind == st.ERROR:
            emit(SessionEvent("error", str(d.get("message", "")), {"code": d.get("code")}))
    return translate
