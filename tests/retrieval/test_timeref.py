"""Dates and relative time resolved against each memory's own time, and the time boost in a real search."""

from __future__ import annotations

from datetime import UTC, date, datetime

from retrieval_helpers import add, pipeline

from desktop.memory.retrieval.params import DEFAULT_PARAMS
from desktop.memory.retrieval.timeref import Window, asks_when, memory_windows, overlaps, query_windows, states_time
from desktop.memory.store.memory_ops import NewMemory

MAY_8 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def test_relative_expressions_resolve_against_the_memory_time():
    wins = memory_windows("I went to a support group yesterday", MAY_8)
    assert Window(date(2023, 5, 7), date(2023, 5, 7)) in wins  # yesterday, seen from 8 May
    assert Window(date(2023, 5, 8), date(2023, 5, 8)) in wins  # the day it was written
    two = memory_windows("we went camping two weekends ago", MAY_8)
    assert any(w.start <= date(2023, 4, 24) <= w.end for w in two)
    last_month = memory_windows("last month I started pottery", MAY_8)
    assert Window(date(2023, 4, 1), date(2023, 4, 30)) in last_month
    assert memory_windows("no time here", None) == ()


def test_query_dates_absolute_and_relative():
    now = datetime(2023, 10, 20, tzinfo=UTC)
    assert query_windows("What painting did Melanie show on October 13, 2023?", now) == [
        Window(date(2023, 10, 13), date(2023, 10, 13))]
    assert query_windows("What did Gina find on 1 February, 2023?", now) == [
        Window(date(2023, 2, 1), date(2023, 2, 1))]
    june = query_windows("When did Melanie go camping in June?", now)
    assert june == [Window(date(2000, 6, 1), date(2000, 6, 30), any_year=True)]
    assert overlaps(june[0], Window(date(2023, 6, 10), date(2023, 6, 10)))  # June of any year
    assert not overlaps(june[0], Window(date(2023, 7, 1), date(2023, 7, 1)))
    assert query_windows("what did we decide last week?", now) == [Window(date(2023, 10, 7), date(2023, 10, 19))]
    # "may" the verb is not a month; a query naming no time resolves to nothing (no boost, never a wrong one).
    assert query_windows("may I ask what the export does?", now) == []


def test_when_questions_and_time_statements():
    assert asks_when("When did Caroline go to the LGBTQ support group?")
    assert asks_when("how long ago was her birthday")
    assert not asks_when("What did Caroline research?")
    assert states_time("I went there yesterday") and states_time("back in 2019") and states_time("on Friday")
    assert not states_time("I love painting landscapes")


def test_date_boost_finds_the_memory_whose_relative_time_matches(project_db, tiny):
    # Two memories about the concert, equally matching the words; only one happened on 7 May 2023
    # ("yesterday", written on 8 May). Nothing in either text says "May" or "7".
    ids = add(project_db,
              NewMemory("The concert was amazing yesterday", session_id="a", created_at="2023-05-08T13:56:00.000Z"),
              NewMemory("The concert was amazing", session_id="b", created_at="2023-09-01T10:00:00.000Z"),
              *[NewMemory(f"filler note {i} about gardening", session_id="c") for i in range(12)])
    clock = lambda: datetime(2023, 10, 1, tzinfo=UTC)  # noqa: E731
    off, _ = pipeline(project_db, tiny, clock=clock, params=DEFAULT_PARAMS.with_(date_boost=0.0))
    on, _ = pipeline(project_db, tiny, clock=clock, params=DEFAULT_PARAMS.with_(date_boost=0.3))
    query = "the concert on 7 May 2023"
    assert on.search(query, limit=2).ids[0] == ids[0]
    resp = on.search(query, limit=2, explain=True)
    assert resp.results[0].explanation.boosts["time"] > 0
    assert off.search(query, limit=2).ids[0] == ids[1]  # without it, the shorter text wins
    assert "time" not in off.search(query, limit=2, explain=True).results[0].explanation.boosts
    off.close()
    on.close()


def test_when_boost_prefers_the_memory_that_states_a_time(project_db, tiny):
    ids = add(project_db,
              NewMemory("Caroline support group great people", session_id="a"),
              NewMemory("Caroline support group yesterday", session_id="b"),
              *[NewMemory(f"filler note {i} about gardening", session_id="c") for i in range(12)])
    off, _ = pipeline(project_db, tiny, params=DEFAULT_PARAMS.with_(when_boost=0.0))
    pipe, _ = pipeline(project_db, tiny, params=DEFAULT_PARAMS.with_(when_boost=0.5))
    query = "When did Caroline go to the support group?"
    assert pipe.search(query, limit=2).ids[0] == ids[1]
    assert pipe.search("What did Caroline like about the support group?", limit=2).ids == \
        off.search("What did Caroline like about the support group?", limit=2).ids  # not a "when" question
    off.close()
    pipe.close()
