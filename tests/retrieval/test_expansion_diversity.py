"""Query expansion from the top lexical hits, the reply/neighbour context, MMR and the params value."""

from __future__ import annotations

import numpy as np
import pytest
from retrieval_helpers import add, pipeline

from desktop.memory.retrieval.coverage import coverage_boost
from desktop.memory.retrieval.feedback import expansion_terms
from desktop.memory.retrieval.fusion import context_boost
from desktop.memory.retrieval.params import DEFAULT_PARAMS, RetrievalParams
from desktop.memory.retrieval.rescore import mmr
from desktop.memory.store.memory_ops import NewMemory


def test_expansion_terms_weigh_co_occurring_informative_words():
    docs = [("the adoption agency interview went well, adoption papers next", 9.0),
            ("an agency for adoption and foster care", 6.0)]
    df = {"adoption": 3, "agency": 2, "interview": 1, "papers": 1, "foster": 1, "care": 40, "went": 50, "well": 60,
          "next": 55}
    terms = expansion_terms("What did Caroline research?", docs, lambda t: df.get(t, 0), 100, 3)
    assert terms[0] == "adoption"  # in both feedback documents, rare in the project
    assert "research" not in terms and "caroline" not in terms  # never a query term
    assert not {"went", "well", "next"} & set(terms)  # in more than half of the memories: no information
    assert expansion_terms("q", [], lambda t: 1, 100, 3) == []


def test_prf_path_finds_the_answer_that_shares_no_query_word(project_db, tiny):
    ids = add(project_db,
              NewMemory("Caroline: I researched adoption agencies this week", session_id="a"),
              NewMemory("Caroline: the adoption agencies want a home study", session_id="b"),
              NewMemory("Caroline: a home study means interviews about the family", session_id="c"),
              *[NewMemory(f"Melanie: note {i} about pottery and running", session_id="d") for i in range(20)])
    off, _ = pipeline(project_db, tiny, params=DEFAULT_PARAMS.with_(prf_weight=0.0))
    on, _ = pipeline(project_db, tiny, params=DEFAULT_PARAMS.with_(prf_weight=0.5, prf_docs=2, prf_terms=4))
    query = "What did Caroline research?"
    with_prf = on.search(query, limit=5, explain=True)
    assert ids[1] in with_prf.ids[:3]  # reached through "adoption agencies", not through a query word
    assert "prf" in with_prf.timings
    assert any("prf" in r.explanation.paths for r in with_prf.results)
    assert not any("prf" in r.explanation.paths for r in off.search(query, limit=5, explain=True).results)
    off.close()
    on.close()


def test_reply_share_lends_the_question_turn_relevance_to_its_answer():
    scores = {1: 1.0, 2: 0.0, 3: 0.0}
    neighbours = {2: [1, 3], 3: [2]}
    boost = context_boost(scores, neighbours, share=0.0, reply_share=0.4)
    assert boost == {2: pytest.approx(0.4)}  # 2 follows the relevant turn 1; 3 follows an irrelevant one
    # Directional: the turn *before* a relevant one gets nothing from reply_share.
    assert context_boost({1: 0.0, 2: 1.0}, {1: [2]}, share=0.0, reply_share=0.4) == {}


def test_reply_share_in_a_search_surfaces_the_answer_turn(project_db, tiny):
    ids = add(project_db,
              NewMemory("Caroline: How long have you been married?", session_id="s"),
              NewMemory("Melanie: 5 years already! Time flies.", session_id="s"),
              *[NewMemory(f"Melanie: married friends {i} visited the lake", session_id=f"t{i}") for i in range(12)])
    on, _ = pipeline(project_db, tiny, params=DEFAULT_PARAMS.with_(context_share=0.0, reply_share=0.6))
    off, _ = pipeline(project_db, tiny, params=DEFAULT_PARAMS.with_(context_share=0.0, reply_share=0.0))
    query = "How long have Melanie and her husband been married?"
    assert ids[1] in on.search(query, limit=3).ids
    assert ids[1] not in off.search(query, limit=3).ids
    on.close()
    off.close()


def test_coverage_context_counts_terms_of_the_neighbours():
    texts = {1: "Melanie: 5 years already!", 2: "Melanie: we love the lake"}
    near = {1: "Caroline: how long have you been married?"}
    ranked = [(2, 1.0), (1, 0.99)]
    plain, _ = coverage_boost("how long married", ranked, lambda ids: texts, 0.3, 30)
    ctx, boosts = coverage_boost("how long married", ranked, lambda ids: texts, 0.3, 30,
                                 context=lambda ids: near, context_weight=0.5)
    assert [m for m, _s in plain] == [2, 1]
    assert [m for m, _s in ctx] == [1, 2] and boosts[1] > 0


def test_mmr_demotes_a_near_duplicate_below_a_different_fact():
    v = {1: np.array([1.0, 0.0]), 2: np.array([0.999, 0.0447]), 3: np.array([0.0, 1.0])}
    ranked = [(1, 1.0), (2, 0.98), (3, 0.9), (4, 0.1)]
    assert mmr(ranked, v, 1.0) == ranked  # lambda 1: relevance order
    out = mmr(ranked, v, 0.7, k=3, depth=3)
    assert [m for m, _s in out] == [1, 3, 2, 4]  # the duplicate of #1 drops below the other fact
    assert out[-1] == (4, 0.1)  # below the depth: untouched


def test_params_round_trip_and_defaults():
    p = DEFAULT_PARAMS.with_(prf_weight=0.2)
    assert RetrievalParams.from_dict({**p.to_dict(), "from_a_newer_app": 1}) == p
    with pytest.raises(TypeError):
        DEFAULT_PARAMS.with_(no_such_weight=1.0)
    assert 0.0 <= DEFAULT_PARAMS.bm25_share <= 1.0 and 0.0 < DEFAULT_PARAMS.mmr_lambda <= 1.0
