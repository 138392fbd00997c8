"""The trust settings' numbers: injection thresholds and promotion presets, one table for every door.

The app's Trust dialog (``desktop/ui/trust.py``) words the levels; hooks, the agent
and the MCP server read the same numbers from here, so a level means the same
threshold whichever door injects, and a promotion preset means the same thresholds
whichever door finalises a session (the composition root hands the project's preset
to the one promoter).
"""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True)
class PromotionPreset:
    """How readily the observer turns a session's signals into memories (the Trust dialog's "Promotion").

    ``extra_sessions`` is added to each learned signal class's minimum number of sessions
    (never below one; what the user said is exempt), ``min_value`` is the score a signal
    needs, ``cap_factor`` scales each session type's cap on new memories.
    """

    name: str
    extra_sessions: int
    min_value: float
    cap_factor: float

    def cap(self, base: int) -> int:
        """The cap on new memories for a session type whose balanced cap is ``base``."""
        return max(1, round(base * self.cap_factor)) if base > 0 else 0


#: Balanced is the observer's measured default (issue 13); the other two move every knob one
#: step, as the reference design's presets do (4/3/2 points, importance 0.4/0.25/0.15).
PROMOTION_PRESETS: Final[dict[str, PromotionPreset]] = {
    "conservative": PromotionPreset("conservative", 1, 0.70, 0.5),
    "balanced": PromotionPreset("balanced", 0, 0.40, 1.0),
    "eager": PromotionPreset("eager", -1, 0.30, 1.5),
}
DEFAULT_PRESET: Final = "balanced"


def promotion_preset(name: str | None) -> PromotionPreset:
    """The preset called ``name``; an unknown or missing name is the default (balanced)."""
    key = str(name or "").strip().strip('"').lower()
    return PROMOTION_PRESETS.get(key, PROMOTION_PRESETS[DEFAULT_PRESET])
