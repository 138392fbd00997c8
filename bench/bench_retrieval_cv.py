"""Cross-validated choice of the retrieval weights on the LoCoMo dev set, and the figures they earn.

Same protocol as ``bench_retrieval.py`` (every turn a memory, written at its
session's time; hit = an evidence turn; categories 1-4; no LLM). Every field of
:class:`RetrievalParams` is chosen on R@10 + nDCG@10 of the *training* questions of a
fold (see :func:`fit`), and reported on the fold's *test* questions:

* conversation folds: fit on conv-26, test on conv-30, and the reverse;
* category folds: fit on three question categories (both conversations), test on the fourth.

Per fold: the fitted pipeline, the shipped defaults and BM25 alone on the same test
questions; then the mean and spread over the folds, and the pooled figure (each
question scored once, by the weights fitted without it). Last, the weights fitted
on every dev question (what ``DEFAULT_PARAMS`` should hold; an in-sample figure).
Every configuration is evaluated once on all questions and cached, so the folds
share work.

    .venv/bin/python bench/bench_retrieval_cv.py [--json out.json] [--rerank-plumbing]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_retrieval import LOCOMO, asked_at, load, metrics, turns_of
from common import table

from desktop.memory.embedding.local import LocalMiniLMProvider
from desktop.memory.embedding.service import EmbeddingService
from desktop.memory.retrieval.params import DEFAULT_PARAMS, RetrievalParams
from desktop.memory.retrieval.pipeline import RetrievalPipeline
from desktop.memory.retrieval.slo import SloMonitor
from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database

# The values the fit may pick, per group of fields (a group's fields move together: the feedback
# path's sizes mean nothing while its weight is 0). START's value is always one of them.
GRID: dict[str, list[dict[str, Any]]] = {
    "bm25_share": [{"bm25_share": v} for v in (0.4, 0.5, 0.6, 0.7, 0.8)],
    "context_share": [{"context_share": v} for v in (0.0, 0.15, 0.3, 0.45, 0.6, 0.8)],
    "reply_share": [{"reply_share": v} for v in (0.0, 0.1, 0.2, 0.3, 0.45, 0.6)],
    "coverage_weight": [{"coverage_weight": v} for v in (0.0, 0.15, 0.3, 0.45, 0.6, 0.9, 1.2)],
    "coverage_depth": [{"coverage_depth": v} for v in (20, 30, 50)],
    "coverage_context": [{"coverage_context": v} for v in (0.0, 0.25, 0.5)],
    "prf": [{"prf_weight": w, "prf_docs": d, "prf_terms": t} for w, d, t in
            ((0.0, 5, 8), (0.1, 5, 8), (0.2, 5, 8), (0.35, 5, 8), (0.2, 3, 8), (0.2, 10, 8), (0.2, 5, 4),
             (0.2, 5, 16))],
    "when_boost": [{"when_boost": v} for v in (0.0, 0.05, 0.1, 0.2, 0.4, 0.6)],
    "date_boost": [{"date_boost": v} for v in (0.0, 0.05, 0.1, 0.2, 0.4, 0.6)],
    "mmr_lambda": [{"mmr_lambda": v} for v in (1.0, 0.9, 0.8, 0.7)],
}
# Where every fit starts: the weights of issue 3 with every newer feature off (so the folds do not
# depend on whatever DEFAULT_PARAMS ships, which is itself fitted on all the dev questions).
START = RetrievalParams(bm25_share=0.6, context_share=0.3, reply_share=0.0, coverage_weight=0.3,
                        coverage_depth=30, coverage_context=0.0, prf_weight=0.0, when_boost=0.0,
                        date_boost=0.0, mmr_lambda=1.0)
Question = tuple[str, int, str, frozenset[str]]  # conversation, category, question, evidence


class Evaluator:
    """The two conversations' projects, and per-question metrics of every configuration tried (cached)."""

    def __init__(self, provider: LocalMiniLMProvider, workdir: Path) -> None:
        self.questions: list[Question] = []
        self.pipes: dict[str, tuple[RetrievalPipeline, dict[int, str], Database]] = {}
        self.cache: dict[RetrievalParams, list[dict[str, float]]] = {}
        self.bm25: list[dict[str, float]] = []
        for conv in json.loads(LOCOMO.read_text(encoding="utf-8")):
            name = conv["sample_id"]
            db = Database(workdir / f"{name}.db").open()
            MemoryService(db).add_many(turns_of(conv), actor="bench").result()
            emb = EmbeddingService(db, provider)
            emb.sync()
            when = asked_at(conv)
            # No SLO here: a loaded machine must not degrade the searches whose quality is measured.
            pipe = RetrievalPipeline(db, emb, clock=lambda when=when: when, slo=SloMonitor(budget_ms=1e9))
            ext: dict[int, str] = {int(str(i)): str(e) for i, e in
                                   db.reads.conn().execute("SELECT id, external_id FROM memories").fetchall()}
            self.pipes[name] = (pipe, ext, db)
            for qa in conv["qa"]:
                if qa["category"] in (1, 2, 3, 4):
                    self.questions.append((name, qa["category"], qa["question"],
                                           frozenset(e.strip() for e in qa["evidence"])))
        for name, _cat, q, ev in self.questions:
            pipe, ext, db = self.pipes[name]
            hits, _m = pipe.lexical.search(db.reads.conn(), q, 20)
            self.bm25.append(metrics([ext[m] for m, _s in hits], set(ev)))

    def rows(self, params: RetrievalParams) -> list[dict[str, float]]:
        """Per-question metrics of ``params`` (evaluated once, then cached)."""
        if params.prf_weight == 0:  # the feedback path is off: its sizes change nothing
            params = params.with_(prf_docs=START.prf_docs, prf_terms=START.prf_terms)
        if params not in self.cache:
            if len(self.cache) % 20 == 0:
                print(f"  ... {len(self.cache)} configurations evaluated", file=sys.stderr, flush=True)
            out = []
            for name, _cat, q, ev in self.questions:
                pipe, ext, _db = self.pipes[name]
                pipe.params = params
                out.append(metrics([ext[i] for i in pipe.search(q, limit=20).ids], set(ev)))
            self.cache[params] = out
        return self.cache[params]

    def close(self) -> None:
        """Close every project."""
        for pipe, _ext, db in self.pipes.values():
            pipe.close()
            db.close()


