"""Cross-session learning on BookMinder: does Engram predict what session n needs?

Replays the BookMinder sessions in time order through the real observer,
promotion and cross-session tables (a throw-away database). Before learning
session n, it asks ``prefetch_plan(first prompt of n)`` and compares with the
files n actually read or edited (files it created are not counted), next to two
baselines computed from the same history: "most frequently read so far" and
"most recently read". The prefetch model's few parameters are chosen on the first
half of the history only (days 1-10, a small grid) and reported on the held-out second
half (days 11-21) separately, next to the full replay and the shipped defaults, all in
one run. It also measures how many of n's errors match an error
pattern learned earlier, and how many of its searches were already known.

Run: .venv/bin/python bench/bench_learning.py [--data ../shared/data/transcripts/bookminder]
"""

from __future__ import annotations

import itertools
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bookminder_parser import ParsedSession, folder_from_args, parse_all  # noqa: E402
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
GRID: dict[str, tuple[float, ...]] = {
    "half_life": (0.5, 1.0, 2.0, 3.0, 5.0, 8.0), "short_share": (0.3, 0.5, 0.7, 1.0),
    "mention": (0.0, 0.2, 0.5), "last_edit": (0.0, 0.1, 0.2), "terms": (0.0, 0.1, 0.2),
}
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


def param_grid() -> list[PrefetchParams]:
    """Every parameter combination of the small selection grid (shipped defaults included)."""
    keys = list(GRID)
    grid = [PrefetchParams(**dict(zip(keys, vals, strict=True))) for vals in itertools.product(*GRID.values())]
    return grid if DEFAULT_PARAMS in grid else [*grid, DEFAULT_PARAMS]


def mean(xs: list[tuple[float, float]]) -> tuple[float, float]:
    """Mean recall@K and MRR of a list of (recall, rr)."""
    return (sum(x[0] for x in xs) / len(xs), sum(x[1] for x in xs) / len(xs)) if xs else (0.0, 0.0)


def run(data: Path) -> dict:
    """Replay every session once; rank each evaluated session under every grid point."""
    sessions = parse_all(data)
    tmp = tempfile.mkdtemp(prefix="engram-bench-learning-")
    db = Database(Path(tmp) / "bench.db").open()
    ingestor = Ingestor(db, Promoter(db, novelty=Novelty(HashingEmbedder())))
    grid = param_grid()
    freq: Counter[str] = Counter()
    last_seen: dict[str, int] = {}
    seen_errors: set[str] = set()
    # one row per evaluated session: (held_out, {ranker: (recall, rr)}), grid results per index
    evals: list[tuple[bool, dict[str, tuple[float, float]], list[tuple[float, float]]]] = []
    err_total = err_cov = rec_total = rec_cov = rec_resolved = 0
    srch_total = srch_known = 0
    tick = 0
    t0 = time.perf_counter()
    for idx, s in enumerate(sessions):
        facts = session_facts(s)
        truth = set(facts["needed"])
        conn = db.reads.conn()
        if idx > 0 and truth:
            feats = prefetch_features(conn, facts["prompt"])
            per_grid = [recall_mrr([i.file for i in rank(feats, p, K)], truth) for p in grid]
            base = {"frequency": recall_mrr([f for f, _ in freq.most_common(K)], truth),
                    "recency": recall_mrr(sorted(last_seen, key=lambda f: -last_seen[f])[:K], truth),
                    "default": per_grid[grid.index(DEFAULT_PARAMS)]}
            evals.append((s.day >= SPLIT_DAY, base, per_grid))
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
        # learn from session n, then update the baselines' history
        ingestor.learn_events(s.events)
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

    tune = [e for e in evals if not e[0]]
    # Choose on the first half only: best recall@K, then MRR; grid order breaks ties.
    best = max(range(len(grid)), key=lambda g: (round(mean([e[2][g] for e in tune])[0], 9),
                                                 round(mean([e[2][g] for e in tune])[1], 9), -g))
    # Optimistic: the grid point that is best on the full replay itself (it has seen the answers).
    oracle_g = max(range(len(grid)), key=lambda g: (round(mean([e[2][g] for e in evals])[0], 9), -g))
    splits = {"tune": tune, "held_out": [e for e in evals if e[0]], "full": evals}
    table: dict[str, dict[str, tuple[float, float]]] = {}
    for name, rows in splits.items():
        table[name] = {"chosen": mean([e[2][best] for e in rows]), "n": (len(rows), 0.0),
                       "hindsight": mean([e[2][oracle_g] for e in rows])}
        for ranker in ("default", "frequency", "recency"):
            table[name][ranker] = mean([e[1][ranker] for e in rows])
    return {"sessions": len(sessions), "evaluated": len(evals), "elapsed_s": elapsed, "grid": len(grid),
            "chosen": grid[best], "hindsight": grid[oracle_g], "table": table,
            "errors": (err_total, err_cov, rec_total, rec_cov, rec_resolved),
            "searches": (srch_total, srch_known), "memories": dict(memories)}


def main() -> None:
    """Print the Markdown tables."""
    folder = folder_from_args()
    if folder is None:
        return
    r = run(folder)
    t = r["table"]
    print(f"### Learning on BookMinder ({r['sessions']} sessions, {r['evaluated']} evaluated, "
          f"replay {r['elapsed_s']:.1f} s)\n")
    print(f"Parameters chosen on days 1-{SPLIT_DAY - 1} only ({r['grid']} grid points): `{r['chosen']}`; "
          f"shipped defaults: `{DEFAULT_PARAMS}`"
          f"{' (the same)' if r['chosen'] == DEFAULT_PARAMS else ''}.\n")
    heads = (("tune", f"days 1-{SPLIT_DAY - 1} (tuning)"), ("held_out", f"days {SPLIT_DAY}-21 (held out)"),
             ("full", "full replay"))
    print("| ranking | " + " | ".join(f"{h} recall@{K} / MRR" for _, h in heads) + " |")
    print("|---|" + "---|" * len(heads))
    print("| evaluated sessions | " + " | ".join(str(t[k]["n"][0]) for k, _ in heads) + " |")
    for name, label in (("chosen", "Engram prefetch_plan (params chosen on days 1-10)"),
                        ("default", "Engram prefetch_plan (shipped defaults)"),
                        ("frequency", "baseline: most frequently read"),
                        ("recency", "baseline: most recently read")):
        print(f"| {label} | " + " | ".join(f"{t[k][name][0]:.3f} / {t[k][name][1]:.3f}" for k, _ in heads) + " |")
    print(f"| grid point best on the full replay itself (optimistic, `{r['hindsight']}`) | "
          + " | ".join(f"{t[k]['hindsight'][0]:.3f} / {t[k]['hindsight'][1]:.3f}" for k, _ in heads) + " |")
    ratios = []
    for k, _ in heads:
        f = t[k]["frequency"][0]
        ratios.append(f"{t[k]['chosen'][0] / f:.2f}x" if f else "n/a")
    print("| **recall@10 ratio, chosen params vs frequency baseline** (target >= 1.3x) | "
          + " | ".join(f"**{x}**" for x in ratios) + " |\n")
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
