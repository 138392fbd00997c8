"""The measured effect of memory: A/B groups of finished sessions, sample sizes, nothing claimed early."""

from __future__ import annotations

import json
from typing import Any

import pytest

from desktop.agents.effect import memory_effect
from desktop.agents.metrics import save_metrics


def _session(project: Any, sid: str, group: str, steps: int, *, outcome: str = "success",
             tokens: int | None = None) -> None:
    save_metrics(project.db, sid, "engram", group, {"steps": steps, "tool_calls": steps * 2,
                                                     "model_tokens": tokens}, outcome=outcome).result(10)


def test_effect_needs_enough_sessions_then_compares_groups(project: Any) -> None:
    for i in range(2):
        _session(project, f"c{i}", "control", 10)
        _session(project, f"f{i}", "full", 6, tokens=1000)
    early = memory_effect(project.db)
    assert not early.measured and early.change("steps") is None
    assert early.with_memory.sessions == 2 and early.without.sessions == 2
    _session(project, "c2", "control", 13)
    _session(project, "p0", "passive", 9, tokens=3000)
    _session(project, "f-failed", "full", 1, outcome="failure")  # failures are not comparable
    eff = memory_effect(project.db)
    assert eff.measured and eff.with_memory.sessions == 3 and eff.without.sessions == 3
    assert eff.with_memory.means["steps"] == pytest.approx(7.0) and eff.without.means["steps"] == pytest.approx(11.0)
    assert eff.change("steps") == pytest.approx(-4 / 11)
    assert eff.with_memory.n["model_tokens"] == 3 and "model_tokens" not in eff.without.n
    row = project.db.reads.conn().execute("SELECT metrics FROM session_metrics WHERE session_id='p0'").fetchall()
    assert json.loads(row[0][0])["agent"]["model_tokens"] == 3000