def mean(rows: list[dict[str, float]], idx: list[int], key: str) -> float:
    """Mean of ``key`` over the questions ``idx``."""
    return sum(rows[i][key] for i in idx) / len(idx) if idx else float("nan")


def objective(ev: Evaluator, params: RetrievalParams, idx: list[int]) -> float:
    """What the fit maximises on the training questions: R@10 + nDCG@10."""
    rows = ev.rows(params)
    return mean(rows, idx, "R@10") + mean(rows, idx, "nDCG@10")


def fit(ev: Evaluator, train: list[int]) -> RetrievalParams:
    """Greedy forward selection over the groups of GRID, all scored on ``train`` only.

    First each group's best value with every other group at START (one scan shared by every
    fold, so seven fits cost little more than one); then, from START, the groups' best values
    are added one at a time in order of their single gain, each kept only if the combination
    still improves (the groups interact: both context shares lend neighbours relevance).
    Ties keep START's value.
    """
    base = objective(ev, START, train)
    singles: list[tuple[float, dict[str, Any]]] = []
    for options in GRID.values():
        top, top_score = None, base
        for change in options:
            score = objective(ev, START.with_(**change), train)
            if score > top_score + 1e-9:
                top, top_score = change, score
        if top is not None:
            singles.append((top_score - base, top))
    best, best_score = START, base
    for _gain, change in sorted(singles, key=lambda x: -x[0]):
        cand = best.with_(**change)
        score = objective(ev, cand, train)
        if score > best_score + 1e-9:
            best, best_score = cand, score
    return best


def folds(ev: Evaluator) -> list[tuple[str, list[int], list[int]]]:
    """(name, train indexes, test indexes) of the conversation and the category folds."""
    out = []
    convs = sorted({q[0] for q in ev.questions})
    for test in convs:
        out.append((f"fit {'+'.join(c for c in convs if c != test)} / test {test}",
                    [i for i, q in enumerate(ev.questions) if q[0] != test],
                    [i for i, q in enumerate(ev.questions) if q[0] == test]))
    for cat in (1, 2, 3, 4):
        out.append((f"fit categories {','.join(str(c) for c in (1, 2, 3, 4) if c != cat)} / test category {cat}",
                    [i for i, q in enumerate(ev.questions) if q[1] != cat],
                    [i for i, q in enumerate(ev.questions) if q[1] == cat]))
    return out


