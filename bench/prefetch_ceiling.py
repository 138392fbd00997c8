"""How far can any history-based prefetch go on BookMinder? An optimistic ceiling.

``bench_learning.py`` measures Engram's prefetch against the "most frequently read"
baseline. This script asks whether a richer model could do much better with the same
inputs (the sessions before n and session n's first prompt): it fits a logistic
model on 15 per-file history features and ranks session n's candidates by it, in
two ways:

* **online** (honest): fitted on sessions 2..n-1 only, like Engram would be;
* **in hindsight** (optimistic, not a real predictor): fitted on every evaluated
  session, including the one it then ranks; an upper bound for this model family.

It also prints the oracle: every needed file that was ever seen before ranked first.
Deleted and moved files are dropped from the candidates with the same shell-command
parser the observer uses. Evaluation tooling only; numpy is already a dependency.

Run: .venv/bin/python bench/prefetch_ceiling.py [--data ../shared/data/transcripts/bookminder]
"""

from __future__ import annotations

import math
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_learning import _FILE_TOOLS, SPLIT_DAY, recall_mrr, session_facts  # noqa: E402
from bench.bookminder_parser import CWD, folder_from_args, parse_all  # noqa: E402
from desktop.memory.observer.events import ToolCall  # noqa: E402
from desktop.memory.observer.file_ops import file_operations  # noqa: E402
from desktop.memory.observer.prefetch import decayed_share, mentioned_files  # noqa: E402
from desktop.memory.observer.tool_names import plausible_file  # noqa: E402

FEATURES = ("share_all", "decayed_1", "decayed_2", "decayed_4", "agent_decayed_2", "agent_share", "in_last",
            "edited_last", "in_last_2", "created_last_3", "mentioned", "log_sessions_since", "folder_revisit",
            "co_access_last", "log_age")


def _history(sessions: list) -> list[tuple[object, dict, list[dict]]]:
    """(session, facts, summaries of the sessions before it) for every evaluated session."""
    hist: list[dict] = []
    rows = []
    for i, s in enumerate(sessions):
        facts = session_facts(s)
        if i > 0 and facts["needed"]:
            rows.append((s, facts, list(hist)))
        touched, edited, created, removed, moved = set(), set(), set(), [], []
        for e in s.events:
            if not isinstance(e, ToolCall):
                continue
            if e.tool in _FILE_TOOLS:
                paths = [p for p in e.file_paths if "*" not in p and not p.startswith("/")]
                if e.tool == "Write":
                    created.update(p for p in paths if p not in touched)
                touched.update(paths)
                if e.tool != "Read":
                    edited.update(paths)
            elif e.tool == "Bash":
                ops = file_operations(str(e.args.get("command", "")), CWD)
                removed += ops.removed
                moved += ops.moved
        hist.append({"agent": s.agent, "touched": touched, "edited": edited, "created": created,
                     "removed": removed, "moved": moved})
    return rows


def _alive(hist: list[dict]) -> set[str]:
    """Files touched so far and not deleted or moved away since (the same rule as the observer's)."""
    alive: set[str] = set()
    for h in hist:
        alive |= h["touched"]
        for old, new in h["moved"]:
            alive.discard(old)
            alive.add(new)
        for r in h["removed"]:
            alive -= {p for p in alive if p == r or p.startswith(r.rstrip("/") + "/")}
    return {p for p in alive if plausible_file(p)}


def features(s, facts: dict, hist: list[dict]) -> tuple[list[str], np.ndarray]:
    """Candidate files and their feature matrix, from the sessions before ``s`` only."""
    n = len(hist)
    ages, agent_ages, first = defaultdict(list), defaultdict(list), {}
    same = [h for h in hist if h["agent"] == s.agent]
    for a, h in enumerate(reversed(hist)):
        for p in h["touched"]:
            ages[p].append(a)
    for a, h in enumerate(reversed(same)):
        for p in h["touched"]:
            agent_ages[p].append(a)
    for k, h in enumerate(hist):
        for p in h["touched"]:
            first.setdefault(p, k)
    revisits: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for p, a in ages.items():
        folder = p.rsplit("/", 1)[0] if "/" in p else ""
        revisits[folder][0] += len(a) - 1
        revisits[folder][1] += n - 1 - first[p]
    last = hist[-1]
    co: Counter[str] = Counter()
    for h in hist[:-1]:
        shared = len(h["touched"] & last["touched"])
        for p in h["touched"] if shared else ():
            co[p] += shared / max(1, len(last["touched"]))
    cands = sorted(_alive(hist) & ages.keys())
    named = mentioned_files(facts["prompt"], cands)
    rows = []
    for p in cands:
        a, folder = ages[p], revisits[p.rsplit("/", 1)[0] if "/" in p else ""]
        rows.append([len(a) / (n + 2), decayed_share(a, n, 1), decayed_share(a, n, 2), decayed_share(a, n, 4),
                     decayed_share(agent_ages.get(p, []), len(same), 2), len(agent_ages.get(p, [])) / (len(same) + 2),
                     float(p in last["touched"]), float(p in last["edited"]),
                     float(any(p in h["touched"] for h in hist[-2:])),
                     float(any(p in h["created"] for h in hist[-3:])), float(p in named), math.log1p(min(a)),
                     (folder[0] + 1) / (folder[1] + 2), co[p] / max(1, n), math.log1p(n - first[p])])
    return cands, np.array(rows, dtype=float)


