"""The trust progression's injection thresholds: one table for every door.

The app's Trust dialog (``desktop/ui/trust.py``) words the levels; hooks, the agent
and the MCP server read the same numbers from here, so a level means the same
threshold whichever door injects.
"""

from __future__ import annotations

from typing import Final

#: Level number -> the confidence a memory needs to reach an agent at that level.
INJECTION_THRESHOLDS: Final[dict[int, float]] = {1: 0.80, 2: 0.65, 3: 0.55, 4: 0.45}
#: A project that never chose a level is Cautious.
DEFAULT_LEVEL: Final = 1


def clamp_level(number: int) -> int:
    """A level number within 1-4."""
    return min(4, max(1, int(number)))


def injection_threshold(number: int) -> float:
    """The injection threshold of trust level ``number`` (clamped to 1-4)."""
    return INJECTION_THRESHOLDS[clamp_level(number)]
