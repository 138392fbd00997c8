"""The trust progression of the reference design: four levels per project.

Pure logic (no widgets) so it is easy to test: what each level injects, when a
project may advance (never automatically past Standard, and Autonomous only with
explicit acknowledgement), when a step back is offered (never forced), and how
much of the session-end summary to show.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication

from desktop.memory.preferences import ProjectPrefs
from desktop.memory.trust_levels import INJECTION_THRESHOLDS
from desktop.ui.tr_noop import QT_TRANSLATE_NOOP


@dataclass(frozen=True)
class TrustLevel:
    """One level: its number, name, injection threshold and how it is left."""

    number: int
    name: str
    min_confidence: float
    description: str


LEVELS: tuple[TrustLevel, ...] = (
    TrustLevel(1, QT_TRANSLATE_NOOP("Trust", "Cautious"), INJECTION_THRESHOLDS[1], QT_TRANSLATE_NOOP(
        "Trust", "Only memories above 0.80 confidence reach the agent. Every new memory waits for "
                 "your confirmation at the end of the session.")),
    TrustLevel(2, QT_TRANSLATE_NOOP("Trust", "Standard"), INJECTION_THRESHOLDS[2], QT_TRANSLATE_NOOP(
        "Trust", "Memories above 0.65 reach the agent, and gotchas are offered while it works. "
                 "The session summary proposes “Confirm all”.")),
    TrustLevel(3, QT_TRANSLATE_NOOP("Trust", "Confident"), INJECTION_THRESHOLDS[3], QT_TRANSLATE_NOOP(
        "Trust", "Memories above 0.55 reach the agent. The session summary only shows memories "
                 "that need review.")),
    TrustLevel(4, QT_TRANSLATE_NOOP("Trust", "Autonomous"), INJECTION_THRESHOLDS[4], QT_TRANSLATE_NOOP(
        "Trust", "Memories above 0.45 reach the agent. The session summary is not shown unless you "
                 "open it from the memory panel.")),
)

REGRESSION_FLAGS = 3       # flags in one session before a step back is offered
DISMISS_STREAK = 3         # dismissed summaries in a row before the summary is shown less
QUIET_MIN_LEARNED = 4      # ... after which it is shown only when more than 3 were learned


def level(number: int) -> TrustLevel:
    """The level with this number (clamped to 1-4)."""
    return LEVELS[min(4, max(1, number)) - 1]


def level_name(number: int) -> str:
    """Translated name of a level."""
    return QCoreApplication.translate("Trust", level(number).name)


def level_description(number: int) -> str:
    """Translated one-paragraph description of a level."""
    return QCoreApplication.translate("Trust", level(number).description)


def confirmed_ratio(prefs: ProjectPrefs) -> float:
    """Share of proposed memories the user confirmed (1.0 before any was proposed)."""
    return prefs.confirmed / prefs.suggested if prefs.suggested else 1.0


def correction_rate(prefs: ProjectPrefs) -> float:
    """Corrections per proposed memory."""
    return prefs.corrected / prefs.suggested if prefs.suggested else 0.0


def can_advance(prefs: ProjectPrefs) -> bool:
    """True when the design's advancement rule for the current level is met.

    Cautious -> Standard: 3 sessions and at least half of the new memories confirmed.
    Standard -> Confident: 10 or more sessions, under 5% corrections, at least one correction.
    Confident -> Autonomous: only by explicit opt-in, so never "ready" on its own.
    """
    if prefs.trust_level == 1:
        return prefs.sessions >= 3 and confirmed_ratio(prefs) >= 0.5
    if prefs.trust_level == 2:
        return prefs.sessions >= 10 and correction_rate(prefs) < 0.05 and prefs.corrected >= 1
    return False


def needs_acknowledgement(target: int) -> bool:
    """Moving to Autonomous (or Confident by hand) needs an explicit yes from the user."""
    return target >= 3


def should_offer_regression(prefs: ProjectPrefs, flags_this_session: int) -> bool:
    """Offer (never force) a step back after 3+ flagged memories in one session."""
    return (prefs.trust_level > 1 and flags_this_session >= REGRESSION_FLAGS
            and prefs.regression_declined_at != prefs.sessions)


def summary_mode(prefs: ProjectPrefs, learned: int) -> str:
    """How the session-end summary appears: "full", "review_only", "hidden" or "quiet".

    Level 3 condenses to memories that need review; level 4 hides it (it stays on
    demand in the panel). After 3 dismissals in a row it appears only for sessions
    that learned more than 3 memories -- it is never suppressed for good.
    """
    if prefs.trust_level >= 4:
        return "hidden"
    if prefs.summary_dismiss_streak >= DISMISS_STREAK and learned < QUIET_MIN_LEARNED:
        return "quiet"
    if prefs.trust_level == 3:
        return "review_only"
    return "full"
