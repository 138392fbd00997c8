"""Decay and pruning with an injected clock; eviction never touches pinned or recent memories."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from desktop.memory.lifecycle.decay import decayed_confidence, half_life_for, past_soft_deprecation
from desktop.memory.lifecycle.feedback import confirm_right
from desktop.memory.lifecycle.pruning import PruneConfig, PruneOp, prune, prune_when_idle
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.writer import FnOp
from desktop.memory.types import Memory
from tests.support.shown import show

NOW = datetime(2025, 6, 1, tzinfo=UTC)


def test_decayed_confidence_halves_per_half_life() -> None:
    last = NOW - timedelta(days=30)
    assert decayed_confidence(0.8, 30, last, False, NOW) == pytest.approx(0.4)
    assert decayed_confidence(0.8, 30, (NOW - timedelta(days=90)).isoformat(), False, NOW) == pytest.approx(0.1)
    assert decayed_confidence(0.8, 30, "2025-05-02T00:00:00.000Z", False, NOW) == pytest.approx(0.4)


def test_pinned_and_never_decaying_types_keep_confidence() -> None:
    old = NOW - timedelta(days=3650)
    assert decayed_confidence(0.8, 30, old, True, NOW) == 0.8
    assert decayed_confidence(0.8, None, old, False, NOW) == 0.8
    assert half_life_for("decision") is None and half_life_for("work_state") == 7
    assert half_life_for("decision", 10) == 10


def test_clock_skew_never_raises_confidence_and_memory_form_works() -> None:
    assert decayed_confidence(0.8, 7, NOW + timedelta(days=5), False, NOW) == 0.8
    m = Memory(id=1, type="gotcha", content="x", confidence=0.6, decay_half_life_days=60,
               last_accessed_at="2025-04-02T00:00:00.000Z")
    assert decayed_confidence(m, NOW) == pytest.approx(0.6 * math.pow(0.5, 60 / 60))
    assert past_soft_deprecation(7, NOW - timedelta(days=22), False, NOW)
    assert not past_soft_deprecation(7, NOW - timedelta(days=20), False, NOW)


def _add(svc, content: str, **kw) -> int:  # type: ignore[no-untyped-def]
    kw.setdefault("source", "agent_explicit")
    return svc.add(NewMemory(content=content, **kw)).result().id


def test_soft_deprecate_after_three_half_lives_then_hard_delete_after_grace(cdb, svc, clock) -> None:  # type: ignore[no-untyped-def]
    # A note with a 7-day half-life: no TTL, so only the decay rule applies.
    ws = _add(svc, "Refactoring the parser, halfway done", type="note", decay_half_life_days=7)
    gotcha = _add(svc, "The CI cache breaks on lockfile changes", type="gotcha")  # 60 days
    decision = _add(svc, "We chose SQLite over Postgres", type="decision")  # never decays
    pinned = _add(svc, "Pinned work state note", type="work_state", pinned=True)
    verified = _add(svc, "Verified work state note", type="note", decay_half_life_days=7, user_verified=True)
    clock.advance(days=20)
    assert prune(cdb).decayed == 0  # 20 days < 3 x 7
    clock.advance(days=2)
    report = prune(cdb)
    assert report.decayed == 2  # ws and verified (verification only protects from hard delete)
    assert svc.get(ws).deprecated and svc.get(verified).deprecated
    assert not svc.get(gotcha).deprecated and not svc.get(decision).deprecated and not svc.get(pinned).deprecated
    entry = svc.history(ws)[-1]
    assert entry["action"] == "decay" and entry["reason"].startswith("Not used for 22 days")
    assert svc.audit_log(limit=1)[0]["actor"] == "engram"
    clock.advance(days=29)
    assert prune(cdb).hard_deleted == 0
    clock.advance(days=2)
    report = prune(cdb)
    assert report.hard_deleted == 1
    assert svc.get_many([ws, verified]).keys() == {verified}
    last = svc.audit_log(limit=1)[0]
    assert last["action"] == "prune" and last["memory_id"] == ws and "grace" in last["reason"]


def test_use_resets_decay(cdb, svc, clock) -> None:  # type: ignore[no-untyped-def]
    ws = _add(svc, "Migrating the settings dialog", type="note", decay_half_life_days=7)
    clock.advance(days=20)
    show(cdb, "s-1", [ws])
    svc.record_access([ws], session_id="s-1").result()
    clock.advance(days=20)
    assert prune(cdb).decayed == 0
    clock.advance(days=2)
    assert prune(cdb).decayed == 1


def test_ttl_is_shorter_than_decay_for_work_state(cdb, svc, clock) -> None:  # type: ignore[no-untyped-def]
    ws = _add(svc, "Refactoring the parser, halfway done", type="work_state")
    clock.advance(days=15)
    report = prune(cdb)
    assert report.expired == 1 and report.decayed == 0 and svc.get(ws).deprecated


def test_ttl_by_type_spares_used_pinned_and_verified(cdb, svc, clock) -> None:  # type: ignore[no-untyped-def]
    ids = {name: _add(svc, f"prefetch pattern {name}", type="prefetch_pattern",
                      decay_half_life_days=1000, **kw)
           for name, kw in {"plain": {}, "pinned": {"pinned": True}, "verified": {"user_verified": True},
                            "used": {}}.items()}
    for i in range(3):
        show(cdb, f"s-{i}", [ids["used"]])
        svc.record_access([ids["used"]], session_id=f"s-{i}").result()
    clock.advance(days=22)  # TTL of prefetch_pattern is 21 days
    report = prune(cdb)
    assert report.expired == 1
    assert svc.get(ids["plain"]).deprecated
    assert not any(svc.get(ids[k]).deprecated for k in ("pinned", "verified", "used"))
    assert "TTL" in svc.history(ids["plain"])[-1]["reason"]


def test_unconfirmed_candidate_leaves_quarantine_whatever_agents_cite(cdb, svc, clock) -> None:  # type: ignore[no-untyped-def]
    cand = _add(svc, "Maybe the tests need docker", type="note", candidate=True)
    cited = _add(svc, "Maybe the build needs node 20", type="note", candidate=True)
    kept = _add(svc, "Maybe the linter needs ruff 0.6", type="note", candidate=True)
    for i in range(5):  # an agent citing its own candidate (never shown: candidates are never injected)
        svc.record_access([cited], session_id=f"s-{i}").result()
    confirm_right(cdb, kept).result()
    clock.advance(days=15)
    report = prune(cdb)
    assert report.quarantine_expired == 2 and svc.get(cand).deprecated and svc.get(cited).deprecated
    assert not svc.get(kept).deprecated


def test_eviction_never_removes_pinned_verified_or_recent(cdb, svc, clock) -> None:  # type: ignore[no-untyped-def]
    items = [NewMemory(content=f"old gotcha {i}", type="gotcha", source="agent_explicit",
                       confidence=0.3 + i / 100) for i in range(30)]
    items += [NewMemory(content=f"pinned gotcha {i}", type="gotcha", pinned=True, confidence=0.1)
              for i in range(5)]
    items += [NewMemory(content=f"verified gotcha {i}", type="gotcha", user_verified=True, confidence=0.1)
              for i in range(5)]
    old_ids = [r.id for r in svc.add_many(items).result()]
    clock.advance(days=10)
    recent = [r.id for r in svc.add_many([NewMemory(content=f"fresh gotcha {i}", type="gotcha",
                                                    confidence=0.05) for i in range(10)]).result()]
    cfg = PruneConfig(soft_limit=20, evict_to_ratio=0.9)
    dry = cdb.writer.run(PruneOp(cfg, dry_run=True))
    # 50 - 18 would be needed, but only the 30 unprotected ones may go; a dry run changes nothing.
    assert dry.evicted == 30 and svc.count() == 50
    report = cdb.writer.run(PruneOp(cfg))
    assert report.evicted == 30  # only the 30 unprotected old ones can go
    alive = set(svc.list_ids())
    assert set(recent) <= alive and set(old_ids[30:]) <= alive and not alive & set(old_ids[:30])
    # lowest decayed confidence first: with room for 2 more it would keep the strongest
    evict_entries = svc.audit_log(actions=["evict"], limit=100)
    assert len(evict_entries) == 30 and all(e["actor"] == "engram" for e in evict_entries)
    assert "soft limit" in evict_entries[0]["reason"]


def test_eviction_order_is_lowest_decayed_confidence(cdb, svc, clock) -> None:  # type: ignore[no-untyped-def]
    weak = _add(svc, "weak one", type="note", confidence=0.2)
    strong = _add(svc, "strong one", type="note", confidence=0.9)
    clock.advance(days=2)
    cdb.writer.run(PruneOp(PruneConfig(soft_limit=1, evict_to_ratio=1.0)))
    assert svc.get(weak).deprecated and not svc.get(strong).deprecated


def test_prune_when_idle_runs_at_most_daily(cdb, svc, clock) -> None:  # type: ignore[no-untyped-def]
    fut = prune_when_idle(cdb)
    assert fut is not None and fut.result().dry_run is False
    clock.advance(hours=5)
    assert prune_when_idle(cdb) is None
    clock.advance(hours=20)
    assert prune_when_idle(cdb) is not None


def test_hard_delete_scrubs_old_audit_text_and_embedding_cache(cdb, svc, clock) -> None:  # type: ignore[no-untyped-def]
    mid = _add(svc, "temporary work state with a distinctive phrase", type="work_state")

    def cache(tx):  # type: ignore[no-untyped-def]
        tx.execute("INSERT INTO embedding_cache(key, embedding, model_id, dims, expires_at) VALUES "
                   "('k', x'00', 'm', 1, ?)", (int(clock.now.timestamp()) + 3600,))
    cdb.writer.run(FnOp("cache", cache))
    clock.advance(days=30)
    first = prune(cdb)
    assert first.decayed == 1 and first.cache_evicted == 1
    clock.advance(days=31)
    assert prune(cdb).hard_deleted == 1
    rows = cdb.reads.conn().execute("SELECT detail FROM audit_log WHERE memory_id=?", (mid,)).fetchall()
    assert not any("distinctive" in r[0] for r in rows)
