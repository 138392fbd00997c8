"""The agent session seen from the UI: a stream of SessionEvents from a runtime.

Real providers run ``desktop.agents.AgentSession`` with the window's approval policy.
The scripted provider is the guided tour: it runs only on the sample project Engram
creates (``desktop.tour``), never on a user's project, and is never the default. It
recalls memories through the real retrieval pipeline, "calls" tools, streams an
answer citing what it used, and proposes what it learned per the write policy.
"""

from __future__ import annotations

import importlib
import logging
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from desktop.agents import ask as recall
from desktop.memory.lifecycle.feedback import record_feedback
from desktop.memory.preferences import ProjectPrefs
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.trust import injectable
from desktop.ui.trust import level

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

    kind: status | injected | tool_call | tool_result | text | learned | done | error
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


def runtime_available(provider: str) -> bool:
    """True when `provider` can run here (the built-in scripted demo always can)."""
    if provider == "scripted":
        return True
    try:
        importlib.import_module("desktop.agents.session")
        importlib.import_module("desktop.agents.providers")
    except ImportError:
        return False
    return True


def run(request: SessionRequest, emit: Emit, cancel: threading.Event) -> None:
    """Run one session to the end in the calling (worker) thread, emitting events."""
    if request.provider != "scripted" and runtime_available(request.provider):
        run_agent_session(request, emit, cancel)
        return
    from desktop.tour import is_tour_project

    if not is_tour_project(request.project):
        # The tour's scripted agent changes nothing, so it must not claim work in a real project.
        emit(SessionEvent("error", "The scripted tour agent runs only on the tour's sample project.",
                          {"code": "tour_only"}))
        emit(SessionEvent("done", data={"error": True, "used": [], "learned": []}))
        return
    ScriptedSession(request).run(emit, cancel)


