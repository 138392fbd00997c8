"""Cross-session learning on BookMinder: does Engram predict what session n needs?

Replays the BookMinder sessions in time order through the real observer,
promotion and cross-session tables (a throw-away database). Before learning
session n, it ranks files for n from what n's start knew — the typed prompt plus
the command's expansion, the git working state and the handoff notes, rebuilt from
the earlier sessions (``bench/start_replay.py``) — and compares with the files n
actually read or edited (files it created are not counted), next to two baselines
computed from the same history: "most frequently read so far" and "most recently
read", and next to the history-only model. Weights are chosen on days 1-10 and
reported on days 11-21, and the other way round; the spread is a bootstrap over
the held-out sessions. All in one run. It also measures how many of n's errors
match an error pattern learned earlier, and how many of its searches were known.

Run: .venv/bin/python bench/bench_learning.py [--data ../shared/data/transcripts/bookminder]
"""

from __future__ import annotations

import itertools
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bookminder_parser import ParsedSession, folder_from_args, parse_all  # noqa: E402
from bench.start_replay import ReplayWorkspace  # noqa: E402
from desktop.memory.observer.events import ToolCall, ToolResult, UserMessage  # noqa: E402
from desktop.memory.observer.ingest import Ingestor  # noqa: E402
from desktop.memory.observer.novelty import HashingEmbedder, Novelty  # noqa: E402
from desktop.memory.observer.prefetch import (  # noqa: E402
    DEFAULT_PARAMS,
    PrefetchParams,
    prefetch_features,
    rank,
)
from desktop.memory.observer.promotion import Promoter  # noqa: E402
from desktop.memory.observer.signals import error_fingerprint  # noqa: E402
from desktop.memory.store.database import Database  # noqa: E402

K = 10
SPLIT_DAY = 11
"""Sessions of days before this one choose the parameters; later days are held out."""
HISTORY_GRID: dict[str, tuple[float, ...]] = {
    "half_life": (1.0, 2.0, 3.0, 5.0), "short_share": (0.5, 0.7, 1.0),
    "mention": (0.0, 0.2, 0.5), "last_edit": (0.0, 0.1), "terms": (0.0, 0.1),
}
#: Start-context weights (handoff_named stays 0: the copies do not show the notes' text).
CONTEXT_GRID: dict[str, tuple[float, ...]] = {
    "uncommitted": (0.0, 0.1, 0.3), "committed": (0.0, 0.05, 0.2), "handoff": (0.0, 0.1, 0.3),
}
#: The history-only point the shipped defaults correspond to (context weights dropped).
DEFAULT_HISTORY = replace(DEFAULT_PARAMS, uncommitted=0.0, committed=0.0, handoff=0.0, handoff_named=0.0)
_FILE_TOOLS = {"Read", "Edit", "MultiEdit", "Write"}


def session_facts(s: ParsedSession) -> dict:
    """Ground truth of one session: needed files, created files, errors, searches, first prompt."""
    needed: dict[str, None] = {}
    created: set[str] = set()
    tools: dict[str, str] = {}
    errors, searches = [], []
    prompt = ""
    for e in s.events:
        if isinstance(e, UserMessage) and not prompt and e.text.strip():
            prompt = e.text
        elif isinstance(e, ToolCall):
            tools[e.call_id] = e.tool
            if e.tool in ("Grep", "Glob") and e.args.get("pattern"):
                searches.append(" ".join(str(e.args["pattern"]).split())[:200])
            if e.tool in _FILE_TOOLS:
                for p in e.file_paths:
                    if "*" in p or p in (".", "") or p.startswith("/"):
                        continue
                    if e.tool == "Write" and p not in needed:
                        created.add(p)
                    elif p not in created:
                        needed.setdefault(p, None)
        elif isinstance(e, ToolResult) and e.is_error:
            errors.append(error_fingerprint(tools.get(e.call_id, e.tool), e.output))
    return {"needed": list(needed), "created": created, "errors": errors, "searches": searches, "prompt": prompt}


def recall_mrr(ranked: list[str], truth: set[str]) -> tuple[float, float]:
    """recall@K and reciprocal rank of the first hit."""
    top = ranked[:K]
    hits = len(set(top) & truth)
    rr = next((1.0 / (i + 1) for i, f in enumerate(top) if f in truth), 0.0)
    return hits / len(truth), rr


