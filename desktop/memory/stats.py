"""The few statistics a number on screen needs to be honest: an interval, a sign test, a permutation test.

Every rate Engram shows comes with its sample size and either an interval (Wilson's, which
behaves at small n and near 0 or 1) or a test against chance; every difference between two
groups with both sample sizes and a permutation test. Nothing else is used.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % (by default) Wilson score interval of ``successes / n``; (0, 1) when n is 0."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def sign_test(wins: int, losses: int) -> float:
    """One-sided p-value that wins outnumber losses by chance (ties left out)."""
    n = wins + losses
    if n == 0:
        return 1.0
    return sum(math.comb(n, k) for k in range(wins, n + 1)) / 2 ** n


#: A difference is called distinguishable from chance below this two-sided p-value.
ALPHA = 0.05
_EXACT_SPLITS = 20_000
_DRAWS = 20_000


def permutation_test(a: Sequence[float], b: Sequence[float], *, seed: int = 0) -> float:
    """Two-sided p-value that the means of ``a`` and ``b`` differ only by chance (1.0 when either is empty).

    The pooled values are split into groups of the same sizes in every way (exactly, when there
    are at most 20,000 splits; else 20,000 random splits with a fixed seed, so the answer is the
    same every time), and the p-value is the share of splits whose difference of means is at
    least as large as the one observed. No assumption about the values' distribution: step and
    token counts are skewed, and a handful of sessions is the usual sample.
    """
    if not a or not b:
        return 1.0
    pooled = [float(x) for x in (*a, *b)]
    total, k = sum(pooled), len(a)
    observed = abs(sum(a) / k - (total - sum(a)) / len(b))
    rest = len(pooled) - k

    def extreme(group_sum: float) -> bool:
        # a tolerance: float sums of the same values in another order differ in the last bits
        return abs(group_sum / k - (total - group_sum) / rest) >= observed - 1e-9

    if math.comb(len(pooled), k) <= _EXACT_SPLITS:
        splits = [sum(c) for c in itertools.combinations(pooled, k)]
        return sum(1 for s in splits if extreme(s)) / len(splits)
    import random  # only for large samples; a hook's warning (wilson_interval) needs none of it

    rng = random.Random(seed)
    hits = sum(1 for _ in range(_DRAWS) if extreme(sum(rng.sample(pooled, k))))
    return (hits + 1) / (_DRAWS + 1)
