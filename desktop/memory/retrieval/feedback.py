"""Query expansion from the top lexical hits (pseudo-relevance feedback, RM3-like).

A question rarely uses the words of its answer ("what did Caroline research?"
vs "adoption agencies"), but the best BM25 hits usually share the answer's
vocabulary with it. RM3 (Abdul-Jaleel et al., 2004) takes the top ``docs`` hits,
weighs each of their terms by its share of the document times the document's
relevance, keeps the ``terms`` best that are informative (IDF) and not already
in the query, and searches again with the query plus those terms. Engram adds
that second lexical ranking as its own path ("prf") in score fusion, so a poor
expansion can only dilute, never replace, the original BM25 ranking.

Document frequencies come from :class:`LexicalSearch`'s shared cache, and only
for the few best-weighted candidate terms, so the cost is one extra FTS5 query
plus a handful of cached counts.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from desktop.memory.retrieval.coverage import stem
from desktop.memory.text.tokens import _STOPWORDS, _query_terms

__all__ = ["expansion_terms", "feedback_path"]

_WORD = re.compile(r"[^\W\d_]{3,}")
# Candidate terms whose document frequency is looked up: a few times the terms kept.
_LOOKUP_FACTOR = 3


def expansion_terms(query: str, docs: list[tuple[str, float]], df: Callable[[str], int], total: int,
                    n_terms: int) -> list[str]:
    """The ``n_terms`` best expansion terms from ``docs`` ((text, BM25 score) best first).

    Weight of a term: sum over the feedback documents of (term count / document
    length) x (document score / summed scores), times its IDF. Terms of the
    query (compared by stem), stopwords, digits and words under 3 letters are
    never proposed; neither is a term in more than half of the memories.
    """
    if not docs or n_terms <= 0 or total <= 0:
        return []
    qstems = {stem(t) for t in _query_terms(query, whole=False)}
    mass = sum(max(s, 0.0) for _t, s in docs) or float(len(docs))
    weight: dict[str, float] = {}
    for text, score in docs:
        words = [w.lower() for w in _WORD.findall(text)]
        # Every occurrence counts (a term the hit repeats is more likely its topic).
        terms = [w for w in words if w not in _STOPWORDS and stem(w) not in qstems]
        if not terms:
            continue
        share = (max(score, 0.0) or 1.0) / mass
        for term, count in Counter(terms).items():
            weight[term] = weight.get(term, 0.0) + count / len(words) * share
    out: list[tuple[float, str]] = []
    for term, w in sorted(weight.items(), key=lambda x: (-x[1], x[0]))[:n_terms * _LOOKUP_FACTOR]:
        n = df(term)
        if n <= 0 or n > total / 2:
            continue
        out.append((w * math.log(total / n), term))
    out.sort(key=lambda x: (-x[0], x[1]))
    return [t for _w, t in out[:n_terms]]


def feedback_path(lexical: Any, conn: Any, query: str, bm25: list[tuple[int, float]],
                  contents: Callable[[list[int]], dict[int, str]], n_docs: int, n_terms: int,
                  k: int) -> tuple[list[tuple[int, float]], list[str]]:
    """The expanded lexical ranking and the terms added; ([], []) when nothing was expanded."""
    head = bm25[:n_docs]
    if not head or n_terms <= 0:
        return [], []
    texts = contents([mid for mid, _s in head])
    docs = [(texts[mid], s) for mid, s in head if mid in texts]
    total = lexical.total_memories(conn)
    terms = expansion_terms(query, docs, lambda t: lexical.document_frequency(conn, t), total, n_terms)
    if not terms:
        return [], []
    hits, _match = lexical.search(conn, f"{query} {' '.join(terms)}", k)
    return hits, terms