def param_grid(grid_spec: dict[str, tuple[float, ...]]) -> list[PrefetchParams]:
    """Every parameter combination of a selection grid (the history-only defaults included)."""
    keys = list(grid_spec)
    grid = [replace(DEFAULT_HISTORY, **dict(zip(keys, vals, strict=True)))
            for vals in itertools.product(*grid_spec.values())]
    return grid if DEFAULT_HISTORY in grid else [*grid, DEFAULT_HISTORY]


def mean(xs: list[tuple[float, float]]) -> tuple[float, float]:
    """Mean recall@K and MRR of a list of (recall, rr)."""
    return (sum(x[0] for x in xs) / len(xs), sum(x[1] for x in xs) / len(xs)) if xs else (0.0, 0.0)


def context_grid() -> list[PrefetchParams]:
    """History grid x start-context weights (the context model's selection grid)."""
    out = []
    for base in param_grid(HISTORY_GRID):
        for vals in itertools.product(*CONTEXT_GRID.values()):
            out.append(replace(base, **dict(zip(CONTEXT_GRID, vals, strict=True))))
    return out if DEFAULT_PARAMS in out else [*out, DEFAULT_PARAMS]


def _best(rows: list[Row], g_count: int, which: str) -> int:
    """The grid index with the best mean recall@K (then MRR) on ``rows``; grid order breaks ties."""
    def key(g: int) -> tuple[float, float, int]:
        r, m = mean([getattr(e, which)[g] for e in rows])
        return round(r, 9), round(m, 9), -g
    return max(range(g_count), key=key)


@dataclass
class Row:
    """One evaluated session: its day, per-ranker (recall, rr), per-grid-point results."""

    day: int
    base: dict[str, tuple[float, float]]
    hist: list[tuple[float, float]]
    ctx: list[tuple[float, float]]
    beyond: dict[str, tuple[float, float]] | None
    """Scores on the needed files the prompt and its expansion did not name (None if there are none)."""
    ctx_beyond: list[tuple[float, float]] | None