def changed(p: RetrievalParams) -> str:
    """The fields that differ from START."""
    diff = [f"{f.name}={getattr(p, f.name)}" for f in fields(p) if getattr(p, f.name) != getattr(START, f.name)]
    return ", ".join(diff) or "(defaults)"


def spread(values: list[float]) -> str:
    """mean +/- population sd [min, max]."""
    return (f"{statistics.fmean(values):.3f} ± {statistics.pstdev(values):.3f} "
            f"[{min(values):.3f}, {max(values):.3f}]")


def report(ev: Evaluator) -> tuple[str, dict[str, Any]]:
    """Markdown tables of every fold, the spread, the pooled figures and the all-data fit."""
    body: list[list[Any]] = []
    out_json: dict[str, Any] = {"folds": []}
    groups: dict[str, list[tuple[list[int], RetrievalParams]]] = {"conversation": [], "category": []}
    per_fold: dict[str, list[tuple[float, float]]] = {"conversation": [], "category": []}
    for name, train, test in folds(ev):
        p = fit(ev, train)
        rows, d, b = ev.rows(p), ev.rows(START), ev.bm25
        kind = "conversation" if "category" not in name else "category"
        groups[kind].append((test, p))
        per_fold[kind].append((mean(rows, test, "R@10"), mean(rows, test, "nDCG@10")))
        body.append([name, len(train), len(test), mean(b, test, "R@10"), mean(b, test, "nDCG@10"),
                     mean(d, test, "R@10"), mean(d, test, "nDCG@10"), mean(rows, test, "R@10"),
                     mean(rows, test, "nDCG@10"), changed(p)])
        out_json["folds"].append({"fold": name, "params": p.to_dict(), "R@10": mean(rows, test, "R@10"),
                                  "nDCG@10": mean(rows, test, "nDCG@10")})
    md = ["**Folds (test questions only; BM25 alone, the issue-3 weights with the new features off, and "
          "the fold's fitted weights, same run)**\n\n" + table(
              ["fold", "train q", "test q", "BM25 R@10", "BM25 nDCG@10", "issue-3 R@10", "issue-3 nDCG@10",
               "fitted R@10", "fitted nDCG@10", "fitted weights (vs issue 3)"], body)]
    summary = []
    for kind, pairs in groups.items():
        rs, ns = [r for r, _n in per_fold[kind]], [n for _r, n in per_fold[kind]]
        pooled = [ev.rows(p)[i] for idx, p in pairs for i in idx]
        allq = list(range(len(pooled)))
        bm = [ev.bm25[i] for idx, _p in pairs for i in idx]
        summary.append([f"{kind} folds ({len(pairs)})", len(pooled), spread(rs), spread(ns),
                        mean(pooled, allq, "R@10"), mean(pooled, allq, "nDCG@10"),
                        mean(bm, allq, "R@10"), mean(bm, allq, "nDCG@10")])
        out_json[f"{kind}_pooled"] = {"R@10": mean(pooled, allq, "R@10"), "nDCG@10": mean(pooled, allq, "nDCG@10")}
    md.append("**Spread over folds and pooled out-of-fold figures (each question scored once, by weights "
              "fitted without it)**\n\n" + table(
                  ["folds", "questions", "R@10 mean ± sd [min, max]", "nDCG@10 mean ± sd [min, max]",
                   "pooled R@10", "pooled nDCG@10", "BM25 R@10", "BM25 nDCG@10"], summary))
    every = list(range(len(ev.questions)))
    full = fit(ev, every)
    rows = ev.rows(full)
    md.append(f"**Fitted on all {len(every)} dev questions (in-sample, for the shipped defaults only)**: "
              f"R@10 {mean(rows, every, 'R@10'):.3f}, nDCG@10 {mean(rows, every, 'nDCG@10'):.3f}; "
              f"{changed(full)}. Shipped defaults in-sample: R@10 "
              f"{mean(ev.rows(DEFAULT_PARAMS), every, 'R@10'):.3f}, nDCG@10 "
              f"{mean(ev.rows(DEFAULT_PARAMS), every, 'nDCG@10'):.3f}. "
              f"Configurations evaluated: {len(ev.cache)}.")
    out_json["all_data_fit"] = full.to_dict()
    return "\n\n".join(md), out_json


