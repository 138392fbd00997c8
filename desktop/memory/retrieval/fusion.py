"""Fusion of the candidate paths: weighted RRF and normalised-score fusion, plus the two boosts.

Plain RRF throws the scores away and keeps ranks; when one path is much
stronger than another (BM25 vs a small embedding model on conversational
text) the weak path's noise then weighs as much as the strong path's
confident hits. Engram's default fuses *normalised scores* instead (a convex
combination; Bruch et al., "An Analysis of Fusion Functions for Hybrid
Retrieval", 2022), each path's scores z-normalised over the candidate set. RRF is still computed for every
candidate and shown in the explanation, and is available as a mode.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

__all__ = ["RRF_K", "FusionParts", "context_boost", "neighbourhood_boost", "normalise", "rrf", "score_fusion"]

RRF_K = 60
# Fewer scores than this and z-normalisation is meaningless; max-scaling is used instead.
MIN_Z_SAMPLES = 10
# Share of its best session neighbour's relevance a memory receives.
CONTEXT_SHARE = 0.3
# Design value: boosted = score + 0.3 * neighbour_count / 10 (relative to the top score here).
GRAPH_BOOST = 0.3


def rrf(paths: dict[str, list[tuple[int, float]]], weights: dict[str, float], k: int = RRF_K) -> dict[int, float]:
    """Weighted reciprocal rank fusion: sum over paths of ``weight / (k + rank)`` (rank from 1)."""
    out: dict[int, float] = {}
    for name, ranked in paths.items():
        w = weights.get(name, 0.0)
        for rank, (mid, _score) in enumerate(ranked, start=1):
            out[mid] = out.get(mid, 0.0) + w / (k + rank)
    return out


def normalise(name: str, scores: dict[int, float]) -> dict[int, float]:
    """Map one path's raw scores over the candidate set into [0, 1] for fusion (z-score fusion).

    Each score becomes its z-score among the candidates (how far above this
    query's typical candidate it is), clipped at 0 and divided by the best. This
    puts BM25 (unbounded, query-dependent) and cosine (bounded, compressed) on
    one scale without tuning per query type; on LoCoMo it beat max-scaling and
    min-max-scaling by about half a point of nDCG@10. With fewer than
    ``MIN_Z_SAMPLES`` scores (tiny projects) it scales by the best score instead.
    ``name`` is kept for explanations.
    """
    if not scores:
        return {}
    values = list(scores.values())
    if len(values) < MIN_Z_SAMPLES:
        # Too few to estimate what "typical" looks like (two candidates would become +1/-1):
        # scale by the best instead, so every real match stays in.
        top = max(values)
        return {m: max(0.0, s) / top for m, s in scores.items()} if top > 0 else dict.fromkeys(scores, 0.0)
    mean = sum(values) / len(values)
    sd = math.sqrt(sum([(v - mean) ** 2 for v in values]) / len(values))
    if sd <= 1e-12:
        return dict.fromkeys(scores, 1.0 if values[0] > 0 else 0.0)
    top = (max(values) - mean) / sd  # the largest z-score: z grows with the score
    if top <= 0:
        return dict.fromkeys(scores, 0.0)
    # max(0, z / top), spelled out: the same two divisions per score, one pass, no call per score.
    return {m: (x if (x := (s - mean) / sd / top) > 0 else 0.0) for m, s in scores.items()}


class FusionParts(Mapping[int, dict[str, float]]):
    """Per-path partial scores of each fused candidate, computed when asked (only the returned
    results' explanations read them; building a dict per candidate cost a third of fusion)."""

    def __init__(self, shares: Sequence[tuple[str, float, Callable[[int, float], float]]], ids: set[int]) -> None:
        """``shares``: (path, weight share, that path's normalised-score getter); ``ids``: the candidates."""
        self._shares = shares
        self._ids = ids

    def __getitem__(self, mid: int) -> dict[str, float]:
        """The candidate's positive weighted contributions by path."""
        if mid not in self._ids:
            raise KeyError(mid)
        parts = ((p, share * get(mid, 0.0)) for p, share, get in self._shares)
        return {p: v for p, v in parts if v > 0}

    def __iter__(self) -> Iterator[int]:
        """The fused candidates."""
        return iter(self._ids)

    def __len__(self) -> int:
        """How many candidates were fused."""
        return len(self._ids)


def score_fusion(norm: dict[str, dict[int, float]], weights: dict[str, float],
                 candidates: Iterable[int]) -> tuple[dict[int, float], FusionParts]:
    """Weighted sum of normalised path scores; returns totals and per-path partial scores.

    Weights of paths that produced nothing for this query are handed to the
    others (renormalised), so a missing graph or dense path does not shrink
    every score alike and the numbers stay comparable between queries.
    """
    active = {p: w for p, w in weights.items() if norm.get(p)}
    total_w = sum(active.values()) or 1.0
    shares = [(p, w / total_w, norm[p].get) for p, w in active.items()]
    totals = dict.fromkeys(candidates, 0.0)
    # Path by path over the scores each has (a path that lacks a candidate would add 0.0): the same
    # products summed in the same order as the partials would give, without a list per candidate.
    for p, share, _get in shares:
        for mid, value in norm[p].items():
            if mid in totals:
                totals[mid] += share * value
    return totals, FusionParts(shares, set(totals))


def context_boost(scores: dict[int, float], neighbours: dict[int, list[int]],
                  share: float = CONTEXT_SHARE, reply_share: float = 0.0) -> dict[int, float]:
    """Boost = ``share`` x the best relevance among a memory's session neighbours, plus
    ``reply_share`` x the relevance of the memory just before it (the one it answers).

    Only the part of the neighbour's relevance that exceeds the memory's own is
    lent in full, so two equally relevant neighbours do not inflate each other.
    The reply term is directional because an answer follows its question: a
    query that matches "how long have you been married?" is answered by the
    next turn, "5 years already!", which shares none of its words.
    """
    out: dict[int, float] = {}
    for mid, near in neighbours.items():
        own = scores.get(mid, 0.0)
        best = max((scores.get(n, 0.0) for n in near), default=0.0)
        b = 0.0
        if best > 0:
            b = share * best if best > own else share * best * 0.5
        if reply_share > 0:
            before = [n for n in near if n < mid]  # ids grow with writing order within a session
            if before:
                b += reply_share * scores.get(max(before), 0.0)
        if b > 0:
            out[mid] = b
    return out


def neighbourhood_boost(ranked: list[tuple[int, float]], files_of: dict[int, list[str]],
                        neighbour_files: set[str], *, top_k: int = 10, window: int = 50,
                        boost: float = GRAPH_BOOST) -> dict[int, float]:
    """The graph neighbourhood boost: candidates ranked ``top_k+1..window`` whose files neighbour
    the top results' files gain ``boost * min(count, 10) / 10`` of the top score."""
    if not ranked or not neighbour_files:
        return {}
    top_score = ranked[0][1] or 1.0
    out: dict[int, float] = {}
    for mid, _score in ranked[top_k:window]:
        count = sum(1 for f in files_of.get(mid, ()) if f in neighbour_files)
        if count:
            out[mid] = boost * min(count, 10) / 10 * top_score
    return out
