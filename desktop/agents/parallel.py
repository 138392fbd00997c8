"""Several sessions at once, each with its own isolated scratchpad, merged at the end.

Children run on their own threads with ``promote=False``; when all have ended,
their scratchpads are merged with the quorum rule (an observation two children
made independently needs one session instead of the usual minimum; a file edited
by two children becomes a parallel-conflict signal) into the parent's digest,
and every session is promoted in one pass.

Doors: ``engram run`` given several tasks runs them through here. Transcripts of
other agents whose sub-agents ran in parallel get the same merge at import
(``Ingestor.learn_events``).
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import replace
from typing import TYPE_CHECKING

from desktop.agents.session import AgentSession, EventSink
from desktop.agents.session_types import SessionConfig, SessionResult
from desktop.memory.observer.events import SessionEnd, SessionStart
from desktop.memory.observer.observer import Observer
from desktop.memory.observer.scratchpad import merge_parallel

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.agents")


def run_parallel(project: Project, configs: list[SessionConfig], *, on_event: EventSink | None = None,
                 parent_session_id: str | None = None, timeout: float | None = None) -> tuple[str, list[SessionResult]]:
    """Run every config concurrently as children of one parent session; returns (parent id, results)."""
    parent = parent_session_id or f"engram-group-{uuid.uuid4().hex[:10]}"
    sessions: list[AgentSession] = []
    for i, cfg in enumerate(configs):
        child = replace(cfg, parent_session_id=parent, promote=False, session_type="subagent",
                        session_id=cfg.session_id or f"{parent}:agent-{i}")
        sessions.append(AgentSession(project, child, on_event=on_event))
    for s in sessions:
        s.start()
    results = [s.wait(timeout) or SessionResult(s.session_id, "abandoned", 0, error_code="timeout")
               for s in sessions]
    _merge_and_promote(project, parent, sessions, results)
    return parent, results


def _merge_and_promote(project: Project, parent: str, sessions: list[AgentSession],
                       results: list[SessionResult]) -> None:
    ingestor = project.observer
    observers = [s.observer for s in sessions if s.observer is not None]
    root = Observer(parent)
    now = time.time()
    root.observe(SessionStart(parent, "engram", str(project.info.root), None, "parallel", now))
    outcome = "success" if all(r.outcome == "success" for r in results) else "failure"
    root.observe(SessionEnd(parent, outcome, time.time()))
    digest = root.finalize(outcome)
    for merged in merge_parallel([o.sp for o in observers]):
        if merged.quorum >= 2 or merged.signal.kind == "parallel_conflict":
            merged.signal.data["min_sessions"] = merged.min_sessions
            digest.signals.append(merged.signal)
    try:
        ingestor.promoter.promote(digest)  # the group's merged signals: no session evidence of its own
        for obs, res in zip(observers, results, strict=False):
            ingestor.learn_digest(obs.finalize(res.outcome))
    except Exception:
        log.exception("promoting parallel group %s failed", parent)