def rerank_plumbing(ev: Evaluator, params: RetrievalParams) -> str:
    """The chat reranker's plumbing, through a fake OpenAI-compatible server on 127.0.0.1 whose
    scripted "model" knows the evidence turns and lists them first. Not a quality figure: it is the
    most a reranker of the top 20 could add, and shows the stage is wired and what it costs."""
    import re

    from desktop.agents.model_factory import ChatReranker
    from desktop.agents.providers import make_provider
    from tests.agents.fake_openai import MODEL, FakeOpenAI
    from tests.agents.fake_sse import Turn

    evidence_text: dict[str, set[str]] = {}
    for name, _cat, q, evid in ev.questions:
        _pipe, _ext, db = ev.pipes[name]
        conn = db.reads.conn()
        evidence_text[q] = {" ".join(str(r[0]).split())[:400] for e in evid for r in
                            conn.execute("SELECT content FROM memories WHERE external_id = ?", (e,)).fetchall()}

    def respond(body: dict[str, Any], n: int) -> Turn:
        prompt = body["messages"][-1]["content"]
        query = prompt.split("\n", 1)[0].removeprefix("Query: ")
        passages = re.findall(r"^\[(\d+)\] (.*)$", prompt, re.MULTILINE)
        good = [int(i) for i, text in passages if text in evidence_text.get(query, set())]
        return Turn(json.dumps(good + [int(i) for i, _t in passages if int(i) not in good]))

    srv = FakeOpenAI(respond, lifetime=3600, api_key="sk-bench").start()
    rows: list[dict[str, float]] = []
    stage_ms: list[float] = []
    try:
        reranker = ChatReranker(make_provider("openai", model=MODEL, base_url=srv.base_url, api_key="sk-bench",
                                              timeout=10.0))
        for name, _cat, q, evid in ev.questions:
            pipe, ext, _db = ev.pipes[name]
            pipe.params, pipe.reranker = params, reranker
            resp = pipe.search(q, limit=20)
            stage_ms.append(resp.timings.get("rerank", float("nan")))
            rows.append(metrics([ext[i] for i in resp.ids], set(evid)))
            pipe.reranker = None
    finally:
        srv.stop()
    allq = list(range(len(rows)))
    base = ev.rows(params)
    return ("**Chat reranker plumbing (fake OpenAI-compatible server on 127.0.0.1, scripted to list the "
            "evidence turns first; an upper bound of reordering the top 20, not a model's quality)**\n\n" + table(
                ["pipeline", "questions", "R@10", "nDCG@10", "rerank stage p50 ms"],
                [["all-data weights, no reranker", len(allq), mean(base, allq, "R@10"), mean(base, allq, "nDCG@10"),
                  "-"],
                 ["same + scripted chat reranker", len(allq), mean(rows, allq, "R@10"), mean(rows, allq, "nDCG@10"),
                  statistics.median(stage_ms)]]))


def main() -> int:
    """Build both projects, run every fold, print Markdown (and optionally JSON)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", type=Path, default=None, help="also write the fitted weights here")
    ap.add_argument("--rerank-plumbing", action="store_true", help="also time the chat reranker against a fake server")
    args = ap.parse_args()
    provider = LocalMiniLMProvider()
    provider.warm_up()
    workdir = Path(tempfile.mkdtemp(prefix="engram-bench-cv-"))
    print(f"(load average at start: {load()})\n")
    t = time.perf_counter()
    ev = Evaluator(provider, workdir)
    try:
        md, data = report(ev)
        print(md)
        if args.rerank_plumbing:
            print("\n" + rerank_plumbing(ev, RetrievalParams.from_dict(data["all_data_fit"])))
        if args.json:
            args.json.write_text(json.dumps(data, indent=2), encoding="utf-8")
    finally:
        ev.close()
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"\n({len(ev.questions)} questions, {time.perf_counter() - t:.0f} s; "
          f"load average at end: {load()})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
