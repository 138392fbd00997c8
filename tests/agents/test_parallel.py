"""Several sessions at once: isolated scratchpads, merged at the end with a parallel-conflict signal."""

from __future__ import annotations

from typing import Any

from desktop.agents.parallel import run_parallel
from desktop.agents.providers.scripted import ScriptedProvider
from desktop.agents.session_types import SessionConfig
from desktop.agents.tools.registry import ApprovalPolicy


def test_parallel_sessions_merge(project: Any) -> None:
    def cfg(name: str) -> SessionConfig:
        turns = [{"tool_calls": [{"name": "Read", "arguments": {"file_path": "core/config.py"}}]},
                 {"tool_calls": [{"name": "Edit", "arguments": {"file_path": "core/config.py", "old_string": "3",
                                                                "new_string": "3"}}]},
                 {"text": f"{name} done"}]
        return SessionConfig(f"task {name}", ScriptedProvider(turns), ab_group="full",
                             approval=ApprovalPolicy(allow_writes=True))
    events: list[Any] = []
    parent, results = run_parallel(project, [cfg("a"), cfg("b"), cfg("c")], on_event=events.append, timeout=60)
    assert [r.outcome for r in results] == ["success"] * 3
    assert len({r.session_id for r in results}) == 3
    ids = {e.session_id for e in events}
    assert all(r.session_id in ids for r in results)
    rows = project.db.reads.conn().execute("SELECT session_id FROM session_metrics").fetchall()
    got = {r[0] for r in rows}
    assert parent in got and all(r.session_id in got for r in results)
