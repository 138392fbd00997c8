"""Fusion, boosts, multipliers and filters with known answers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from retrieval_helpers import add, pipeline
from test_paths import FakeGraph

from desktop.memory.retrieval.fusion import context_boost, neighbourhood_boost, normalise, rrf, score_fusion
from desktop.memory.retrieval.weights import decayed_confidence, detect_query_type, quality_multipliers
from desktop.memory.service import MemoryService
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.types import Memory


def test_weighted_rrf_known_values():
    scores = rrf({"bm25": [(1, 9.0), (2, 5.0)], "dense": [(2, 0.9), (3, 0.5)]}, {"bm25": 0.5, "dense": 0.5}, k=60)
    assert scores[2] == pytest.approx(0.5 / 62 + 0.5 / 61)
    assert scores[1] == pytest.approx(0.5 / 61)
    assert max(scores, key=scores.get) == 2


def test_normalise_and_score_fusion_redistribute_missing_paths():
    norm = {"bm25": normalise("bm25", {1: 10.0, 2: 5.0, 3: 0.0}), "dense": {}, "graph": {}}
    assert norm["bm25"][1] == 1.0 and norm["bm25"][3] == 0.0
    totals, partials = score_fusion(norm, {"bm25": 0.5, "dense": 0.4, "graph": 0.1}, [1, 2, 3])
    assert totals[1] == pytest.approx(1.0)  # bm25 alone carries the whole weight
    assert partials[1] == {"bm25": pytest.approx(1.0)}


def test_context_boost_lends_neighbour_relevance():
    boost = context_boost({1: 1.0, 2: 0.0}, {2: [1], 1: [2]}, share=0.3)
    assert boost == {2: pytest.approx(0.3)}


def test_neighbourhood_boost_only_below_top_k():
    ranked = [(i, 1.0 - i / 100) for i in range(1, 30)]
    files = {15: ["a.py", "b.py"], 20: ["z.py"]}
    boost = neighbourhood_boost(ranked, files, {"a.py", "b.py"}, top_k=10)
    assert set(boost) == {15} and boost[15] == pytest.approx(0.3 * 2 / 10 * ranked[0][1])


def test_query_type_detection():
    assert detect_query_type("where is verifyJwt called") == "identifier"
    assert detect_query_type("auth/tokens.ts expiry") == "identifier"
    assert detect_query_type("what depends on the billing module") == "structural"
    assert detect_query_type("why are logins slow on monday") == "semantic"


def test_decay_pinned_and_decisions_never_decay():
    now = datetime(2026, 1, 1, tzinfo=UTC)
    old = (now - timedelta(days=60)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    gotcha = Memory(1, "gotcha", "x", confidence=0.8, last_accessed_at=old, decay_half_life_days=60)
    assert decayed_confidence(gotcha, now) == pytest.approx(0.4)
    assert decayed_confidence(Memory(2, "decision", "x", confidence=0.8, last_accessed_at=old), now) == 0.8
    pinned = Memory(3, "gotcha", "x", confidence=0.8, last_accessed_at=old, decay_half_life_days=60, pinned=True)
    assert decayed_confidence(pinned, now) == 0.8
    assert quality_multipliers(gotcha, "implement", now)["phase"] == 1.4
    assert quality_multipliers(Memory(4, "note", "x", source="observer_inferred"), None, now)["trust"] < 1


def test_phase_reorders_equal_matches(project_db, tiny):
    ids = add(project_db, NewMemory("retry the upload on timeout", type="error_pattern"),
              NewMemory("retry the upload on timeout please", type="module_insight"))
    pipe, _ = pipeline(project_db, tiny)
    assert pipe.search("retry upload timeout", phase="validate").ids[0] == ids[0]
    assert pipe.search("retry upload timeout", phase="explore").ids[0] == ids[1]
    pipe.close()


def test_filters_and_deprecated(project_db, tiny):
    ids = add(project_db,
              NewMemory("cache keys include the tenant", type="gotcha", related_files=["cache/keys.py"],
                        related_modules=["cache"], scope="module", confidence=0.9),
              NewMemory("cache is flushed nightly", type="decision", confidence=0.3),
              NewMemory("cache warming runs at boot", type="note"),
              NewMemory("cache misses are logged", type="note"))
    MemoryService(project_db).deprecate(ids[3]).result()
    pipe, _ = pipeline(project_db, tiny)
    everything = set(pipe.search("cache", limit=10).ids)
    assert ids[3] not in everything and {ids[0], ids[1], ids[2]} <= everything
    assert pipe.search("cache", types=["decision"]).ids == [ids[1]]
    assert pipe.search("cache", files=["cache/keys.py"]).ids == [ids[0]]
    assert pipe.search("cache", modules=["cache"]).ids == [ids[0]]
    assert pipe.search("cache", scope="module").ids == [ids[0]]
    assert ids[1] not in pipe.search("cache", min_confidence=0.5).ids
    assert set(pipe.search("cache", exclude_ids=(ids[0],)).ids) == {ids[1], ids[2]}
    pipe.close()


def test_graph_boost_and_explanations(project_db, tiny):
    filler = [NewMemory(f"deploy step {i} of the release checklist", related_files=[f"ops/s{i}.sh"])
              for i in range(14)]
    ids = add(project_db, *filler, NewMemory("deploy notes for the api", related_files=["api/routes.py"]),
              NewMemory("deploy the release", related_files=["ops/release.sh"]))
    graph = FakeGraph({"ops/release.sh": ["api/routes.py"]})
    pipe, _ = pipeline(project_db, tiny, graph=graph)
    resp = pipe.search("deploy release", limit=20, explain=True)
    by_id = {r.memory.id: r for r in resp.results}
    target = by_id.get(ids[-2])
    top = resp.results[0]
    assert top.explanation.paths and top.explanation.partial and top.explanation.multipliers
    if target is not None and resp.ids.index(ids[-2]) >= 1:
        assert "graph_neighbourhood" in target.explanation.boosts or resp.ids.index(ids[-2]) < 10
    pipe.close()


def test_session_context_surfaces_the_answer_turn(project_db, tiny):
    ids = add(project_db, NewMemory("Why does the nightly export crash?", session_id="s"),
              NewMemory("Because the disk quota is 2 GB.", session_id="s"),
              NewMemory("unrelated chatter about lunch", session_id="t"))
    pipe, _ = pipeline(project_db, tiny)
    resp = pipe.search("nightly export crash", limit=3, explain=True)
    assert resp.ids[:2] == [ids[0], ids[1]]
    assert resp.results[1].explanation.boosts["session_context"] > 0
    pipe.close()


@pytest.mark.timeout(20)
def test_a_pasted_megabyte_is_typed_in_linear_time() -> None:
    # One 1 MB word with no slash: a path pattern tried at every position of it backtracked over the
    # rest each time (a 100 kB query took 37 s in `engram search`); now well under a second.
    assert detect_query_type("x" * 1_000_000 + " why does it fail") == "semantic"
    assert detect_query_type("x" * 100_000 + " see cmd/entire/cli") == "identifier"
