"""Tool confinement (traversal, absolute paths, symlink escapes), approval flow, caps, memory tools."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from desktop.agents.errors import PathOutsideProject
from desktop.agents.memory_access import StoreMemoryAccess, TimedMemoryAccess
from desktop.agents.providers.scripted import ScriptedProvider
from desktop.agents.session import AgentSession
from desktop.agents.session_types import SessionConfig
from desktop.agents.tools.confine import ProjectRoot
from desktop.agents.tools.memory_tools import SessionNotes
from desktop.agents.tools.registry import ApprovalPolicy, ApprovalRequest, ToolRegistry
from tests.agents.conftest import add


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    d.mkdir()
    (d / "secret.txt").write_text("TOP SECRET", encoding="utf-8")
    return d


def registry(root: Path, **policy: Any) -> ToolRegistry:
    return ToolRegistry(ProjectRoot(root), memory=None, policy=ApprovalPolicy(**policy), notes=SessionNotes())


@pytest.mark.parametrize("path", ["../outside/secret.txt", "core/../../outside/secret.txt", "/etc/passwd",
                                  "~/.bashrc"])
def test_traversal_refused(project_dir: Path, outside: Path, path: str) -> None:
    reg = registry(project_dir, allow_writes=True)
    for tool, args in (("Read", {"file_path": path}), ("Write", {"file_path": path, "content": "x"}),
                       ("Edit", {"file_path": path, "old_string": "a", "new_string": "b"})):
        out = reg.execute(tool, args)
        assert out.is_error and "outside the project" in out.output
    assert (outside / "secret.txt").read_text() == "TOP SECRET"


def test_symlink_escape_refused(project_dir: Path, outside: Path) -> None:
    os.symlink(outside / "secret.txt", project_dir / "link.txt")
    os.symlink(outside, project_dir / "linkdir")
    reg = registry(project_dir, allow_writes=True)
    assert reg.execute("Read", {"file_path": "link.txt"}).is_error
    assert reg.execute("Write", {"file_path": "linkdir/new.txt", "content": "x"}).is_error
    assert not (outside / "new.txt").exists()
    grep = reg.execute("Grep", {"pattern": "TOP SEC+RET"})
    assert grep.output.startswith("No matches")
    glob = reg.execute("Glob", {"pattern": "**/*.txt"})
    assert "secret" not in glob.output
    with pytest.raises(PathOutsideProject):
        ProjectRoot(project_dir).resolve("linkdir/secret.txt")


def test_read_write_edit_grep_glob(project_dir: Path) -> None:
    reg = registry(project_dir, allow_writes=True)
    assert "return amount * 100" in reg.execute("Read", {"file_path": "core/payments.py"}).output
    assert not reg.execute("Write", {"file_path": "new/dir/a.txt", "content": "alpha beta"}).is_error
    assert not reg.execute("Edit", {"file_path": "new/dir/a.txt", "old_string": "beta", "new_string": "gamma"}).is_error
    assert (project_dir / "new/dir/a.txt").read_text() == "alpha gamma"
    assert "new/dir/a.txt:1" in reg.execute("Grep", {"pattern": "gam+a"}).output
    assert "core/payments.py" in reg.execute("Glob", {"pattern": "**/*.py"}).output


def test_edits_replace_a_file_whole_while_another_agent_reads_it(project_dir: Path) -> None:
    """Parallel sub-agents: a reader never sees a half-written file (it would edit the half back)."""
    import threading

    target = project_dir / "core" / "big.py"
    a, b = "A = 1\n" * 40_000, "B = 2\n" * 40_000
    target.write_text(a, encoding="utf-8")
    target.chmod(0o640)
    reg = registry(project_dir, allow_writes=True)
    seen: set[int] = set()
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            seen.add(len(target.read_text(encoding="utf-8")))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for _ in range(15):
            assert not reg.execute("Write", {"file_path": "core/big.py", "content": b}).is_error
            assert not reg.execute("Edit", {"file_path": "core/big.py", "old_string": "B = 2",
                                            "new_string": "A = 1", "replace_all": True}).is_error
    finally:
        stop.set()
        reader.join(10)
    assert seen == {len(a)}, sorted(seen)[:5]  # every version is as long as a and b
    assert target.stat().st_mode & 0o777 == 0o640
    assert not list(project_dir.rglob("*.engram-tmp"))


def test_approval_flow(project_dir: Path) -> None:
    asked: list[ApprovalRequest] = []
    reg = registry(project_dir, ask=lambda r: (asked.append(r), r.tool == "Write")[1])
    assert not reg.execute("Write", {"file_path": "a.txt", "content": "x"}).is_error
    denied = reg.execute("Bash", {"command": "touch b.txt"})
    assert denied.is_error and "did not allow" in denied.output
    assert not (project_dir / "b.txt").exists()
    assert [r.tool for r in asked] == ["Write", "Bash"]
    nobody = registry(project_dir)  # no callback, nothing pre-allowed: denied
    assert nobody.execute("Edit", {"file_path": "a.txt", "old_string": "x", "new_string": "y"}).is_error
    assert (project_dir / "a.txt").read_text() == "x"
    assert registry(project_dir, allow_commands=True).execute("Bash", {"command": "echo hi"}).output.strip() == "hi"


def test_bash_timeout_and_cap(project_dir: Path) -> None:
    reg = registry(project_dir, allow_commands=True)
    out = reg.execute("Bash", {"command": "sleep 5", "timeout": 0.5})
    assert out.is_error and "timed out" in out.output
    big = reg.execute("Bash", {"command": "python3 -c \"print('x'*100000)\""})
    assert len(big.output) < 40_000 and "truncated" in big.output


def test_memory_tools_and_citations(project: Any) -> None:
    mid = add(project, "The payment module rounds half-even", type="decision")
    turns = [
        {"tool_calls": [{"name": "search_memory", "arguments": {"query": "payment rounding"}}]},
        {"tool_calls": [{"name": "record_memory", "arguments": {"content": "rounding lives in core/payments.py"}}]},
        {"tool_calls": [{"name": "get_workflow_recipe", "arguments": {"task": "fix rounding"}}]},
        {"text": f"Used [Memory #{mid}: rounds half-even] and again [Memory #{mid}]."},
    ]
    provider = ScriptedProvider(turns)
    events: list[Any] = []
    res = AgentSession(project, SessionConfig("Tidy", provider, ab_group="full"), on_event=events.append).run()
    assert res.outcome == "success"
    results = [e for e in events if e.kind == "tool_result"]
    assert f"#{mid}" in results[0].data["output"]
    assert res.metrics["notes_recorded"] == 1 and res.metrics["citations"] == [mid]
    assert project.memories.get(mid).access_count == 1


def test_memory_timeout_carries_on(project: Any) -> None:
    class Slow(StoreMemoryAccess):
        def search(self, *a: Any, **k: Any) -> Any:
            import time
            time.sleep(1.0)
            return super().search(*a, **k)
    mem = TimedMemoryAccess(Slow(project), timeout=0.2)
    res = AgentSession(project, SessionConfig("Tidy up", ScriptedProvider([]), ab_group="full"), memory=mem).run()
    assert res.outcome == "success" and mem.timeouts >= 1


def test_calibrated_step_limit(project: Any) -> None:
    # Wording alone sets nothing (5x would give 8 steps); the recorded planned/actual ratio (1.5x) does.
    add(project, "Tasks here tend to take 5x more steps than planned", type="task_calibration")
    add(project, "Tasks here tend to take noticeably more steps than planned", type="task_calibration",
        metadata={"planned": 10, "actual": 15})
    provider = ScriptedProvider(lambda msgs, i: {"tool_calls": [{"name": "Glob", "arguments": {"pattern": "*"}}]})
    res = AgentSession(project, SessionConfig("loop", provider, ab_group="full", max_steps=4)).run()
    assert res.step_limit == 6 and res.steps == 6 and res.error_code == "step_limit"
