"""Which files should a new session read first? Ranked from everything learned so far.

The score blends five learned signals, each normalised to 0..1:

* frequency: share of past sessions that needed the file;
* recency: how recently it was needed (half-life counted in sessions);
* prompt terms: how strongly the prompt's words were associated with the file in
  past sessions (learned from first prompts), weighted by how rare each word is;
* path match: the prompt's words in the file's own path, and files named outright;
* memories: files attached to memories whose text shares the prompt's words.

The top few then spread a share of their score to their co-access neighbours, so
a file that is always opened together with a strongly predicted one rises too.
"""

from __future__ import annotations

import bisect
import logging
import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from desktop.memory.observer.cross_session import path_terms, prompt_terms

logger = logging.getLogger("engram.observer")

WEIGHTS: Final[dict[str, float]] = {
    "frequency": 0.20, "recency": 0.40, "terms": 0.30, "path": 0.10, "memories": 0.05,
}
# Tuned on BookMinder: spreading score to co-access neighbours displaced better
# candidates there, so it is a small tie-breaker rather than a driver.
CO_ACCESS_SHARE: Final = 0.02
SEEDS: Final = 5
RECENCY_HALF_LIFE_SESSIONS: Final = 2.0
_MENTION: Final = re.compile(r"[@`'\"]?([\w./-]+\.\w{1,8})\b")


@dataclass
class PrefetchItem:
    """One ranked file with its score and the parts that made it."""

    file: str
    score: float
    parts: dict[str, float] = field(default_factory=dict)


def _parse_ts(text: str) -> float:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except (ValueError, AttributeError):
        return 0.0


def _sessions_after(ends: list[float], t: float) -> int:
    """How many learned sessions ended after time ``t`` (ends sorted)."""
    return len(ends) - bisect.bisect_right(ends, t + 1e-3)


def _norm(values: dict[str, float]) -> dict[str, float]:
    top = max(values.values(), default=0.0)
    return {k: v / top for k, v in values.items()} if top > 0 else {}


def prefetch_plan(conn: Any, prompt: str, k: int = 10, *, exclude_missing_under: str | None = None
                  ) -> list[PrefetchItem]:
    """The ``k`` files a new session on ``prompt`` should read first, best first.

    ``conn`` is a read connection of the project database. With
    ``exclude_missing_under`` (the project folder), files that no longer exist are
    skipped.
    """
    nodes = conn.execute("SELECT file_path, session_count, last_accessed_at FROM observer_file_nodes"
                         " WHERE session_count > 0").fetchall()
    if not nodes:
        return []
    total = max(1, int(conn.execute("SELECT count(*) FROM session_metrics").fetchall()[0][0]))
    stamps = {p: _parse_ts(t) for p, _, t in nodes}
    newest = max(stamps.values())
    freq = {p: n / total for p, n, _ in nodes}
    # Recency counts sessions, not days: a project touched once a month and one touched
    # hourly should both treat "the last session" as recent.
    ends = sorted(_parse_ts(r[0]) for r in conn.execute("SELECT ended_at FROM session_metrics"))
    recency = {p: 0.5 ** (_sessions_after(ends, t) / RECENCY_HALF_LIFE_SESSIONS) for p, t in stamps.items()}
    del newest
    terms = prompt_terms(prompt)
    term_score = _term_scores(conn, terms, total)
    path_score: dict[str, float] = {}
    mentioned = {m.group(1).lstrip("./@") for m in _MENTION.finditer(prompt)}
    if terms or mentioned:
        tset = set(terms)
        for p in freq:
            pt = path_terms(p)
            hit = len(tset & pt) / max(1, min(len(tset), 4)) if tset else 0.0
            if any(p == m or p.endswith("/" + m) for m in mentioned):
                hit += 2.0
            if hit:
                path_score[p] = hit
    mem_score = _memory_scores(conn, terms)
    parts = {"frequency": _norm(freq), "recency": recency, "terms": _norm(term_score),
             "path": _norm(path_score), "memories": _norm(mem_score)}
    scores: dict[str, float] = {}
    for name, values in parts.items():
        w = WEIGHTS[name]
        for p, v in values.items():
            if p in freq:
                scores[p] = scores.get(p, 0.0) + w * v
    co = _co_access(conn, sorted(scores, key=scores.get, reverse=True)[:SEEDS], scores)  # type: ignore[arg-type]
    for p, v in co.items():
        if p in freq:
            scores[p] = scores.get(p, 0.0) + v
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    out: list[PrefetchItem] = []
    for p, s in ranked:
        if exclude_missing_under is not None:
            import os
            if not os.path.exists(os.path.join(exclude_missing_under, p)):
                continue
        out.append(PrefetchItem(p, round(s, 4), {n: round(v.get(p, 0.0), 3) for n, v in parts.items()}
                                | {"co_access": round(co.get(p, 0.0), 3)}))
        if len(out) >= k:
            break
    return out


def _term_scores(conn: Any, terms: list[str], total: int) -> dict[str, float]:
    if not terms:
        return {}
    out: dict[str, float] = {}
    marks = ",".join("?" * len(terms))
    rows = conn.execute(f"SELECT term, file_path, weight, session_count FROM observer_term_files"
                        f" WHERE term IN ({marks})", terms).fetchall()
    by_term: dict[str, list[tuple[str, float, int]]] = {}
    for term, path, w, n in rows:
        by_term.setdefault(term, []).append((path, float(w), int(n)))
    for items in by_term.values():
        df = max(n for _, _, n in items)  # sessions whose prompt used the term
        idf = math.log(1 + total / df)
        mass = sum(w for _, w, _ in items)
        for path, w, _ in items:
            out[path] = out.get(path, 0.0) + idf * w / mass
    return out


def _memory_scores(conn: Any, terms: list[str]) -> dict[str, float]:
    if not terms:
        return {}
    out: dict[str, float] = {}
    rows = conn.execute("SELECT content, related_files FROM memories WHERE deprecated = 0"
                        " AND related_files <> '[]' ORDER BY id DESC LIMIT 2000").fetchall()
    import json
    tset = set(terms)
    for content, files in rows:
        hits = len(tset & set(prompt_terms(content, 60)))
        if hits:
            for p in json.loads(files or "[]"):
                out[p] = out.get(p, 0.0) + hits
    return out


def _co_access(conn: Any, seeds: list[str], scores: dict[str, float]) -> dict[str, float]:
    out: dict[str, float] = {}
    if not seeds:
        return out
    top = conn.execute("SELECT max(weight) FROM observer_co_access_edges").fetchall()[0][0] or 1.0
    for seed in seeds:
        base = scores.get(seed, 0.0) * CO_ACCESS_SHARE
        for a, b, w in conn.execute("SELECT file_a, file_b, weight FROM observer_co_access_edges"
                                    " WHERE file_a = ? OR file_b = ? ORDER BY weight DESC LIMIT 20", (seed, seed)):
            other = b if a == seed else a
            if other not in seeds:
                out[other] = out.get(other, 0.0) + base * float(w) / float(top)
    return out
