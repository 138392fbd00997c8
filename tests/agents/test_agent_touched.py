"""T4's memory search gets the files the agent has read or edited so far and the session's phase
(fails if the decider stops passing them)."""

from __future__ import annotations

from typing import Any

from desktop.agents.injection.budget import PromptBudget
from desktop.agents.injection.decider import RecentCall, StepInjectionDecider
from tests.agents.conftest import add
from tests.agents.test_agent_pipeline import Spy


def test_search_short_circuit_passes_touched_files_and_phase(project: Any) -> None:
    known = add(project, "retry backoff lives in core/config.py under SETTINGS retries", type="pattern",
                confidence=0.9)
    spy = Spy(project)
    decider = StepInjectionDecider(spy, "plain", phase="implement")
    alloc = PromptBudget(32_000).allocate(0)
    decider.note_call(RecentCall(1, "Read", {"file_path": "core/payments.py"}, ["core/payments.py"]))
    decider.note_call(RecentCall(1, "Edit", {"file_path": "core/config.py"}, ["core/config.py"]))
    decider.note_call(RecentCall(2, "Grep", {"pattern": "retry backoff"}, []))
    decider.note_call(RecentCall(2, "Read", {"file_path": "core/payments.py"}, ["core/payments.py"]))
    inj = None
    for step in (3, 4):  # step 3 may be taken by gotchas of the files just read
        inj = decider.decide(step, alloc) or inj
        if inj is not None and inj.trigger == "search_short_circuit":
            break
    assert inj is not None and inj.trigger == "search_short_circuit" and inj.memory_ids == [known]
    assert decider.touched_files == ["core/payments.py", "core/config.py"]
    asked = [c for c in spy.calls if c.get("touched_files")]
    assert asked and list(asked[-1]["touched_files"]) == ["core/payments.py", "core/config.py"]
    assert asked[-1]["phase"] == "implement"


def test_session_hands_its_phase_to_the_decider() -> None:
    import inspect

    from desktop.agents import session

    assert "phase=config.phase" in inspect.getsource(session.AgentSession.__init__)
