"""Query-term coverage re-scoring on a tiny hand-built set."""

from __future__ import annotations

import pytest

from desktop.memory.retrieval.coverage import coverage, coverage_boost, query_stems

TEXTS = {
    1: "Caroline: painting painting painting, I love painting",
    2: "Caroline: I painted a sunrise at the lake last week",
    3: "Melanie: the lake was cold",
}


def _contents(ids):
    return {i: TEXTS[i] for i in ids}


def test_coverage_counts_distinct_stemmed_terms():
    q = query_stems("When did Caroline paint the lake?")
    assert q == ["caroline", "paint", "lake"]
    assert coverage(q, TEXTS[2]) == pytest.approx(1.0)  # "painted" meets "paint"
    assert coverage(q, TEXTS[1]) == pytest.approx(2 / 3)  # repetition does not count twice
    assert coverage(q, TEXTS[3]) == pytest.approx(1 / 3)
    assert coverage(query_stems("verify jwt"), "calls verifyJwt first") == 1.0  # identifiers split


def test_coverage_boost_reorders_head_only():
    ranked = [(1, 1.0), (2, 0.95), (3, 0.5), (4, 0.1)]
    out, boosts = coverage_boost("When did Caroline paint the lake?", ranked, _contents, weight=0.3, depth=3)
    assert [m for m, _s in out] == [2, 1, 3, 4]  # full coverage overtakes the term-repeater
    assert out[0][1] == pytest.approx(0.95 + 0.3)
    assert boosts[3] == pytest.approx(0.1)
    assert out[-1] == (4, 0.1)  # below the depth: untouched


def test_coverage_boost_is_a_no_op_without_terms_or_weight():
    ranked = [(1, 1.0), (2, 0.9)]
    assert coverage_boost("the of and", ranked, _contents)[0] == ranked
    assert coverage_boost("lake", ranked, _contents, weight=0.0)[0] == ranked


def test_found_stems_agrees_with_the_whole_term_set():
    """The substring shortcut finds exactly the stems the text's full term set holds."""
    import random

    from desktop.memory.retrieval.coverage import found_stems, term_set

    words = ["HTTPServerError", "verifyJwt", "painted", "paint", "x2y", "ABC123def", "running", "runs",
             "a_b", "e", "es", "Caroline's", "getLinesReplied", "v2", "123abc", "XMLHttpRequest", "naïve",
             "Straße", "ly", "lakes", "serve"]
    rnd = random.Random(5)
    for _ in range(3000):
        text = " ".join(rnd.choice(words) + rnd.choice(["", ".", "/", "_", "-", "()", ","])
                        for _ in range(rnd.randint(0, 8)))
        stems = query_stems(" ".join(rnd.choice(words) for _ in range(rnd.randint(1, 4))))
        terms = term_set(text)
        assert found_stems(stems, text) == [t for t in stems if t in terms], (stems, text)
    # A stem inside a longer word does not count unless that word's own stems hold it.
    assert found_stems(["serve"], "the observer ran") == []
    assert found_stems(["serve", "server"], "HTTPServerError") == ["server"]
