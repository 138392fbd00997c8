"""Last re-scorings of the head of the ranking: time, then diversity.

* :func:`time_boost`: a memory whose days (its own and those its relative
  expressions resolve to, see :mod:`.timeref`) overlap the days the query names
  gains ``date_boost x top score``; when the query asks "when", a memory that
  states a time gains ``when_boost x top score``.
* :func:`mmr`: maximal marginal relevance (Carbonell & Goldstein, 1998) over the
  head: each next pick maximises ``lambda x relevance - (1 - lambda) x its highest
  cosine to what is already picked``, relevance scaled to the head's best score.
  Near-duplicates then stop filling the top 10 with one fact; ``lambda = 1``
  is plain relevance order.

Both only reorder the first ``depth`` candidates; the tail keeps its order.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import numpy as np

from desktop.memory.retrieval.timeref import asks_when, memory_windows, overlaps, query_windows, states_time

__all__ = ["mmr", "time_boost"]

_TIME_CHARS = 1500


def time_boost(query: str, ranked: list[tuple[int, float]], texts: Callable[[list[int]], dict[int, str]],
               created: Callable[[int], datetime | None], now: datetime, *, when_boost: float,
               date_boost: float, depth: int) -> tuple[list[tuple[int, float]], dict[int, float]]:
    """Re-score the top ``depth`` by time; returns the new ranking and each boosted memory's boost."""
    if len(ranked) < 2 or (when_boost <= 0 and date_boost <= 0):
        return ranked, {}
    windows = query_windows(query, now) if date_boost > 0 else []
    when = when_boost > 0 and asks_when(query)
    if not windows and not when:
        return ranked, {}
    head = ranked[:depth]
    top = head[0][1]
    if top <= 0:
        return ranked, {}
    content = texts([mid for mid, _s in head])
    boosts: dict[int, float] = {}
    for mid, _s in head:
        # Dates sit near the start of what a memory says; a long code chunk is not scanned whole
        # (and the windows' cache keys stay small).
        text = content.get(mid, "")[:_TIME_CHARS]
        b = 0.0
        if when and states_time(text):
            b += when_boost
        if windows and any(overlaps(q, m) for m in memory_windows(text, created(mid)) for q in windows):
            b += date_boost
        if b:
            boosts[mid] = b * top
    if not boosts:
        return ranked, {}
    out = [(mid, s + boosts.get(mid, 0.0)) for mid, s in head]
    out.sort(key=lambda x: (-x[1], x[0]))
    return out + ranked[depth:], boosts


def mmr(ranked: list[tuple[int, float]], vectors: dict[int, np.ndarray], lam: float, *, k: int = 10,
        depth: int = 30) -> list[tuple[int, float]]:
    """The first ``k`` picked by MMR from the top ``depth``, then the rest in their order.

    Scores are kept (the picked order is the new order); a memory without a
    vector counts as similar to nothing. ``lam >= 1`` returns ``ranked`` unchanged.
    """
    if lam >= 1.0 or len(ranked) < 3:
        return ranked
    head = ranked[:depth]
    top = head[0][1] if head[0][1] > 0 else 1.0
    rel = {mid: s / top for mid, s in head}
    ids = [mid for mid, _s in head]
    have = [mid for mid in ids if mid in vectors]
    sims: dict[int, np.ndarray] = {}
    if have:
        mat = np.stack([vectors[m] for m in have]).astype(np.float32)
        gram = mat @ mat.T
        pos = {m: i for i, m in enumerate(have)}
        sims = {m: gram[pos[m]] for m in have}
        index = pos
    else:
        index = {}
    picked: list[tuple[int, float]] = []
    best_sim = dict.fromkeys(ids, 0.0)
    left = list(head)
    while left and len(picked) < k:
        mid, score = max(left, key=lambda x: (lam * rel[x[0]] - (1 - lam) * best_sim[x[0]], -x[0]))
        picked.append((mid, score))
        left.remove((mid, score))
        row = sims.get(mid)
        if row is not None:
            for other, _s in left:
                j = index.get(other)
                if j is not None:
                    best_sim[other] = max(best_sim[other], float(row[j]))
    return picked + left + ranked[depth:]
