"""The agent's session start uses the retrieval pipeline with the session's phase, touched files and the
trust level's confidence floor (each test fails if that argument stops reaching the search)."""

from __future__ import annotations

from typing import Any

from desktop.agents.injection.budget import PromptBudget
from desktop.agents.injection.session_start import build_start_context
from desktop.agents.memory_access import StoreMemoryAccess
from desktop.agents.tools.confine import ProjectRoot
from tests.agents.conftest import add


class Spy(StoreMemoryAccess):
    """The real access, recording what the session start asked the search for."""

    def __init__(self, project: Any) -> None:
        super().__init__(project)
        self.calls: list[dict[str, Any]] = []

    def search(self, query: str, **kw: Any) -> Any:
        self.calls.append(kw)
        return super().search(query, **kw)


def test_session_start_passes_phase_and_trust_floor(project: Any) -> None:
    low = add(project, "The payments retry loop backs off exponentially", type="gotcha", confidence=0.5)
    high = add(project, "Payments are charged in cents by core/payments.py", type="decision", confidence=0.9)
    pinned_low = add(project, "Payments must never be retried twice", type="requirement", confidence=0.3,
                     pinned=True)
    spy = Spy(project)
    alloc = PromptBudget(32_000).allocate(0)
    ctx = build_start_context(spy, "fix the payments retry", ProjectRoot(project.info.root), "plain", alloc,
                              prefetch=False, phase="refine", min_confidence=0.8)
    assert spy.calls[0]["phase"] == "refine" and spy.calls[0]["min_confidence"] == 0.8
    assert high in ctx.memory_ids and pinned_low in ctx.memory_ids and low not in ctx.memory_ids
    open_ctx = build_start_context(spy, "fix the payments retry", ProjectRoot(project.info.root), "plain",
                                   alloc, prefetch=False, phase="refine", min_confidence=None)
    assert low in open_ctx.memory_ids