def fit(x: np.ndarray, y: np.ndarray, l2: float = 10.0):
    """L2-regularised logistic regression by Newton steps; returns a scoring function."""
    mu, sd = x.mean(0), x.std(0) + 1e-9
    z = np.hstack([(x - mu) / sd, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    reg = l2 * np.eye(len(w)) / len(y)
    reg[-1, -1] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-z @ w))
        grad = z.T @ (p - y) / len(y) + reg @ w
        hess = (z.T * (p * (1 - p))) @ z / len(y) + reg
        w -= np.linalg.solve(hess, grad)
    return lambda m: np.hstack([(m - mu) / sd, np.ones((len(m), 1))]) @ w


def main() -> None:
    """Print the ceiling table."""
    folder = folder_from_args()
    if folder is None:
        return
    sessions = parse_all(folder)
    rows = _history(sessions)
    data = []
    for s, facts, hist in rows:
        cands, x = features(s, facts, hist)
        data.append((s, facts, cands, x, np.array([c in set(facts["needed"]) for c in cands], dtype=float)))
    # the frequency baseline exactly as bench_learning computes it (access counts, event order)
    freq_by_session, freq = [], Counter()
    for s in sessions:
        freq_by_session.append([f for f, _ in freq.most_common(10)])
        for e in s.events:
            if isinstance(e, ToolCall) and e.tool in _FILE_TOOLS:
                freq.update(p for p in e.file_paths if "*" not in p and not p.startswith("/"))
    index = {s.session_id: i for i, s in enumerate(sessions)}
    x_all, y_all = np.vstack([d[3] for d in data]), np.concatenate([d[4] for d in data])
    hindsight = fit(x_all, y_all)
    results: dict[str, list[tuple[bool, float]]] = defaultdict(list)
    for k, (s, facts, cands, x, _y) in enumerate(data):
        truth, held = set(facts["needed"]), s.day >= SPLIT_DAY
        seen = set().union(*(h["touched"] for h in rows[k][2]))
        results["oracle"].append((held, min(10, len(truth & seen)) / len(truth)))
        results["frequency"].append((held, recall_mrr(freq_by_session[index[s.session_id]], truth)[0]))
        for name, scorer in (("hindsight", hindsight), ("online", None)):
            if scorer is None:
                if k < 3:  # too little to fit on: fall back to the all-time share
                    scores = x[:, 0]
                else:
                    scores = fit(np.vstack([d[3] for d in data[:k]]), np.concatenate([d[4] for d in data[:k]]))(x)
            else:
                scores = scorer(x)
            order = [cands[j] for j in sorted(range(len(cands)), key=lambda j: (-scores[j], cands[j]))]
            results[name].append((held, recall_mrr(order, truth)[0]))

    def avg(name: str, part: str) -> float:
        vals = [r for held, r in results[name] if part == "full" or (part == "held") == held]
        return sum(vals) / len(vals)

    print(f"### Prefetch ceiling on BookMinder ({len(data)} evaluated sessions, {len(FEATURES)} features)\n")
    print("| ranking | days 1-10 recall@10 | days 11-21 recall@10 | full recall@10 | full vs frequency |")
    print("|---|---|---|---|---|")
    labels = (("frequency", "baseline: most frequently read"),
              ("online", "logistic model, fitted on earlier sessions only (honest)"),
              ("hindsight", "logistic model, fitted on all sessions incl. the ranked one (optimistic)"),
              ("oracle", "oracle: every needed file seen before ranked first"))
    base = avg("frequency", "full")
    for name, label in labels:
        print(f"| {label} | {avg(name, 'tune'):.3f} | {avg(name, 'held'):.3f} | {avg(name, 'full'):.3f} | "
              f"{avg(name, 'full') / base:.2f}x |")


if __name__ == "__main__":
    main()
