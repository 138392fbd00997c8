"""Several sessions at once: isolated scratchpads, merged at the end with a parallel-conflict signal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from desktop.agents.parallel import run_parallel
from desktop.agents.providers.scripted import ScriptedProvider
from desktop.agents.session_types import SessionConfig
from desktop.agents.tools.registry import ApprovalPolicy
from desktop.composition import Engram
from desktop.settings import Settings


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


REPO = Path(__file__).resolve().parents[2]
# Each sub-agent marks that it started, then waits (bounded) until the other one has too: only
# sessions that really run at the same time both see "together".
BARRIER = ("touch started.$$; for i in $(seq 400); do [ $(ls started.* | wc -l) -ge 2 ] && echo together >> met.log"
           " && exit 0; sleep 0.05; done; echo alone >> met.log")


def test_engram_run_with_several_tasks_runs_them_concurrently_and_merges(project_dir: Path, tmp_path: Path) -> None:
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "Read", "arguments": {"file_path": "core/config.py"}}]},
        {"tool_calls": [{"name": "Bash", "arguments": {"command": BARRIER}}]},
        {"tool_calls": [{"name": "Edit", "arguments": {"file_path": "core/config.py", "old_string": "3",
                                                       "new_string": "3"}}]},
        {"text": "Done."},
    ]), encoding="utf-8")
    data = tmp_path / "data"
    proc = subprocess.run([sys.executable, "-m", "desktop.cli.main", "run", "--project", str(project_dir),
                           "--data-dir", str(data), "--json", "--provider", "scripted", "--script", str(script),
                           "--group", "full", "--allow-writes", "--allow-commands",
                           "tune the retries", "tune the timeouts"],
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    group, sessions = out["group"], out["sessions"]
    assert [s["outcome"] for s in sessions] == ["success", "success"]
    assert (project_dir / "met.log").read_text(encoding="utf-8").split() == ["together", "together"]
    project = Engram(Settings(data_dir=data)).open_project(project_dir, remember=False, maintain=False)
    try:
        conn = project.db.reads.conn()
        learned = {r[0] for r in conn.execute("SELECT session_id FROM session_metrics")}
        assert {group, *(s["session_id"] for s in sessions)} <= learned
        # Two isolated scratchpads both edited the file: the merge alone can see the conflict.
        conflict = conn.execute("SELECT content, session_id FROM memories WHERE json_extract(metadata, '$.signal')"
                                " = 'parallel_conflict'").fetchall()
        assert conflict and "core/config.py" in conflict[0][0] and conflict[0][1] == group
        assert conn.execute("SELECT count(*) FROM scratchpad_checkpoints").fetchall()[0][0] == 0
    finally:
        project.close()
