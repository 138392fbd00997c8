"""The few statistics a number on screen needs to be honest: an interval and a sign test.

Every rate Engram shows comes with its sample size and either an interval (Wilson's, which
behaves at small n and near 0 or 1) or a test against chance; these are the only two used.
"""

from __future__ import annotations

import math


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
