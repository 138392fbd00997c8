"""T2 comes from ``observer/prefetch.py``'s ranker with the session's task: the files the task names are
loaded although history alone would not load them (fails if the agent goes back to history shares)."""

from __future__ import annotations

from typing import Any

from desktop.agents.injection.budget import PromptBudget
from desktop.agents.injection.session_start import build_start_context, min_prefetch_score
from desktop.agents.memory_access import StoreMemoryAccess
from desktop.agents.tools.confine import ProjectRoot
from tests.agents.conftest import seed_sessions


def _plan(project: Any, task: str) -> list[str]:
    alloc = PromptBudget(32_000).allocate(0)
    ctx = build_start_context(StoreMemoryAccess(project), task, ProjectRoot(project.info.root), "plain", alloc)
    return ctx.prefetch.paths


def test_t2_follows_the_task(project: Any) -> None:
    seed_sessions(project, {"core/config.py": 4, "core/rare.py": 1}, total=4)
    plain = _plan(project, "tidy up the code")
    assert "core/config.py" in plain and "core/rare.py" not in plain and "core/payments.py" not in plain
    # named in the task: a rarely read file and one history never saw are both loaded
    named = _plan(project, "fix the flag in core/rare.py and the amounts in core/payments.py")
    assert "core/rare.py" in named and "core/payments.py" in named


def test_candidates_are_the_rankers(project: Any) -> None:
    from desktop.memory.observer.prefetch import prefetch_plan

    seed_sessions(project, {"core/config.py": 4, "core/rare.py": 1, "gone.py": 4}, total=4)
    task = "retry settings in core/config.py"
    ranked = [(i.file, i.score) for i in prefetch_plan(project.db.reads.conn(), task, 24,
                                                        exclude_missing_under=str(project.info.root))]
    got = StoreMemoryAccess(project).prefetch_candidates(task)
    assert got == ranked and got[0][0] == "core/config.py"
    assert "gone.py" not in [p for p, _ in got]  # no longer in the project
    assert 0 < min_prefetch_score() < 0.5
