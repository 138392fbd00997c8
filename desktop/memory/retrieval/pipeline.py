"""The retrieval pipeline: candidates -> fusion and scoring -> (rerank) -> (HyDE) -> packing.

Stage 1 runs BM25 (with a postings budget, see :mod:`.lexical`), the graph
path and, when weighted, the query-expansion path (:mod:`.feedback`) in SQL
while the query is embedded on a worker thread (onnxruntime and SQLite both
release the GIL), reading the lexical candidates' scoring rows in that wait,
then the dense path. Stage 2 fuses normalised scores with query-type weights,
adds the session neighbours of the best *fused* candidates and lends them a
share of each other's relevance (and a reply the relevance of the turn it
answers), applies phase / trust / confidence / usage multipliers and the graph
neighbourhood boost, then re-scores the best ~30 by query-term coverage
(:mod:`.coverage`), by time (:mod:`.timeref`, :mod:`.rescore`) and for
diversity (MMR). Every weight comes from :class:`RetrievalParams`
(:mod:`.params`), chosen by cross-validation. Full rows and explanations are
built only for what is returned. Optional LLM stages run only when configured
and only within the SLO.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import datetime
from typing import Any

import numpy as np

from desktop.memory.retrieval import paths as P
from desktop.memory.retrieval.candidates import CandidateSet, has_filters, load_light, passes_filters, related_files
from desktop.memory.retrieval.coverage import coverage_boost
from desktop.memory.retrieval.feedback import feedback_path
from desktop.memory.retrieval.fusion import (
    FusionParts,
    context_boost,
    neighbourhood_boost,
    normalise,
    rrf,
    score_fusion,
)
from desktop.memory.retrieval.lexical import LexicalSearch
from desktop.memory.retrieval.llm_stages import HydeWriter, Reranker, StageUnavailable
from desktop.memory.retrieval.packing import pack
from desktop.memory.retrieval.params import DEFAULT_PARAMS, RetrievalParams
from desktop.memory.retrieval.rescore import mmr, time_boost
from desktop.memory.retrieval.slo import SloMonitor
from desktop.memory.retrieval.types import Explanation, SearchRequest, SearchResponse, SearchResult
from desktop.memory.retrieval.weights import (
    PATH_WEIGHTS,
    RRF_WEIGHTS,
    detect_query_type,
    parse_time,
    quality_multipliers,
)
from desktop.memory.store.database import Database
from desktop.memory.store.live import LIVE_MEMORY_SQL
from desktop.memory.types import MemoryType

__all__ = ["RetrievalPipeline"]

log = logging.getLogger("engram.retrieval")

WELL_SCORED = 0.5   # relevance (0..1) a result needs to count as "scores well" for HyDE
RERANK_TOP = 20
GRAPH_WINDOW = 50  # candidates 11..50 may receive the graph neighbourhood boost
# A memories-only search scores every memory's vector (one product, ~0.5 ms per 10,000) rather than
# the index's top k, which a project's code chunks would fill; above this it falls back to the index.
MEMORIES_SCANNED = 200_000


class RetrievalPipeline:
    """Hybrid search over one project's memories. Thread-safe; reads only (access is recorded via ops)."""

    def __init__(self, db: Database, embeddings: Any | None = None, *, graph: Any | None = None,
                 reranker: Reranker | None = None, hyde: HydeWriter | None = None,
                 slo: SloMonitor | None = None, clock: Any = None, embed_timeout_s: float = 2.0,
                 params: RetrievalParams | None = None) -> None:
        """``embeddings`` is an EmbeddingService (None: no dense path); ``graph`` a GraphQueries-like
        object with ``neighbours(files, depth)``; ``clock`` returns the current aware datetime;
        ``params`` the scoring weights (default: the cross-validated :data:`DEFAULT_PARAMS`)."""
        self.params = params or DEFAULT_PARAMS
        self.db = db
        self.embeddings = embeddings
        self.graph = graph
        self.reranker = reranker
        self.hyde = hyde
        self.slo = slo or SloMonitor()
        self.clock = clock or db.clock
        self.embed_timeout_s = embed_timeout_s
        self.lexical = LexicalSearch()
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="engram-search")

    def close(self) -> None:
        """Stop the worker threads and close the LLM stages' HTTP connections."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        for stage in (self.reranker, self.hyde):
            closer = getattr(stage, "close", None)
            if callable(closer):
                try:
                    closer()
                except Exception:  # closing HTTP pools must not fail a project close
                    log.debug("closing %s failed", type(stage).__name__, exc_info=True)

    # -- stage 1 -----------------------------------------------------------------------
    def _start_embedding(self, query: str) -> Future[np.ndarray] | None:
        emb = self.embeddings
        if emb is None or emb.space is None:
            return None
        return self._pool.submit(emb.embed_query, query)

    def _dense(self, fut: Future[np.ndarray] | None, k: int, resp: SearchResponse, *, conn: Any = None
               ) -> tuple[np.ndarray | None, list[tuple[int, float]]]:
        """The dense path's top ``k``; with ``conn`` (memories only) over the non-code memories."""
        emb = self.embeddings
        if fut is None or emb is None:  # fut is only made when embeddings are set (_start_embedding)
            resp.skipped["dense"] = "no embedding model available"
            return None, []
        try:
            qvec = fut.result(timeout=self.embed_timeout_s)
        except FutureTimeout:
            resp.skipped["dense"] = "query embedding timed out"
            return None, []
        except Exception as exc:  # a provider failure skips the path, never the search
            resp.skipped["dense"] = f"query embedding failed: {getattr(exc, 'code', type(exc).__name__)}"
            return None, []
        if conn is not None:
            ids = [r[0] for r in conn.execute(f"SELECT id FROM memories WHERE {LIVE_MEMORY_SQL}")]
            sims = emb.similarities(qvec, ids) if len(ids) <= MEMORIES_SCANNED else {}
            if sims or not ids:
                resp.dense_method = "memories"
                return qvec, sorted(sims.items(), key=lambda x: (-x[1], x[0]))[:k]
        hits, method = emb.search(qvec, k)
        resp.dense_method = method
        return qvec, hits

    # -- the search --------------------------------------------------------------------
    def search(self, query: str, *, limit: int = 10, types: list[str] | None = None,
               files: list[str] | None = None, modules: list[str] | None = None,
               scope: list[str] | str | None = None, min_confidence: float | None = None,
               exclude_ids: tuple[int, ...] | list[int] = (), phase: str | None = None,
               touched_files: tuple[str, ...] | list[str] = (), mode: str = "reactive",
               explain: bool = False, pack_tokens: int | None = None, code: bool = True) -> SearchResponse:
        """Search; see :class:`SearchRequest` for the parameters. ``pack_tokens`` also packs the results
        (proactive searches pack with the phase's budget by default)."""
        req = SearchRequest(query, limit, types, files, modules, [scope] if isinstance(scope, str) else scope,
                            min_confidence, tuple(exclude_ids), phase, tuple(touched_files), mode, explain,
                            code or bool(types and MemoryType.CODE.value in types))
        req.validate()
        started = time.perf_counter()
        limits = self.slo.limits()
        resp = SearchResponse(results=[], degraded=self.slo.degraded)
        qtype = detect_query_type(query)
        resp.query_type = qtype
        filtered = bool(types or files or modules or scope or min_confidence is not None or exclude_ids
                        or not req.code)
        k = limits.candidates * (3 if filtered else 1)
        blank = not query.strip()  # nothing to embed: the graph path (touched files) may still find something
        fut = None if blank else self._start_embedding(query)
        conn = self.db.reads.conn()
        t = time.perf_counter()
        bm25, match = self.lexical.search(conn, query, k, code=req.code)
        near_files = P.graph_files(conn, req.touched_files, self.graph)
        graph = P.graph_path(conn, near_files, k)
        decode = bool(req.files or req.modules)
        # While the query is still being embedded, read the lexical candidates' scoring rows.
        early = load_light(conn, [m for m, _s in bm25], decode=decode) if fut is not None and not fut.done() else {}
        resp.timings["bm25_graph"] = (time.perf_counter() - t) * 1000
        memo: dict[int, str] = {}
        prf: list[tuple[int, float]] = []
        if self.params.prf_weight > 0 and qtype == "semantic" and bm25:
            # Also SQL only, so it too runs while the query is being embedded.
            t = time.perf_counter()
            prf, terms = feedback_path(self.lexical, conn, query, bm25, lambda ids: _memo_texts(conn, memo, ids),
                                       self.params.prf_docs, self.params.prf_terms, k)
            resp.timings["prf"] = (time.perf_counter() - t) * 1000
            if terms:
                log.debug("prf expanded %r with %s", query, terms)
        t = time.perf_counter()
        qvec: np.ndarray | None = None
        dense: list[tuple[int, float]] = []
        if blank:
            resp.skipped["dense"] = "empty query"
        else:
            qvec, dense = self._dense(fut, k, resp, conn=None if req.code else conn)
        resp.timings["dense"] = (time.perf_counter() - t) * 1000
        paths = {"bm25": bm25, "dense": dense, "graph": graph, "prf": prf}
        t = time.perf_counter()
        cands = CandidateSet(paths)
        cands.memo = memo
        cands.light = early
        ranked = self._score(conn, req, cands, match, qvec, qtype, limits.neighbours)
        resp.timings["fusion"] = (time.perf_counter() - t) * 1000
        if self.hyde is not None and mode == "reactive" and limits.hyde and qvec is not None:
            good = sum(1 for mid, _s in ranked[:10] if cands.relevance.get(mid, 0.0) >= WELL_SCORED)
            if good < 3:
                ranked = self._with_hyde(conn, req, cands, match, qvec, qtype, limits.neighbours, ranked, resp)
        if self.reranker is not None and limits.rerank and len(ranked) > 1:
            ranked = self._rerank(conn, query, ranked, cands, resp)
        t = time.perf_counter()
        top = ranked[:limit]
        full = cands.full_memories(conn, [mid for mid, _s in top])
        resp.results = [SearchResult(full[mid], score, cands.explanation(mid)) for mid, score in top
                        if mid in full]
        for r in resp.results:
            r.explanation.query_type = qtype
        if pack_tokens is not None or mode == "proactive":
            resp.packed = pack(resp.results, pack_tokens, phase)
        resp.timings["finish"] = (time.perf_counter() - t) * 1000
        total = (time.perf_counter() - started) * 1000
        resp.timings["total"] = total
        self.slo.record(total)
        return resp

    # -- stage 2 -----------------------------------------------------------------------
    def _score(self, conn: Any, req: SearchRequest, cands: CandidateSet, match: str | None,
               qvec: np.ndarray | None, qtype: str, n_neighbours: int) -> list[tuple[int, float]]:
        """Fuse, boost and weigh every candidate; returns (id, score) best first (filters applied)."""
        rrf_scores = rrf(cands.paths, RRF_WEIGHTS[qtype])
        dense_raw = dict(cands.paths.get("dense", []))
        # Candidates BM25 did not rank lie below its k-th score; scoring them individually
        # (MATCH ... AND rowid IN) re-runs the whole match and cost 5x the rest of the
        # search while changing LoCoMo nDCG@10 by 0.003, so they count as 0 here.
        cands.raw = {"bm25": dict(cands.paths.get("bm25", [])), "dense": dense_raw,
                     "graph": dict(cands.paths.get("graph", []))}
        for late in ("hyde", "prf"):
            if late in cands.paths:
                cands.raw[late] = dict(cands.paths[late])
        p = self.params
        weights = dict(PATH_WEIGHTS[qtype])
        if qtype == "semantic":
            weights.update(bm25=p.bm25_share, dense=1.0 - p.bm25_share)
        weights["prf"] = p.prf_weight
        if "hyde" in cands.raw:
            # HyDE replaces the dense query (the design's secondary dense search) rather than adding a vote.
            weights["hyde"] = weights.pop("dense")
        ids = set(rrf_scores)
        relevance, partials = self._fuse(cands, ids, qvec, weights)
        # The session neighbours of the best fused candidates join the set (an answer sits right
        # after the question it answers, a fix right after its error); then fuse again over all.
        seeds = sorted(relevance, key=lambda m: (-relevance[m], m))[:n_neighbours]
        neighbours = P.session_neighbours(conn, seeds, known=cands.sessions)
        extra = {n for near in neighbours.values() for n in near} - ids
        if extra:
            ids |= extra
            relevance, partials = self._fuse(cands, ids, qvec, weights)
        cands.relevance = relevance
        boost = context_boost(relevance, neighbours, p.context_share, p.reply_share)
        base = {mid: relevance.get(mid, 0.0) + boost.get(mid, 0.0) for mid in ids}
        # Below this query's typical candidate on every path: noise, not a result (and not loaded).
        wanted = [mid for mid, b in base.items() if b > 0.0]
        light = {mid: cands.light[mid] for mid in wanted if mid in cands.light}
        light.update(load_light(conn, [mid for mid in wanted if mid not in light and mid not in cands.light],
                                decode=bool(req.files or req.modules)))
        now: datetime = self.clock()
        scored: list[tuple[int, float]] = []
        mults: dict[int, dict[str, float]] = {}
        check = has_filters(req)  # most searches filter nothing: no call per candidate then
        for mid, mem in light.items():
            if check and not passes_filters(conn, mem, req, light):
                continue
            mult = quality_multipliers(mem, req.phase, now)
            score = base[mid]
            for v in mult.values():
                score *= v
            mults[mid] = mult
            scored.append((mid, score))
        scored.sort(key=lambda x: (-x[1], x[0]))

        def explain(mid: int) -> Explanation:
            ex = Explanation(paths={p: cands.rank(p, mid) for p in cands.paths if cands.rank(p, mid)},
                             raw={p: raw[mid] for p, raw in cands.raw.items() if mid in raw},
                             partial=partials.get(mid, {}), rrf=rrf_scores.get(mid, 0.0),
                             relevance=relevance.get(mid, 0.0), multipliers=mults[mid])
            if boost.get(mid):
                ex.boosts["session_context"] = boost[mid]
            if mid not in rrf_scores:
                ex.notes.append("added as a session neighbour of a candidate")
            return ex

        # Explanations are built only for what is returned, reranked or boosted.
        cands.explain_with(explain)
        scored = self._graph_boost(conn, scored, light, cands)
        # Last, the best candidates are re-scored by how many of the query's terms they (and, for
        # p.coverage_context, their session neighbours) contain, then by time, then diversified.
        texts = lambda ids: _memo_texts(conn, cands.memo, ids)  # noqa: E731
        scored, cover = coverage_boost(req.query, scored, texts, p.coverage_weight, p.coverage_depth,
                                       context=lambda ids: _neighbour_texts(conn, cands, ids),
                                       context_weight=p.coverage_context)
        scored, timed = time_boost(req.query, scored, texts, lambda mid: _created(light, mid), now,
                                   when_boost=p.when_boost, date_boost=p.date_boost, depth=p.coverage_depth)
        if p.mmr_lambda < 1.0 and self.embeddings is not None:
            head = [mid for mid, _s in scored[:p.coverage_depth]]
            scored = mmr(scored, self.embeddings.vectors(head), p.mmr_lambda, k=max(10, req.limit),
                         depth=p.coverage_depth)
        for mid, _s in scored[:req.limit]:  # explanations only for what can be returned
            if cover.get(mid):
                cands.explanation(mid).boosts["query_coverage"] = cover[mid]
            if timed.get(mid):
                cands.explanation(mid).boosts["time"] = timed[mid]
        return scored

    def _fuse(self, cands: CandidateSet, ids: set[int], qvec: np.ndarray | None, weights: dict[str, float]
              ) -> tuple[dict[int, float], FusionParts]:
        """Dense-score the candidates no dense hit covered, normalise each path over ``ids``, fuse."""
        dense_raw = cands.raw["dense"]
        if qvec is not None and self.embeddings is not None:
            missing = [m for m in ids if m not in dense_raw]
            if missing:
                dense_raw.update(self.embeddings.similarities(qvec, missing))
        norm = {p: normalise(p, {m: s for m, s in raw.items() if m in ids}) for p, raw in cands.raw.items()
                if p in weights}
        return score_fusion(norm, weights, ids)

    def _graph_boost(self, conn: Any, scored: list[tuple[int, float]], light: dict[int, Any],
                     cands: CandidateSet) -> list[tuple[int, float]]:
        """Candidates 11-50 whose files neighbour the top-10's files move up (design stage 2b)."""
        top_files = [f for mid, _s in scored[:10] for f in related_files(light[mid])]
        if not top_files or not P.graph_available(conn, self.graph):
            return scored
        near = set(P.graph_files(conn, top_files, self.graph)) - set(top_files)
        if not near:
            return scored
        files_of = {mid: related_files(light[mid]) for mid, _s in scored[10:GRAPH_WINDOW]}
        boost = neighbourhood_boost(scored, files_of, near)
        if not boost:
            return scored
        out = []
        for mid, s in scored:
            if mid in boost:
                cands.explanation(mid).boosts["graph_neighbourhood"] = boost[mid]
                s += boost[mid]
            out.append((mid, s))
        out.sort(key=lambda x: (-x[1], x[0]))
        return out

    # -- optional LLM stages -----------------------------------------------------------
    def _with_hyde(self, conn: Any, req: SearchRequest, cands: CandidateSet, match: str | None,
                   qvec: np.ndarray, qtype: str, n_neighbours: int, ranked: list[tuple[int, float]],
                   resp: SearchResponse) -> list[tuple[int, float]]:
        t = time.perf_counter()
        try:
            passage = self.hyde.write(req.query)  # type: ignore[union-attr]
            hvec = self.embeddings.embed_query(passage)  # type: ignore[union-attr]
        except (StageUnavailable, Exception) as exc:  # optional stage
            resp.skipped["hyde"] = str(exc)[:200]
            return ranked
        hits, _method = self.embeddings.search(hvec, len(cands.paths.get("dense", [])) or 30)  # type: ignore
        cands.add_path("hyde", hits)
        resp.timings["hyde"] = (time.perf_counter() - t) * 1000
        return self._score(conn, req, cands, match, qvec, qtype, n_neighbours)

    def _rerank(self, conn: Any, query: str, ranked: list[tuple[int, float]], cands: CandidateSet,
                resp: SearchResponse) -> list[tuple[int, float]]:
        t = time.perf_counter()
        head = ranked[:RERANK_TOP]
        texts = cands.contents(conn, [mid for mid, _s in head])
        try:
            order = self.reranker.rerank(query, [texts.get(mid, "") for mid, _s in head])  # type: ignore
        except (StageUnavailable, Exception) as exc:  # optional stage
            resp.skipped["rerank"] = str(exc)[:200]
            return ranked
        order += [i for i in range(len(head)) if i not in order]
        scores = [s for _m, s in head]  # keep the score scale; only the order changes
        out = [(head[i][0], scores[pos]) for pos, i in enumerate(order)]
        for pos, (mid, _s) in enumerate(out):
            cands.explanation(mid).boosts["rerank_position"] = float(pos + 1)
        resp.timings["rerank"] = (time.perf_counter() - t) * 1000
        return out + ranked[RERANK_TOP:]


def _memo_texts(conn: Any, memo: dict[int, str], ids: list[int]) -> dict[int, str]:
    """Contents of ``ids``, each read at most once per search (PRF, coverage and time share them)."""
    missing = [m for m in ids if m not in memo]
    if missing:
        memo.update(CandidateSet.contents(conn, missing))
    return {m: memo[m] for m in ids if m in memo}


def _neighbour_texts(conn: Any, cands: CandidateSet, ids: list[int]) -> dict[int, str]:
    """For each memory, the joined text of its nearest session neighbours (before and after)."""
    near = P.session_neighbours(conn, ids, known=cands.sessions)
    texts = _memo_texts(conn, cands.memo, sorted({n for ns in near.values() for n in ns}))
    return {mid: " ".join(texts.get(n, "") for n in ns) for mid, ns in near.items()}


def _created(light: dict[int, Any], mid: int) -> datetime | None:
    mem = light.get(mid)
    return parse_time(mem.created_at) if mem is not None else None
