"""The agent's injections are packed by the retrieval packer (``packing.pack``, which ``SearchService.pack``
delegates to: one packer for every door): the session start hands it the phase, and what the packer
leaves out is not injected."""

from __future__ import annotations

from typing import Any

import pytest

from desktop.agents.injection import formatting
from desktop.agents.injection.budget import PromptBudget
from desktop.agents.injection.session_start import build_start_context
from desktop.agents.tools.confine import ProjectRoot
from desktop.memory.retrieval import packing
from desktop.memory.retrieval.packing import pack
from tests.agents.conftest import add
from tests.agents.test_agent_pipeline import Spy


def test_agent_has_no_packer_of_its_own() -> None:
    source = formatting.fit.__code__.co_names
    assert "pack" in source and "count_tokens" not in source


def test_session_start_packs_with_search_service_and_phase(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    kept = add(project, "Payments are charged in cents by core/payments.py", type="decision", confidence=0.9)
    dropped = add(project, "The payments retry loop backs off exponentially", type="gotcha", confidence=0.9)
    calls: list[tuple[list[int], int | None, str | None]] = []

    def spy(results: Any, budget_tokens: int | None = None, phase: str | None = None) -> Any:
        calls.append(([r.memory.id for r in results], budget_tokens, phase))
        # the packer's choice is what gets injected: drop one memory here
        return pack([r for r in results if r.memory.id != dropped], budget_tokens, phase)

    monkeypatch.setattr(packing, "pack", spy)  # the packer fit() calls
    alloc = PromptBudget(32_000).allocate(0)
    ctx = build_start_context(Spy(project), "fix the payments retry", ProjectRoot(project.info.root), "plain",
                              alloc, prefetch=False, phase="refine")
    relevant = [c for c in calls if c[2] == "refine"]
    assert relevant and relevant[0][1] == alloc.retrieval
    assert {kept, dropped} <= set(relevant[0][0])
    assert kept in ctx.memory_ids and dropped not in ctx.memory_ids


def test_fit_keeps_order_and_budget(project: Any) -> None:
    ids = [add(project, f"Fact number {i} about module m{i} and its retry rules", type="gotcha") for i in range(6)]
    rows = [project.memories.get(i) for i in ids]
    assert formatting.fit(rows, 0) == []
    some = formatting.fit(rows, 40)
    assert 0 < len(some) < len(rows)
    assert [m.id for m in some] == ids[: len(some)]
