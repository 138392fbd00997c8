"""Prefetch scoring: session-counted decay, all-time share, work state, prompt mentions and terms."""

from __future__ import annotations

import math

from obs_helpers import Seq, digest_of

from desktop.memory.observer.novelty import HashingEmbedder, Novelty
from desktop.memory.observer.prefetch import (
    PrefetchParams,
    decayed_share,
    mentioned_files,
    prefetch_features,
    prefetch_plan,
    rank,
)
from desktop.memory.observer.promotion import Promoter
from desktop.memory.store.database import Database


def _learn(db: Database, sessions: list[Seq]) -> None:
    p = Promoter(db, novelty=Novelty(HashingEmbedder()))
    for s in sessions:
        p.promote(digest_of(s.end()))


def _seq(i: int, prompt: str = "carry on") -> Seq:
    # One session per hour so the replay order is the creation order.
    return Seq(f"s{i}", t0=1_700_000_000.0 + 3600 * i).user(prompt)


def test_decayed_share_bounds_and_half_life() -> None:
    assert decayed_share([], 10, 2.0) == 0.0
    assert math.isclose(decayed_share(list(range(10)), 10, 2.0), 1.0)  # needed every session
    # with a huge half-life it is the plain share
    assert math.isclose(decayed_share([0, 5], 10, 1e9), 0.2, rel_tol=1e-6)
    # the newest session weighs twice what the one half_life sessions older does
    assert math.isclose(decayed_share([0], 10, 2.0), 2 * decayed_share([2], 10, 2.0))


def test_mentioned_files_full_path_and_suffix() -> None:
    files = ["bookminder/cli.py", "specs/cli_spec.py", "docs/apple_books.md"]
    assert mentioned_files("fix `cli.py` and read @docs/apple_books.md", files) == {
        "bookminder/cli.py", "docs/apple_books.md"}
    assert mentioned_files("no names here", files) == set()


def test_session_files_table_records_membership_and_edits(db: Database) -> None:
    _learn(db, [_seq(1).read("a.py").edit("b.py").write("new.py")])
    rows = dict(((p, e) for p, e in db.reads.conn().execute(
        "SELECT file_path, edited FROM observer_session_files WHERE session_id = 's1'")))
    assert rows == {"a.py": 0, "b.py": 1, "new.py": 1}


def test_recent_file_beats_old_one_with_same_count(db: Database) -> None:
    _learn(db, [_seq(1).read("old.py"), _seq(2).read("x.py"), _seq(3).read("y.py"), _seq(4).read("new.py")])
    files = [i.file for i in prefetch_plan(db.reads.conn(), "carry on", 4)]
    assert files.index("new.py") < files.index("old.py")


def test_all_time_share_keeps_a_core_file_above_a_one_off(db: Database) -> None:
    sessions = [_seq(i).read("core.py") for i in range(1, 6)]
    sessions.append(_seq(6).read("oneoff.py"))
    _learn(db, sessions)
    params = PrefetchParams(half_life=2.0, short_share=0.5, mention=0.0, last_edit=0.0, terms=0.0)
    files = [i.file for i in prefetch_plan(db.reads.conn(), "carry on", 2, params=params)]
    assert files == ["core.py", "oneoff.py"]
    # short-term only: the one-off from the last session wins
    only_recent = PrefetchParams(half_life=0.5, short_share=1.0, mention=0.0, last_edit=0.0, terms=0.0)
    assert prefetch_plan(db.reads.conn(), "carry on", 1, params=only_recent)[0].file == "oneoff.py"


def test_work_state_bonus_for_last_sessions_edits(db: Database) -> None:
    _learn(db, [_seq(1).read("a.py").read("b.py").edit("b.py"), _seq(2)])  # s2 touched no file
    feats = prefetch_features(db.reads.conn(), "carry on")
    assert feats is not None and feats.last_edited == {"b.py"}
    base = PrefetchParams(half_life=2.0, short_share=0.7, mention=0.0, last_edit=0.0, terms=0.0)
    with_state = PrefetchParams(half_life=2.0, short_share=0.7, mention=0.0, last_edit=0.2, terms=0.0)
    assert rank(feats, base, 2)[0].score == rank(feats, base, 2)[1].score  # tie without work state
    top = rank(feats, with_state, 2)[0]
    assert top.file == "b.py" and top.parts["work_state"] == 0.2


def test_mention_and_terms_lift_a_rare_file(db: Database) -> None:
    sessions = [_seq(i).read("main.py") for i in range(1, 5)]
    sessions.append(_seq(5, "tune the billing invoice totals").read("billing/invoice.py"))
    sessions.extend(_seq(i).read("main.py") for i in range(6, 9))
    _learn(db, sessions)
    conn = db.reads.conn()
    plain = PrefetchParams(half_life=2.0, short_share=0.7, mention=0.0, last_edit=0.0, terms=0.0)
    assert prefetch_plan(conn, "the invoice totals are wrong", 1, params=plain)[0].file == "main.py"
    named = PrefetchParams(half_life=2.0, short_share=0.7, mention=1.0, last_edit=0.0, terms=0.0)
    assert prefetch_plan(conn, "look at invoice.py", 1, params=named)[0].file == "billing/invoice.py"
    termed = PrefetchParams(half_life=2.0, short_share=0.7, mention=0.0, last_edit=0.0, terms=1.0)
    top = prefetch_plan(conn, "the invoice totals are wrong", 1, params=termed)[0]
    assert top.file == "billing/invoice.py" and top.parts["terms"] > 0


def test_empty_database_plans_nothing(db: Database) -> None:
    assert prefetch_plan(db.reads.conn(), "anything") == []
    assert rank(None) == []
