"""One prompt-budget allocator for every injection tier, adapting to the context left.

Design 001 section 8: the memory budget is 8% of the context still free, capped
at 5,000 tokens, split by priority (always-inject first). Prefetched files get up
to 25% of the context window (design 004 section 2.3) but never more than half of
what is still free; step injections are capped per step and per session.
"""

from __future__ import annotations

from dataclasses import dataclass

MEMORY_SHARE = 0.08
MEMORY_CEILING = 5_000
PREFETCH_SHARE = 0.25
STEP_EACH = 500
STEP_TOTAL = 4_000
AUGMENT_EACH = 400


@dataclass(frozen=True)
class Allocation:
    """Token budgets for one moment of a session."""

    total: int
    always_inject: int
    retrieval: int
    work_state: int
    prefetch: int
    step_each: int
    step_total: int
    augment_each: int


class PromptBudget:
    """Allocates tokens across tiers from the context window and what is already used."""

    def __init__(self, context_window: int) -> None:
        """``context_window`` of the model in tokens."""
        self.context_window = max(2_048, int(context_window))

    def allocate(self, used_tokens: int = 0) -> Allocation:
        """The budgets given ``used_tokens`` of context already spent."""
        remaining = max(0, self.context_window - used_tokens)
        total = int(min(MEMORY_CEILING, remaining * MEMORY_SHARE))
        # Proportions of the design's 100k row (400 / 1500 / 600 of 5000 with the
        # context bridge share going to retrieval here), with floors that keep the
        # always-inject tier alive when the context is nearly full.
        always = max(200 if remaining > 4_000 else 0, int(total * 0.12))
        retrieval = max(300 if remaining > 4_000 else 0, int(total * 0.64))
        work = max(100 if remaining > 4_000 else 0, int(total * 0.24))
        prefetch = int(min(self.context_window * PREFETCH_SHARE, remaining * 0.5))
        scale = min(1.0, remaining / max(1, self.context_window * 0.5))  # shrink once half is used
        return Allocation(total, always, retrieval, work, prefetch, int(STEP_EACH * max(0.3, scale)),
                          int(STEP_TOTAL * max(0.25, scale)) if remaining > 2_000 else 0,
                          int(AUGMENT_EACH * max(0.3, scale)))


def fast_tokens(text: str) -> int:
    """A linear, cheap estimate (4 characters per token) for large texts such as whole files."""
    return (len(text) + 3) // 4
