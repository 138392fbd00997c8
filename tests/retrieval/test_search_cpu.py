"""The search path's CPU cuts keep what they replace: light rows, lazy partial scores, shared session
lookups, the no-filter shortcut and the per-column row decoder."""

from __future__ import annotations

import dataclasses

import pytest
from retrieval_helpers import add

from desktop.memory.retrieval import paths as P
from desktop.memory.retrieval.candidates import has_filters, load_light, passes_filters, related_files
from desktop.memory.retrieval.fusion import normalise, score_fusion
from desktop.memory.retrieval.types import SearchRequest
from desktop.memory.store.connection import rows_as_dicts
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.rows import decode_column, row_to_memory
from desktop.memory.types import Memory


def test_light_rows_read_like_memories_and_refuse_writes_to_unread_lists(project_db):
    ids = add(project_db, NewMemory("uses argon2", related_files=["auth/hash.py"], session_id="s1"),
              NewMemory("plain note"))
    light = load_light(project_db.reads.conn(), ids, decode=False)
    first, second = light[ids[0]], light[ids[1]]
    assert isinstance(first, Memory) and first.session_id == "s1" and first.content == ""
    assert related_files(first) == ["auth/hash.py"]
    assert related_files(second) == [] and second.tags == ()
    with pytest.raises(AttributeError):
        second.tags.append("x")  # type: ignore[attr-defined]  # an empty default is shared, so read-only


def test_lazy_partials_equal_the_eager_ones():
    norm = {"bm25": normalise("bm25", {i: float(i % 7) for i in range(1, 40)}),
            "dense": normalise("dense", {i: 1.0 / i for i in range(5, 60)}), "graph": {}}
    weights = {"bm25": 0.6, "dense": 0.3, "graph": 0.1}
    ids = set(range(1, 60))
    totals, partials = score_fusion(norm, weights, ids)
    active = {p: w for p, w in weights.items() if norm[p]}
    for mid in ids:
        eager = {p: w / sum(active.values()) * norm[p].get(mid, 0.0) for p, w in active.items()}
        assert partials[mid] == {p: v for p, v in eager.items() if v > 0}
        assert totals[mid] == sum(eager.values())
    assert set(partials) == ids and partials.get(999) is None


def test_shared_session_lookup_gives_the_same_neighbours(project_db):
    ids = add(project_db, *[NewMemory(f"turn {i}", session_id="a" if i < 4 else "b") for i in range(8)])
    conn = project_db.reads.conn()
    known: dict[int, str | None] = {}
    first = P.session_neighbours(conn, ids[:3], known=known)
    assert first == P.session_neighbours(conn, ids[:3])
    assert P.session_neighbours(conn, ids, known=known) == P.session_neighbours(conn, ids)
    assert known[ids[0]] == "a" and known[ids[5]] == "b"


def test_has_filters_flags_every_filter_passes_filters_applies():
    mem = Memory(id=3, type="note", content="x", scope="project", confidence=0.5, related_files=["a.py"],
                 related_modules=["m"])
    assert not has_filters(SearchRequest("q"))
    for change in ({"exclude_ids": (3,)}, {"types": ["gotcha"]}, {"scope": ["global"]}, {"min_confidence": 0.9},
                   {"files": ["b.py"]}, {"modules": ["n"]}):
        req = SearchRequest("q", **change)  # type: ignore[arg-type]
        assert has_filters(req) and not passes_filters(None, mem, req, {}), change


def test_row_decoder_matches_column_by_column(project_db):
    add(project_db, NewMemory("with lists", tags=["t"], related_files=["f.py"], related_modules=["m"]))
    row = rows_as_dicts(project_db.reads.conn().execute("SELECT * FROM memories"))[0]
    mem = row_to_memory(row)
    names = {f.name for f in dataclasses.fields(Memory)}
    assert mem == Memory(**{k: decode_column(k, v) for k, v in row.items() if k in names})
    assert mem.tags == ["t"] and mem.related_files == ["f.py"] and mem.metadata == {} and mem.pinned is False


def test_row_decoder_fills_a_partial_row_and_shares_no_list(project_db):
    add(project_db, NewMemory("first"), NewMemory("second"))
    rows = rows_as_dicts(project_db.reads.conn().execute("SELECT * FROM memories ORDER BY id"))
    one, two = (row_to_memory(r) for r in rows)
    one.tags.append("x")
    assert two.tags == [] and type(one) is Memory
    partial = row_to_memory({"id": 5, "type": "note", "content": "c", "pinned": 1, "not_a_field": 2})
    assert partial == Memory(id=5, type="note", content="c", pinned=True)


def test_session_windows_are_read_by_primary_key_ranges_without_statistics(project_db):
    """A new project has no ANALYZE statistics: the window query must still start from the ids."""
    conn = project_db.reads.conn()
    assert not conn.execute("SELECT name FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchall()
    plan = " | ".join(str(r[-1]) for r in conn.execute("EXPLAIN QUERY PLAN " + P._WINDOWS_SQL, ("[1]", 3)))
    assert plan.index("SCAN c") < plan.index("SEARCH m"), plan
    assert "id>? AND id<?" in plan, plan
