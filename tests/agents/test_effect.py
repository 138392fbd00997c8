"""The measured effect of memory: A/B groups of finished sessions, both sample sizes, a test against chance."""

from __future__ import annotations

import json
from typing import Any

import pytest

from desktop.agents.effect import memory_effect
from desktop.agents.metrics import save_metrics
from desktop.memory.stats import permutation_test


def _session(project: Any, sid: str, group: str, steps: int, *, outcome: str = "success",
             tokens: int | None = None) -> None:
    save_metrics(project.db, sid, "engram", group, {"steps": steps, "tool_calls": steps * 2,
                                                     "model_tokens": tokens}, outcome=outcome).result(10)


def test_effect_needs_enough_sessions_then_compares_groups(project: Any) -> None:
    for i in range(2):
        _session(project, f"c{i}", "control", 10)
        _session(project, f"f{i}", "full", 6, tokens=1000)
    early = memory_effect(project.db)
    assert early.compare("steps") is None  # not enough sessions yet
    assert early.with_memory.sessions == 2 and early.without.sessions == 2
    _session(project, "c2", "control", 13)
    _session(project, "p0", "passive", 9, tokens=3000)
    _session(project, "f-failed", "full", 1, outcome="failure")  # failures are not comparable
    eff = memory_effect(project.db)
    steps = eff.compare("steps")
    assert steps is not None and (steps.n_with, steps.n_without) == (3, 3)
    assert steps.with_mean == pytest.approx(7.0) and steps.without_mean == pytest.approx(11.0)
    assert eff.with_memory.n("model_tokens") == 3 and eff.compare("model_tokens") is None  # control reports none
    row = project.db.reads.conn().execute("SELECT metrics FROM session_metrics WHERE session_id='p0'").fetchall()
    assert json.loads(row[0][0])["agent"]["model_tokens"] == 3000


def test_three_sessions_a_side_never_claim_a_difference(project: Any) -> None:
    """The issue's case: 3 control and 3 full sessions on different tasks, "+167 % steps with memory"."""
    for i, steps in enumerate((3, 4, 2)):
        _session(project, f"c{i}", "control", steps)
    for i, steps in enumerate((8, 9, 7)):
        _session(project, f"f{i}", "full", steps)
    c = memory_effect(project.db).compare("steps")
    assert c is not None and c.with_mean / c.without_mean == pytest.approx(8 / 3)  # what the tile used to say
    assert c.p_value == pytest.approx(0.1) and not c.distinguishable  # 2 of the 20 splits are as extreme


def test_a_real_difference_over_enough_sessions_is_distinguishable(project: Any) -> None:
    for i in range(12):
        _session(project, f"c{i}", "control", 14 + i % 4)
        _session(project, f"f{i}", "full", 8 + i % 4)
    c = memory_effect(project.db).compare("steps")
    assert c is not None and c.distinguishable and c.p_value < 0.001


def test_permutation_test_exact_and_sampled() -> None:
    assert permutation_test([1, 2, 3], [1, 2, 3]) == 1.0
    assert permutation_test([1, 2], [3, 4]) == pytest.approx(2 / 6)  # exact: 2 of the 6 splits
    assert permutation_test([], [1.0]) == 1.0
    big = permutation_test(list(range(20)), [x + 0.5 for x in range(20)])  # 137,846,528,820 splits: sampled
    assert 0.5 < big <= 1.0 and big == permutation_test(list(range(20)), [x + 0.5 for x in range(20)])


def test_a_group_the_run_chose_is_left_out(project: Any) -> None:
    """The tour and `engram run --group` choose their group: no random assignment, no comparison."""
    for i in range(3):
        _session(project, f"c{i}", "control", 10)
        _session(project, f"f{i}", "full", 6)
    save_metrics(project.db, "tour", "engram", "full", {"steps": 1, "ab_random": False}, outcome="success").result(10)
    c = memory_effect(project.db).compare("steps")
    assert c is not None and (c.n_with, c.n_without) == (3, 3)
