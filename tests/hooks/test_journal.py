"""A hook answered without the service writes the tool call down for the session's observer
(``hook_journal``) instead of restoring the observer itself; the observer catches up on it when
the warm service first sees the session, at the session's end, or when a crashed session is
recovered. Nothing written down is lost or learned twice."""

from __future__ import annotations

from typing import Any

import pytest

from desktop.agents.hooks import live
from desktop.agents.hooks.handlers import Handlers
from desktop.agents.hooks.protocol import from_dict
from desktop.memory.project_services import recover_crashed_sessions
from desktop.memory.store.writer import FnOp

#: ``gh`` has no ``--stat`` for a pull request's diff; ``--name-only`` lists its files.
BAD, GOOD = "gh pr diff 7 --stat", "gh pr diff 7 --name-only"
BAD_OUT = "Exit code 1\nunknown flag: --stat\n\nUsage:  gh pr diff [<number> | <url> | <branch>] [flags]"



def _event(h: Handlers, event: str, sid: str, **fields: Any) -> str:
    return h.handle(from_dict("claude-code", event, {"session_id": sid, "cwd": str(h.root), **fields}))


def _fail_then_fix(h: Handlers, sid: str) -> None:
    _event(h, "tool-failed", sid, tool_name="Bash", tool_input={"command": BAD}, tool_use_id="u1", error=BAD_OUT)
    _event(h, "after-tool", sid, tool_name="Bash", tool_input={"command": GOOD}, tool_use_id="u2",
           tool_response={"stdout": "core/payments.py", "exit_code": 0})
    h.project.db.writer.run(FnOp("flush", lambda tx: None))


def _count(project: Any, table: str, sid: str) -> int:
    return int(project.db.reads.conn().execute(f"SELECT count(*) FROM {table} WHERE session_id = ?",
                                               (sid,)).fetchall()[0][0])


def _lessons(project: Any) -> list[str]:
    return [str(r[0]) for r in project.db.reads.conn().execute(
        "SELECT content FROM memories WHERE content LIKE '%--name-only%'")]


def test_the_warm_service_catches_up_on_what_hooks_wrote_down(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    h = Handlers(project)
    _fail_then_fix(h, "j1")
    assert _count(project, "hook_journal", "j1") == 2 and _count(project, "scratchpad_checkpoints", "j1") == 0
    monkeypatch.setattr(live, "_warm", {})  # the service starts in the middle of the session
    _event(h, "after-tool", "j1", tool_name="Read", tool_input={"file_path": str(h.root / "core/payments.py")},
           tool_use_id="u3", tool_response={"type": "text", "file": {"content": "def charge(amount):"}})
    project.db.writer.run(FnOp("flush", lambda tx: None))
    assert _count(project, "hook_journal", "j1") == 0  # kept in a checkpoint first, then dropped
    obs = live._warm[live._key(project, "j1")][0]
    assert obs.sp.step == 3  # the two written-down calls, then this one: in order, none twice
    _event(h, "session-end", "j1", transcript_path="")
    project.db.writer.run(FnOp("flush", lambda tx: None))
    assert len(_lessons(project)) == 1 and _count(project, "scratchpad_checkpoints", "j1") == 0


def test_a_session_that_never_ended_is_learned_from_its_journal(project: Any) -> None:
    h = Handlers(project)
    _fail_then_fix(h, "j2")
    assert recover_crashed_sessions(project) == []  # written just now: the session may still run
    project.db.writer.run(FnOp("backdate", lambda tx: tx.execute(
        "UPDATE hook_journal SET written_at = '2020-01-01T00:00:00.000Z'")))
    results = recover_crashed_sessions(project)
    assert len(results) == 1 and _count(project, "hook_journal", "j2") == 0
    assert len(_lessons(project)) == 1


def test_a_killed_sessions_journal_is_learned_when_another_session_ends(project: Any) -> None:
    """Without the app ever opened, a session the agent never ended is learned from at the next
    session end through the hooks, once its journal is hours old; a recent one is left running."""
    h = Handlers(project)
    _fail_then_fix(h, "killed")
    project.db.writer.run(FnOp("backdate", lambda tx: tx.execute(
        "UPDATE hook_journal SET written_at = '2020-01-01T00:00:00.000Z' WHERE session_id = 'killed'")))
    _fail_then_fix(h, "running")
    _event(h, "session-end", "other", transcript_path="")
    project.db.writer.run(FnOp("flush", lambda tx: None))
    assert _count(project, "hook_journal", "killed") == 0 and len(_lessons(project)) == 1
    assert _count(project, "hook_journal", "running") == 2