def run_agent_session(request: SessionRequest, emit: Emit, cancel: threading.Event) -> None:
    """Run desktop.agents.AgentSession with a real provider, translating its events for the view."""
    from desktop.agents import session_types as st
    from desktop.agents.providers import make_provider
    from desktop.agents.session import AgentSession

    project = request.project
    started = time.perf_counter()
    provider = make_provider(request.provider, settings=project.settings,
                             model=getattr(project.settings, "llm_model", "") or "")
    injected: list[int] = []

    def translate(e: Any) -> None:
        d = e.data
        if e.kind == st.STARTED:
            emit(SessionEvent("status", "recall"))
        elif e.kind == st.INJECTION:
            ids = [int(i) for i in d.get("memory_ids", [])]
            injected.extend(i for i in ids if i not in injected)
            found = project.memories.get_many(ids)
            emit(SessionEvent("injected", data={"ids": ids, "types": {i: m.type for i, m in found.items()},
                                                "shared_by": _shared_by(project, ids)}))
        elif e.kind == st.TEXT:
            emit(SessionEvent("text", str(d.get("delta", ""))))
        elif e.kind == st.TOOL_CALL:
            emit(SessionEvent("tool_call", str(d.get("tool", "")), {"arguments": d.get("arguments", {})}))
        elif e.kind == st.TOOL_RESULT:
            emit(SessionEvent("tool_result", str(d.get("tool", "")), {"result": str(d.get("output", ""))[:2000]}))
        elif e.kind == st.ERROR:
            emit(SessionEvent("error", str(d.get("message", "")), {"code": d.get("code")}))

    # The project's trust level and write policy reach the real agent, not only the tour.
    writes_memory = request.prefs.write_policy not in ("off", "read_only") and request.prefs.auto_memory
    config = st.SessionConfig(task=request.prompt, provider=provider,
                              min_confidence=level(request.prefs.trust_level).min_confidence,
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
        closer = getattr(provider, "close", None)
        if callable(closer):
            closer()  # its HTTP connections must not outlive the session
    metrics = (result.metrics if result else {}) or {}
    cited = [int(i) for i in metrics.get("citations", []) if str(i).isdigit()]
    conn = project.db.reads.conn()
    learned = [r[0] for r in conn.execute("SELECT id FROM memories WHERE session_id=? AND type<>'code'",
                                          (session.session_id,))]
    used = project.memories.get_many(cited or injected)
    emit(SessionEvent("done", data={"session_id": session.session_id, "used": list(used), "learned": learned,
                                    "seconds": round(time.perf_counter() - started, 2),
                                    "cancelled": cancel.is_set(), "error": bool(result and result.error_code)}))


class ScriptedSession:
    """A deterministic, offline agent for demos and tests."""

    def __init__(self, request: SessionRequest) -> None:
        self.r = request
        self.session_id = "ui-" + uuid.uuid4().hex[:10]

    def _sleep(self, cancel: threading.Event) -> bool:
        return cancel.wait(self.r.delay) if self.r.delay else cancel.is_set()

    def run(self, emit: Emit, cancel: threading.Event) -> None:
        """Recall, call tools, stream a cited answer, propose what was learned."""
        started = time.perf_counter()
        prompt = self.r.prompt.strip()
        threshold = level(self.r.prefs.trust_level).min_confidence
        emit(SessionEvent("status", "recall"))
        # What is injected passes the core's one filter: no candidates, nothing waiting for review.
        hits = [h for h in recall.search(self.r.project, prompt, limit=12)
                if injectable(h.memory) and (h.memory.confidence > threshold or h.memory.pinned)][:8]
        emit(SessionEvent("injected", data={"ids": [h.memory.id for h in hits], "threshold": threshold,
                                            "types": {h.memory.id: h.memory.type for h in hits},
                                            "shared_by": _shared_by(self.r.project,
                                                                    [h.memory.id for h in hits])}))
        emit(SessionEvent("tool_call", "search_memory", {"arguments": {"query": prompt}}))
        emit(SessionEvent("tool_result", "search_memory",
                          {"result": [{"id": h.memory.id, "score": h.score} for h in hits]}))
        target = next((f for h in hits for f in h.memory.related_files), None)
        if target and self.r.graph is not None:
            emit(SessionEvent("tool_call", "analyze_impact", {"arguments": {"target": target}}))
            try:
                impact = self.r.graph.analyze_impact(target)
            except Exception as exc:  # a graph still indexing must not end the session
                impact = {"error": "graph_unavailable", "message": str(exc)}
            emit(SessionEvent("tool_result", "analyze_impact", {"result": impact}))
        if cancel.is_set():
            emit(SessionEvent("done", data=self._metrics(hits, [], started, cancelled=True)))
            return
        answer: list[str] = []
        for chunk in self._answer(prompt, hits):
            if self._sleep(cancel):
                emit(SessionEvent("done", data=self._metrics(hits, [], started, cancelled=True)))
                return
            emit(SessionEvent("text", chunk))
            answer.append(chunk)
        # The same feedback path as every agent: what was shown, what the answer cited (times used,
        # history), waited for so the summary that follows reads the updated counts.
        record_feedback(self.r.project.db, [h.memory.id for h in hits], answer_text="".join(answer),
                        session_id=self.session_id, source="tour").result(30)
        learned = self._learn(prompt, hits)
        if learned:
            emit(SessionEvent("learned", data={"ids": learned}))
        emit(SessionEvent("done", data=self._metrics(hits, learned, started)))

    def _answer(self, prompt: str, hits: list[recall.Hit]) -> list[str]:
        lines = [f"Working on: {prompt}\n\n"]
        if not hits:
            lines.append("I found nothing in memory about this, so I will explore the code from scratch.\n")
        else:
            lines.append("Here is what memory already tells me:\n")
            for h in hits:
                lines.append(f"- {h.memory.citation()} ")
                lines.append("this path was tried before and abandoned, so I will avoid it.\n"
                              if h.memory.type == "dead_end" else "I will follow this.\n")
        lines.append("\nThis is the guided tour: I only read, so no file changes. A real agent would now make "
                     "the change and run the tests with these memories in mind.\n")
        # Stream word by word, never splitting a citation (the view renders it as a chip).
        out: list[str] = []
        for line in lines:
            out += re.findall(r"\[Memory #\d+:[^\]]*\]|\S+\s*|\s+", line)
        return out

    def _learn(self, prompt: str, hits: list[recall.Hit]) -> list[int]:
        """What the tour's agent learned: only what is true of this session (it edits no file).

        A candidate noting which memories answered the task, for the summary to show how
        learning is reviewed; never a claim that files changed.
        """
        policy = self.r.prefs.write_policy
        if policy in ("off", "read_only") or not self.r.prefs.auto_memory or not prompt or not hits:
            return []
        cited = ", ".join(f"#{h.memory.id}" for h in hits[:4])
        items = [NewMemory(content=f"For “{prompt[:120]}”, memories {cited} held what was needed; "
                                   f"no file was changed (the tour agent only reads).",
                           type="work_unit_outcome", source="agent_explicit", confidence=0.6,
                           session_id=self.session_id, provenance_session_ids=[self.session_id],
                           provenance=[{"kind": "session", "session": self.session_id, "prompt": prompt[:200]}],
                           candidate=policy == "confirm_each", needs_review=True)]
        results = self.r.project.memories.add_many(items, actor="agent", reason="learned in session").result()
        return [res.id for res in results]

    def _metrics(self, hits: list[recall.Hit], learned: list[int], started: float, *,
                 cancelled: bool = False) -> dict[str, Any]:
        used = [h.memory for h in hits]
        return {"session_id": self.session_id, "used": [m.id for m in used], "learned": learned,
                "seconds": round(time.perf_counter() - started, 2),
                "cancelled": cancelled}


def citations_in(text: str) -> list[tuple[int, str]]:
    """(memory id, brief) of every `[Memory #ID: brief]` citation in `text`."""
    return [(int(m.group(1)), m.group(2)) for m in CITATION.finditer(text)]
