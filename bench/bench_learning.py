"""Cross-session learning on BookMinder: does Engram predict what session n needs?

Replays the BookMinder sessions in time order through the real observer,
promotion and cross-session tables (a throw-away database). Before learning
session n, it asks ``prefetch_plan(first prompt of n)`` and compares with the
files n actually read or edited (files it created are not counted), next to two
baselines computed from the same history: "most frequently read so far" and
"most recently read". It also measures how many of n's errors match an error
pattern learned earlier, and how many of its searches were already known.

Run: .venv/bin/python bench/bench_learning.py [--data ../shared/data/transcripts/bookminder]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bookminder_parser import ParsedSession, parse_all  # noqa: E402
from desktop.memory.observer.events import ToolCall, ToolResult, UserMessage  # noqa: E402
from desktop.memory.observer.ingest import Ingestor  # noqa: E402
from desktop.memory.observer.novelty import HashingEmbedder, Novelty  # noqa: E402
from desktop.memory.observer.prefetch import prefetch_plan  # noqa: E402
from desktop.memory.observer.promotion import Promoter  # noqa: E402
from desktop.memory.observer.signals import error_fingerprint  # noqa: E402
from desktop.memory.store.database import Database  # noqa: E402

K = 10
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


def run(data: Path) -> dict:
    """Replay every session and collect the metrics."""
    sessions = parse_all(data)
    tmp = tempfile.mkdtemp(prefix="engram-bench-learning-")
    db = Database(Path(tmp) / "bench.db").open()
    ingestor = Ingestor(db, Promoter(db, novelty=Novelty(HashingEmbedder())))
    freq: Counter[str] = Counter()
    last_seen: dict[str, int] = {}
    seen_errors: set[str] = set()
    rows = {"engram": [], "frequency": [], "recency": []}
    err_total = err_cov = rec_total = rec_cov = rec_resolved = 0
    srch_total = srch_known = 0
    tick = 0
    t0 = time.perf_counter()
    for idx, s in enumerate(sessions):
        facts = session_facts(s)
        truth = set(facts["needed"])
        conn = db.reads.conn()
        if idx > 0 and truth:
            ranked = [i.file for i in prefetch_plan(conn, facts["prompt"], K)]
            rows["engram"].append(recall_mrr(ranked, truth))
            rows["frequency"].append(recall_mrr([f for f, _ in freq.most_common(K)], truth))
            rows["recency"].append(recall_mrr(sorted(last_seen, key=lambda f: -last_seen[f])[:K], truth))
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

    def avg(xs: list[tuple[float, float]], i: int) -> float:
        return sum(x[i] for x in xs) / len(xs) if xs else 0.0
    return {"sessions": len(sessions), "evaluated": len(rows["engram"]), "elapsed_s": elapsed,
            "prefetch": {k: (avg(v, 0), avg(v, 1)) for k, v in rows.items()},
            "errors": (err_total, err_cov, rec_total, rec_cov, rec_resolved),
            "searches": (srch_total, srch_known), "memories": dict(memories)}


def main() -> None:
    """Print the Markdown tables."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=ROOT / ".." / "shared" / "data" / "transcripts" / "bookminder")
    args = ap.parse_args()
    if not args.data.is_dir():
        print(f"BookMinder transcripts not found at {args.data}; skipped.")
        return
    r = run(args.data)
    p = r["prefetch"]
    print(f"### Learning on BookMinder ({r['sessions']} sessions, {r['evaluated']} evaluated, "
          f"replay {r['elapsed_s']:.1f} s)\n")
    print(f"| ranking | recall@{K} | MRR |\n|---|---|---|")
    for name, label in (("engram", "Engram prefetch_plan"), ("frequency", "baseline: most frequently read"),
                        ("recency", "baseline: most recently read")):
        print(f"| {label} | {p[name][0]:.3f} | {p[name][1]:.3f} |")
    ratio = p["engram"][0] / p["frequency"][0] if p["frequency"][0] else float("inf")
    print(f"\nrecall@{K} ratio vs frequency baseline: **{ratio:.2f}x** (target >= 1.3x)\n")
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