def run(data: Path) -> dict:
    """Replay every session once; rank each evaluated session under every grid point, both models."""
    sessions = parse_all(data)
    tmp = tempfile.mkdtemp(prefix="engram-bench-learning-")
    db = Database(Path(tmp) / "bench.db").open()
    ingestor = Ingestor(db, Promoter(db, novelty=Novelty(HashingEmbedder())))
    hgrid, cgrid = param_grid(HISTORY_GRID), context_grid()
    ws = ReplayWorkspace()
    freq: Counter[str] = Counter()
    last_seen: dict[str, int] = {}
    seen_errors: set[str] = set()
    rows: list[Row] = []
    err_total = err_cov = rec_total = rec_cov = rec_resolved = 0
    srch_total = srch_known = 0
    tick = 0
    ctx_stats = Counter()
    t0 = time.perf_counter()
    for idx, s in enumerate(sessions):
        facts = session_facts(s)
        truth = set(facts["needed"])
        conn = db.reads.conn()
        if idx > 0 and truth:
            ctx = ws.context_for(s)
            ctx_stats["sessions"] += 1
            ctx_stats["with_expansion"] += bool(ctx.expansion)
            ctx_stats["with_uncommitted"] += bool(ctx.uncommitted)
            ctx_stats["with_handoff"] += bool(ctx.handoff)
            f_hist = prefetch_features(conn, ctx.prompt)
            f_ctx = prefetch_features(conn, ctx.prompt, ctx, exists=ws.exists)
            hist = [recall_mrr([i.file for i in rank(f_hist, p, K)], truth) for p in hgrid]
            ctx_lists = [[i.file for i in rank(f_ctx, p, K)] for p in cgrid]
            base_lists = {"frequency": [f for f, _ in freq.most_common(K)],
                          "recency": sorted(last_seen, key=lambda f: -last_seen[f])[:K],
                          "default": ctx_lists[cgrid.index(DEFAULT_PARAMS)]}
            named = set(f_ctx.mentioned) if f_ctx else set()
            rest = truth - named
            rows.append(Row(s.day, {k: recall_mrr(v, truth) for k, v in base_lists.items()}, hist,
                            [recall_mrr(v, truth) for v in ctx_lists],
                            {k: recall_mrr(v, rest) for k, v in base_lists.items()} if rest else None,
                            [recall_mrr(v, rest) for v in ctx_lists] if rest else None))
        if idx > 0:
            known = {r[0]: r[1] for r in conn.execute("SELECT id, resolved_how FROM observer_error_patterns")}
            for fp in facts["errors"]:
                err_total += 1
                err_cov += fp in known
                if fp in seen_errors:
                    rec_total += 1
                    rec_cov += fp in known
                    rec_resolved += bool(known.get(fp))
            pats = {r[0] for r in conn.execute("SELECT pattern FROM observer_search_patterns")}
            srch_total += len(facts["searches"])
            srch_known += sum(p in pats for p in facts["searches"])
        # learn from session n, then update the baselines' history and the replayed workspace
        ingestor.learn_events(s.events)
        ws.learn(s)
        for e in s.events:
            if isinstance(e, ToolCall) and e.tool in _FILE_TOOLS:
                for p in e.file_paths:
                    if "*" not in p and not p.startswith("/"):
                        tick += 1
                        freq[p] += 1
                        last_seen[p] = tick
        seen_errors.update(facts["errors"])
    elapsed = time.perf_counter() - t0
    memories = db.reads.conn().execute("SELECT type, count(*) FROM memories GROUP BY type").fetchall()
    db.close()
    early = [r for r in rows if r.day < SPLIT_DAY]
    late = [r for r in rows if r.day >= SPLIT_DAY]
    folds = {}
    for name, tune, test in (("early->late", early, late), ("late->early", late, early)):
        g_ctx, g_hist = _best(tune, len(cgrid), "ctx"), _best(tune, len(hgrid), "hist")
        folds[name] = {"params": cgrid[g_ctx], "hist_params": hgrid[g_hist], "tune_n": len(tune),
                       "test": _scores(test, g_ctx, g_hist), "tune": _scores(tune, g_ctx, g_hist),
                       "spread": _bootstrap(test, g_ctx),
                       "sensitivity": {kind: [(v, mean([r.ctx[cgrid.index(replace(cgrid[g_ctx], **{kind: v}))]
                                                         for r in tune])[0],
                                           mean([r.ctx[cgrid.index(replace(cgrid[g_ctx], **{kind: v}))]
                                                 for r in test])[0]) for v in values]
                                       for kind, values in CONTEXT_GRID.items()}}
    return {"sessions": len(sessions), "evaluated": len(rows), "elapsed_s": elapsed,
            "grid": (len(hgrid), len(cgrid)), "folds": folds, "full": _scores(rows, cgrid.index(DEFAULT_PARAMS),
                                                                               hgrid.index(DEFAULT_HISTORY)),
            "context": dict(ctx_stats), "errors": (err_total, err_cov, rec_total, rec_cov, rec_resolved),
            "searches": (srch_total, srch_known), "memories": dict(memories)}


def _scores(rows: list[Row], g_ctx: int, g_hist: int) -> dict[str, tuple[float, float] | int]:
    """Mean (recall, MRR) of each ranking on ``rows``; ``*_beyond`` on the files the prompt did not name."""
    out: dict[str, tuple[float, float] | int] = {"n": len(rows)}
    out["context"] = mean([r.ctx[g_ctx] for r in rows])
    out["history"] = mean([r.hist[g_hist] for r in rows])
    for ranker in ("default", "frequency", "recency"):
        out[ranker] = mean([r.base[ranker] for r in rows])
    beyond = [r for r in rows if r.beyond is not None and r.ctx_beyond is not None]
    out["n_beyond"] = len(beyond)
    out["context_beyond"] = mean([r.ctx_beyond[g_ctx] for r in beyond if r.ctx_beyond is not None])
    out["frequency_beyond"] = mean([r.beyond["frequency"] for r in beyond if r.beyond is not None])
    return out


def _bootstrap(rows: list[Row], g_ctx: int, n: int = 2000) -> tuple[float, float]:
    """5th and 95th percentile of the recall@K ratio (context model / frequency) over resampled sessions."""
    rng = random.Random(13)
    ratios = []
    for _ in range(n):
        pick = [rows[rng.randrange(len(rows))] for _ in rows]
        f = sum(r.base["frequency"][0] for r in pick)
        if f:
            ratios.append(sum(r.ctx[g_ctx][0] for r in pick) / f)
    ratios.sort()
    return (ratios[int(0.05 * len(ratios))], ratios[int(0.95 * len(ratios)) - 1]) if ratios else (0.0, 0.0)


