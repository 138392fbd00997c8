"""BM25 through FTS5 with a postings budget: the lexical candidate path.

FTS5 evaluates ``ORDER BY bm25 LIMIT k`` in C, but to rank it must score
*every* document that matches the OR of the query's terms, and each score
reads that document's length. A common word ("self", "return", a speaker's
name) matches a third of a large project, so one such term made BM25 cost
10-30 ms at 100,000 memories while contributing almost nothing to the
ranking: its IDF, ``log((N - n + 0.5) / (n + 0.5))``, is the smallest of the query.

So the query's terms are ordered by document frequency (rarest first) and
kept while their summed postings stay within the budget: the larger of
:data:`POSTINGS_FLOOR` and :data:`POSTINGS_SHARE` of the memories; the rarest
term is always kept. What is dropped is the low-IDF tail, the terms
dynamic-pruning schemes (MaxScore, WAND) skip first. Below the floor (every
project under ~10,000 memories, LoCoMo included) nothing is dropped and the
ranking is exactly FTS5's. Measured on the benchmark's Zipf corpus: top-10
agreement with exact BM25 0.95 at 10,000 and 0.93 at 100,000 memories, where
BM25 falls from 20 ms to ~6.5 ms (p50). Budgets of 5-10 % of the memories were
faster still but, emulated on LoCoMo, cost 2-4 points of nDCG@10; 30 % cost
under one. Document frequencies are counted once per term and cached for
:data:`DF_TTL_S`: a stale count only changes which tail terms are dropped,
never a score, since FTS5 still computes BM25 itself.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from typing import Any

from desktop.memory.store.live import LIVE_SQL
from desktop.memory.text.tokens import fts_match_query

__all__ = ["DF_TTL_S", "POSTINGS_FLOOR", "POSTINGS_SHARE", "LexicalSearch", "match_terms"]

log = logging.getLogger("engram.retrieval")

# ~0.5-1 us of FTS5 ranking work per posting on the 2-core reference machine.
POSTINGS_FLOOR = 3000
POSTINGS_SHARE = 0.3
DF_TTL_S = 120.0
_DF_CACHE = 8192


def match_terms(match: str) -> list[str]:
    """The quoted terms of a :func:`fts_match_query` OR expression, unquoted."""
    return [t[1:-1].replace('""', '"') for t in match.split(" OR ")]


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


class LexicalSearch:
    """BM25 top-k with a postings budget and a shared, thread-safe document-frequency cache."""

    def __init__(self, floor: int | None = POSTINGS_FLOOR, *, share: float = POSTINGS_SHARE,
                 ttl_s: float = DF_TTL_S, clock: Any = time.monotonic) -> None:
        """``floor`` None disables pruning (exact FTS5 ranking over every matching document)."""
        self.floor = floor
        self.share = share
        self._total: tuple[int, float] | None = None
        self.ttl_s = ttl_s
        self._clock = clock
        self._df: OrderedDict[str, tuple[int, float]] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        """Forget every cached document frequency."""
        with self._lock:
            self._df.clear()

    def document_frequency(self, conn: Any, term: str) -> int:
        """How many memories contain ``term`` (cached for ``ttl_s``)."""
        now = self._clock()
        with self._lock:
            hit = self._df.get(term)
            if hit is not None and now - hit[1] < self.ttl_s:
                self._df.move_to_end(term)
                return hit[0]
        n = int(conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?",
                             (_quote(term),)).fetchall()[0][0])
        with self._lock:
            self._df[term] = (n, now)
            while len(self._df) > _DF_CACHE:
                self._df.popitem(last=False)
        return n

    def total_memories(self, conn: Any) -> int:
        """Live memories in the project (cached for ``ttl_s``, like the document frequencies)."""
        now = self._clock()
        total = self._total
        if total is None or now - total[1] >= self.ttl_s:
            n = int(conn.execute(f"SELECT count(*) FROM memories WHERE {LIVE_SQL}").fetchall()[0][0])
            self._total = total = (n, now)
        return total[0]

    def budget(self, conn: Any) -> int | None:
        """Postings one search may rank: max(floor, share x live memories); None when unlimited."""
        if self.floor is None:
            return None
        return max(self.floor, int(self.share * self.total_memories(conn)))

    def plan(self, conn: Any, terms: list[str]) -> tuple[list[str], list[str]]:
        """(kept terms, dropped terms) under the postings budget; terms no memory has are dropped."""
        budget = self.budget(conn)
        if budget is None or len(terms) <= 1:
            return terms, []
        dfs = {t: self.document_frequency(conn, t) for t in terms}
        order = sorted((t for t in terms if dfs[t] > 0), key=lambda t: (dfs[t], t))
        kept: list[str] = []
        total = 0
        for t in order:
            if kept and total + dfs[t] > budget:
                break
            kept.append(t)
            total += dfs[t]
        keep = set(kept)
        return [t for t in terms if t in keep], [t for t in terms if t not in keep]

    def search(self, conn: Any, query: str, k: int, *, code: bool = True) -> tuple[list[tuple[int, float]], str | None]:
        """Top-``k`` memories by FTS5 BM25 (higher is better) and the MATCH expression used.

        The MATCH is an OR of the query's code-aware terms (identifiers split into
        parts, stopwords dropped, every term quoted so user text is never syntax),
        so ``verify jwt`` finds ``verifyJwt``, ``verify_jwt`` and ``auth/verify/jwt.ts``.
        With ``code=False`` code-index chunks are left out before the top ``k`` is taken, so a
        project's thousands of chunks cannot crowd its few memories out of the candidates.
        """
        match = fts_match_query(query, "or")
        if match is None:
            return [], None
        kept, dropped = self.plan(conn, match_terms(match))
        if not kept:
            return [], match
        if dropped:
            match = " OR ".join(_quote(t) for t in kept)
            log.debug("bm25 dropped common terms %s", dropped)
        # ORDER BY the selected bm25() lets SQLite keep a bounded top-k heap; ORDER BY rank sends FTS5
        # through its sorted-query mode instead, ~40% slower for the same rows in the same order.
        if code:
            rows = conn.execute("SELECT rowid, bm25(memories_fts) AS score FROM memories_fts "
                                "WHERE memories_fts MATCH ? ORDER BY score LIMIT ?", (match, k)).fetchall()
        else:
            rows = conn.execute("SELECT f.rowid, bm25(memories_fts) AS score FROM memories_fts f "
                                "JOIN memories m ON m.id = f.rowid WHERE memories_fts MATCH ? "
                                "AND m.type <> 'code' ORDER BY score LIMIT ?", (match, k)).fetchall()
        # FTS5's bm25() is negative, more negative = better; flip so bigger is better everywhere.
        return [(int(r), -float(s)) for r, s in rows], match
