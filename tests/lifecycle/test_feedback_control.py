"""Reinforcement from use, feedback, candidate quarantine and the auto-memory opt-out."""

from __future__ import annotations

import pytest

from desktop.memory.citations import cited_ids
from desktop.memory.lifecycle.control import AUTO_SOURCES, gate_items, gated_promoter
from desktop.memory.lifecycle.feedback import RecordUse, flag_wrong, record_use
from desktop.memory.preferences import Preferences
from desktop.memory.store.memory_ops import NewMemory


def _use(cdb, ids, n=1, **kw):  # type: ignore[no-untyped-def]
    for _ in range(n):
        rep = cdb.writer.run(RecordUse(ids, **kw))
    return rep


def test_five_uncorrected_uses_add_confidence_capped(cdb, svc) -> None:  # type: ignore[no-untyped-def]
    mid = svc.add("Run the linter with --fix", source="agent_explicit", confidence=0.7).result().id
    high = svc.add("Docs live in docs/", source="agent_explicit", confidence=0.93).result().id
    _use(cdb, [mid, high], 4)
    assert svc.get(mid).confidence == pytest.approx(0.7)
    rep = _use(cdb, [mid, high])
    assert set(rep.reinforced) == {mid, high}
    assert svc.get(mid).confidence == pytest.approx(0.75) and svc.get(high).confidence == pytest.approx(0.95)
    assert svc.get(mid).access_count == 5
    entry = svc.history(mid)[-1]
    assert entry["action"] == "reinforce" and entry["actor"] == "engram" and "5 times" in entry["reason"]


def test_review_flag_clears_after_ten_uses_and_edit_is_a_correction(cdb, svc) -> None:  # type: ignore[no-untyped-def]
    mid = svc.add("Tests need docker", source="agent_explicit", needs_review=True).result().id
    _use(cdb, [mid], 9)
    svc.edit(mid, {"content": "Integration tests need docker"}, actor="user").result()
    _use(cdb, [mid], 9)
    assert svc.get(mid).needs_review  # the edit reset the count: only 9 uncorrected uses
    rep = _use(cdb, [mid])
    assert rep.review_cleared == [mid] and not svc.get(mid).needs_review


def test_cited_memory_strengthened_flagged_weakened(cdb, svc) -> None:  # type: ignore[no-untyped-def]
    good = svc.add("Use ruff for linting", source="agent_explicit", confidence=0.6).result().id
    bad = svc.add("The API runs on port 9000", source="agent_explicit", confidence=0.6).result().id
    answer = f"I ran ruff as [Memory #{good}: Use ruff for linting] says."
    assert cited_ids(answer + f" [Memory #{good}: again]") == [good]
    record_use(cdb, [good, bad], answer_text=answer).result()
    assert svc.get(good).confidence == pytest.approx(0.65) and svc.get(bad).confidence == pytest.approx(0.6)
    flag_wrong(cdb, bad, reason="port is 8080").result()
    m = svc.get(bad)
    assert m.confidence == pytest.approx(0.5) and m.needs_review
    assert "Flagged as wrong" in svc.history(bad)[-1]["reason"] and "8080" in svc.history(bad)[-1]["reason"]


def test_candidate_quarantine_ends_on_use_not_on_flag(cdb, svc) -> None:  # type: ignore[no-untyped-def]
    a = svc.add("Maybe use make", source="agent_explicit", candidate=True).result().id
    b = svc.add("Maybe use just", source="agent_explicit", candidate=True).result().id
    rep = _use(cdb, [a], flagged=[b])
    assert rep.confirmed == [a]
    assert not svc.get(a).candidate and svc.get(b).candidate
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