def main() -> None:
    """Print the Markdown tables."""
    folder = folder_from_args()
    if folder is None:
        return
    r = run(folder)
    c = r["context"]
    print(f"### Prefetch on BookMinder from the session start ({r['sessions']} sessions, {r['evaluated']} "
          f"evaluated, replay {r['elapsed_s']:.1f} s; grids: {r['grid'][0]} history-only points, "
          f"{r['grid'][1]} with the start context)\n")
    print(f"Start context rebuilt from the replay: {c.get('with_expansion', 0)}/{c.get('sessions', 0)} sessions "
          f"had a command expansion or attached files, {c.get('with_uncommitted', 0)} had uncommitted files, "
          f"{c.get('with_handoff', 0)} a handoff/progress note.\n")
    print("| ranking | " + " | ".join(f"{fold}: held out recall@{K} / MRR" for fold in r["folds"]) + " |")
    print("|---|" + "---|" * len(r["folds"]))
    folds = list(r["folds"].values())
    print("| sessions (tuned on / held out) | " + " | ".join(f"{f['tune_n']} / {f['test']['n']}" for f in folds) + " |")
    for key, label in (("context", "Engram prefetch with the start context (weights chosen on the other days)"),
                       ("history", "Engram prefetch, history and typed prompt only (same selection)"),
                       ("default", "Engram prefetch, shipped defaults (chosen on days 1-10: not held out in the"
                                   " second column)"),
                       ("frequency", "baseline: most frequently read"),
                       ("recency", "baseline: most recently read")):
        print(f"| {label} | " + " | ".join(f"{f['test'][key][0]:.3f} / {f['test'][key][1]:.3f}" for f in folds) + " |")
    print("| **recall@10 ratio, start context vs frequency** | " + " | ".join(
        f"**{f['test']['context'][0] / f['test']['frequency'][0]:.2f}x** (90% bootstrap "
        f"{f['spread'][0]:.2f}-{f['spread'][1]:.2f}x)" for f in folds) + " |")
    print("| ratio on the tuning days themselves (optimistic) | " + " | ".join(
        f"{f['tune']['context'][0] / f['tune']['frequency'][0]:.2f}x" for f in folds) + " |")
    print("| recall@10 on needed files the prompt and expansion did not name: start context / frequency | "
          + " | ".join(f"{f['test']['context_beyond'][0]:.3f} / {f['test']['frequency_beyond'][0]:.3f} "
                       f"(n={f['test']['n_beyond']})" for f in folds) + " |\n")
    for name, f in r["folds"].items():
        print(f"- {name}: chosen `{f['params']}`; history-only `{f['hist_params']}`")
    print("\nSensitivity around each chosen point (recall@10 on the tuning days / held-out days):\n")
    print("| fold | weight | " + " | ".join(f"value {i + 1}" for i in range(3)) + " |\n|---|---|---|---|---|")
    for name, f in r["folds"].items():
        for kind, vals in f["sensitivity"].items():
            print(f"| {name} | {kind} | " + " | ".join(f"{v}: {a:.3f} / {b:.3f}" for v, a, b in vals) + " |")
    print()
    full = r["full"]
    print(f"- full replay, shipped defaults `{DEFAULT_PARAMS}`: recall@{K} {full['default'][0]:.3f} vs frequency "
          f"{full['frequency'][0]:.3f} = {full['default'][0] / full['frequency'][0]:.2f}x (n={full['n']})\n")
    et, ec, rt, rc, rr = r["errors"]
    st, sk = r["searches"]
    print("| measure | value |\n|---|---|")
    print(f"| errors in sessions 2..n covered by an earlier pattern | {ec}/{et} ({ec / max(1, et):.0%}) |")
    print(f"| recurring errors covered (target >= 50%) | {rc}/{rt} ({rc / max(1, rt):.0%}) |")
    print(f"| recurring errors whose pattern records a resolution | {rr}/{rt} ({rr / max(1, rt):.0%}) |")
    print(f"| searches already known | {sk}/{st} ({sk / max(1, st):.0%}) |")
    print(f"\nmemories learned: {r['memories']}")


if __name__ == "__main__":
    main()
