"""Reinforcement from use, feedback, candidate quarantine and the auto-memory opt-out."""

from __future__ import annotations

import pytest

from desktop.memory.citations import cited_ids
from desktop.memory.lifecycle.control import AUTO_SOURCES, gate_items, gated_promoter
from desktop.memory.lifecycle.feedback import RecordUse, confirm_right, flag_wrong, record_feedback, record_use
from desktop.memory.preferences import Preferences
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.trust import NotAllowedError
from tests.support.shown import show


def _use(cdb, ids, n=1, *, shown=True, **kw):  # type: ignore[no-untyped-def]
    """``n`` sessions, each shown ``ids`` (when ``shown``) and reporting their use."""
    for i in range(n):
        session = f"s-{_use.count + i}"  # type: ignore[attr-defined]
        if shown:
            show(cdb, session, ids)
        rep = cdb.writer.run(RecordUse(ids, session_id=session, **kw))
    _use.count += n  # type: ignore[attr-defined]
    return rep


_use.count = 0  # type: ignore[attr-defined]


def test_five_uncorrected_uses_add_confidence_up_to_the_evidence_ceiling(cdb, svc) -> None:  # type: ignore[no-untyped-def]
    mid = svc.add("Run the linter with --fix", confidence=0.7).result().id      # the user's word
    high = svc.add("Docs live in docs/", confidence=0.93).result().id
    agent = svc.add("The cache is warmed at boot", source="agent_explicit", confidence=0.68).result().id
    _use(cdb, [mid, high, agent], 4)
    assert svc.get(mid).confidence == pytest.approx(0.7)
    rep = _use(cdb, [mid, high, agent])
    assert set(rep.reinforced) == {mid, high, agent}
    assert svc.get(mid).confidence == pytest.approx(0.75) and svc.get(high).confidence == pytest.approx(0.95)
    assert svc.get(agent).confidence == pytest.approx(0.7)  # an agent's word stops at the agents' cap
    assert svc.get(mid).access_count == 5
    entry = svc.history(mid)[-1]
    assert entry["action"] == "reinforce" and entry["actor"] == "engram" and "5 times" in entry["reason"]
    _use(cdb, [agent], 10)
    assert svc.get(agent).confidence == pytest.approx(0.7)


def test_a_use_counts_only_when_the_session_was_shown_the_memory(cdb, svc) -> None:  # type: ignore[no-untyped-def]
    mid = svc.add("Deploys go through make release", confidence=0.7).result().id
    _use(cdb, [mid], 10, shown=False)  # cited or searched, never injected into those sessions
    cdb.writer.run(RecordUse([mid]))   # no session at all
    m = svc.get(mid)
    assert m.confidence == pytest.approx(0.7) and m.access_count == 0
    uses = [h for h in svc.history(mid) if h["action"] == "use"]
    assert len(uses) == 11 and not any(u["detail"]["counted"] for u in uses)


def test_uses_never_clear_the_review_flag(cdb, svc) -> None:  # type: ignore[no-untyped-def]
    mid = svc.add("Tests need docker", source="agent_explicit").result().id
    flag_wrong(cdb, mid, reason="not any more").result()
    _use(cdb, [mid], 12)
    _use(cdb, [mid], 12, shown=False)
    assert svc.get(mid).needs_review


def test_cited_memory_strengthened_flagged_weakened(cdb, svc) -> None:  # type: ignore[no-untyped-def]
    good = svc.add("Use ruff for linting", confidence=0.6).result().id
    bad = svc.add("The API runs on port 9000", confidence=0.6).result().id
    answer = f"I ran ruff as [Memory #{good}: Use ruff for linting] says."
    assert cited_ids(answer + f" [Memory #{good}: again]") == [good]
    show(cdb, "s-cite", [good, bad])
    record_feedback(cdb, [good, bad], answer_text=answer, session_id="s-cite").result()
    assert svc.get(good).confidence == pytest.approx(0.65) and svc.get(bad).confidence == pytest.approx(0.6)
    record_use(cdb, [good], answer_text=answer).result()  # outside a session: history only
    assert svc.get(good).confidence == pytest.approx(0.65)
    flag_wrong(cdb, bad, reason="port is 8080").result()
    m = svc.get(bad)
    assert m.confidence == pytest.approx(0.5) and m.needs_review
    assert "Flagged as wrong" in svc.history(bad)[-1]["reason"] and "8080" in svc.history(bad)[-1]["reason"]


def test_only_a_person_ends_a_quarantine(cdb, svc) -> None:  # type: ignore[no-untyped-def]
    a = svc.add("Maybe use make", source="agent_explicit", candidate=True).result().id
    b = svc.add("Maybe use just", source="agent_explicit", candidate=True).result().id
    _use(cdb, [a], 5, flagged=[b])
    assert svc.get(a).candidate and svc.get(b).candidate
    with pytest.raises(NotAllowedError):
        confirm_right(cdb, a, actor="mcp").result()
    rep = confirm_right(cdb, a, actor="cli").result()
    assert rep.confirmed == [a] and not svc.get(a).candidate
    assert svc.history(a)[-1]["action"] == "confirm"


def test_auto_memory_opt_out_and_quarantine_gate(cdb) -> None:  # type: ignore[no-untyped-def]
    prefs = Preferences(cdb)
    assert prefs.auto_memory()
    items = [NewMemory(content="learned a", source="observer_inferred"),
             NewMemory(content="told b", source="agent_explicit")]
    gated = gate_items(cdb, items)
    assert [i.candidate for i in gated] == [True, False]
    assert "observer_inferred" in AUTO_SOURCES
    prefs.set(auto_memory=False)
    assert not prefs.auto_memory()
    assert gate_items(cdb, [NewMemory(content="learned c", source="observer_inferred")]) == []
    prefs.set(auto_memory=True)
    assert prefs.auto_memory()
    turned = [e for e in cdb.reads.conn().execute("SELECT action, actor, reason FROM audit_log "
                                                  "WHERE action = 'auto_memory' ORDER BY id")]
    assert turned == [("auto_memory", "user", "automatic memory creation turned off"),
                      ("auto_memory", "user", "automatic memory creation turned on")]


def test_gated_promoter_is_a_promoter(cdb) -> None:  # type: ignore[no-untyped-def]
    from desktop.memory.observer.promotion import Promoter

    p = gated_promoter(cdb)
    assert isinstance(p, Promoter)
    Preferences(cdb).set(auto_memory=False)
    kept, keys, _folded = p._novelty(cdb.reads.conn(), [NewMemory(content="x y z", source="observer_inferred")],
                                    ["k"])
    assert kept == [] and keys == []
