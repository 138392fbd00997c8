"""BM25 with a postings budget, and exact token counting for packing."""

from __future__ import annotations

from pathlib import Path

import pytest
from retrieval_helpers import add, pipeline

from desktop.memory.retrieval import paths as P
from desktop.memory.retrieval.lexical import LexicalSearch, match_terms
from desktop.memory.retrieval.packing import token_counts
from desktop.memory.retrieval.wordpiece import load_tokenizer, load_vocabulary, wordpiece_count


def _corpus(db) -> list[int]:
    """40 memories that all say "service", 6 that say "timeout", 2 that say "kafka"."""
    items = [f"the service number {i} handles requests" for i in range(40)]
    items += [f"the service {i} hit a timeout under load" for i in range(6)]
    items += ["kafka consumer lag grows when the broker restarts", "kafka offsets reset after a timeout"]
    return add(db, *items)


def test_below_the_budget_ranking_is_exactly_fts5(project_db):
    _corpus(project_db)
    conn = project_db.reads.conn()
    lex = LexicalSearch()  # floor 3000 postings: nothing is dropped in a small project
    for query in ("kafka timeout service", "service", "kafka", "timeout restarts"):
        assert lex.search(conn, query, 20) == P.bm25_path(conn, query, 20)


def test_common_terms_are_dropped_rarest_first(project_db):
    ids = _corpus(project_db)
    conn = project_db.reads.conn()
    lex = LexicalSearch(10, share=0.0)  # at most 10 postings per search
    kept, dropped = lex.plan(conn, ["service", "kafka", "timeout", "nowhere"])
    assert kept == ["kafka", "timeout"] and dropped == ["service", "nowhere"]
    hits, match = lex.search(conn, "kafka timeout service", 20)
    assert match_terms(match) == ["kafka", "timeout"]
    found = {m for m, _s in hits}
    assert {ids[-1], ids[-2]} <= found and ids[0] not in found
    assert hits[0][0] == ids[-1]  # the memory with both selective terms ranks first
    # The rarest term is always kept, even when it alone exceeds the budget.
    kept, _ = LexicalSearch(1, share=0.0).plan(conn, ["service", "timeout"])
    assert kept == ["timeout"]


def test_budget_grows_with_the_project(project_db):
    _corpus(project_db)
    conn = project_db.reads.conn()
    assert LexicalSearch(5, share=0.5).budget(conn) == 24  # half of 48 live memories
    assert LexicalSearch(100, share=0.5).budget(conn) == 100
    assert LexicalSearch(None).budget(conn) is None


def test_document_frequencies_are_cached_until_they_expire(project_db):
    _corpus(project_db)
    conn = project_db.reads.conn()
    now = [0.0]
    lex = LexicalSearch(ttl_s=10, clock=lambda: now[0])
    assert lex.document_frequency(conn, "kafka") == 2
    add(project_db, "kafka again")
    assert lex.document_frequency(conn, "kafka") == 2  # cached
    now[0] = 11.0
    assert lex.document_frequency(conn, "kafka") == 3


def test_pipeline_uses_the_budgeted_path(project_db, tiny):
    ids = _corpus(project_db)
    pipe, _emb = pipeline(project_db, tiny)
    pipe.lexical = LexicalSearch(10, share=0.0)
    resp = pipe.search("kafka timeout service", limit=3, explain=True)
    assert resp.ids[0] == ids[-1] and resp.results[0].explanation.paths.get("bm25") == 1
    pipe.close()


@pytest.mark.parametrize("text", [
    "- call verifyJwt() in src/auth/tokens.ts [Memory #12: call verifyJwt…]",
    "## src/a_b/c-d.py", "Ünïcödé, naïve café 東京タワー 🚀 e\u0301 x\u00a0y", "[PAD] and [pad] literally",
    "tabs\tand\nnewlines\r\n", "", "x" * 300, "a\x0bb",
    "[Memory #12: call verifyJwt…] “quoted” — dash…x «é» ⚠ CONFLICT", "…", "a…b…", "x…" + "y" * 120,
])
def test_fast_token_counts_equal_the_tokenizer(text):
    tok = load_tokenizer()
    assert tok is not None, "the bundled tokenizer did not load"
    real = len(tok.encode(text, add_special_tokens=False).ids)
    fast = wordpiece_count(text)
    assert fast is None or fast == real
    assert token_counts([text]) == [real]


def test_wordpiece_rule_counts_a_real_corpus_like_the_tokenizer():
    """The vocabulary-only count (no tokenizers import) is the tokenizer's, word for word, on
    Engram's own code and docs: identifiers, paths, punctuation, long words."""
    assert load_vocabulary() is not None
    tok = load_tokenizer()
    root = Path(__file__).resolve().parents[2]
    corpus = "\n".join(p.read_text(encoding="utf-8") for p in [
        root / "desktop" / "memory" / "retrieval" / "packing.py", root / "desktop" / "memory" / "store" / "writer.py",
        root / "README.md"])
    words = list(dict.fromkeys(w for w in corpus.split() if w.isascii()))
    assert len(words) > 2000
    fast = [wordpiece_count(w) for w in words]
    real = [len(e.ids) for e in tok.encode_batch(words, add_special_tokens=False)]
    assert [(w, f) for w, f, r in zip(words, fast, real, strict=True) if f != r] == []
    cut = "[Memory #12: call verifyJwt…] “quoted” — ok"  # every cut citation ends in "…"
    assert wordpiece_count(cut) == len(tok.encode(cut, add_special_tokens=False).ids)
