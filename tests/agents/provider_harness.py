"""Helpers shared by the HTTP provider tests: run a whole session and inspect what it left behind."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from desktop.agents.messages import Provider
from desktop.agents.session import AgentSession
from desktop.agents.session_types import SessionConfig
from desktop.agents.tools.registry import ApprovalPolicy


@dataclass
class Run:
    """A finished session: its result and every event it emitted."""

    result: Any
    events: list[Any] = field(default_factory=list)

    def kinds(self, kind: str) -> list[Any]:
        """The events of one kind, in order."""
        return [e for e in self.events if e.kind == kind]

    @property
    def streamed_text(self) -> str:
        """Every streamed text delta joined."""
        return "".join(e.data["delta"] for e in self.kinds("text"))


def run_session(project: Any, provider: Provider, task: str = "Explain how charge() handles amounts",
                group: str = "full", **cfg: Any) -> Run:
    """Run one complete session on ``provider`` and close it."""
    events: list[Any] = []
    config = SessionConfig(task=task, provider=provider, ab_group=group,
                           approval=ApprovalPolicy(allow_writes=True, allow_commands=True), **cfg)
    try:
        result = AgentSession(project, config, on_event=events.append).run()
    finally:
        provider.close()
    return Run(result, events)


def outcome_row(project: Any, session_id: str) -> str | None:
    """The outcome stored in session_metrics for ``session_id`` (None when nothing was saved)."""
    rows = project.db.reads.conn().execute("SELECT outcome FROM session_metrics WHERE session_id = ?",
                                           (session_id,)).fetchall()
    return rows[0][0] if rows else None


def assert_ended_cleanly(project: Any, run: Run, code: str) -> None:
    """The session failed with ``code``, said so in an error event, finished, and kept its metrics."""
    assert run.result.outcome == "failure", run.result
    assert run.result.error_code == code, (run.result.error_code, run.result.error_message)
    assert run.result.error_message
    errors = run.kinds("error")
    assert len(errors) == 1 and errors[0].data["code"] == code
    assert run.events[-1].kind == "finished"
    assert outcome_row(project, run.result.session_id) == "failure"
