"""A weaker rule the user had to say again in the same session ("I said 3.1 pro!").

A sentence the rule scorer finds rule-like but not strongly so waits for a second session
(``prose_lessons``). When the user points back at it later in the same session ("I said ...",
"I told you ...", "rikal jsem ..."), having to say it again is that repetition: the rule stands at
once. What is insisted on is read from the words right after the cue, and must name the rule: a
version it names, or two of its salient words. A retraction ("when I said X I meant Y") insists on
nothing, and a veto typed when declining one call stays about that call.

Bounded work per message: the cues are found once over the first :data:`SCAN_CHARS` characters, at
most :data:`MAX_CUES` of them are read, and a session remembers its last :data:`MAX_WEAKER` weaker
rules.
"""

from __future__ import annotations

import re
from typing import Final

from desktop.memory.observer.cues import LANGUAGES, matches, normalise
from desktop.memory.observer.rule_scorer import content_words
from desktop.memory.observer.scratchpad import Scratchpad

#: Weaker rules of one session kept for the user's "I said ..." (the latest ones: the likeliest).
MAX_WEAKER: Final = 20
#: How far after "I said" the user names what they said: "I told you to use gemini for that research".
INSISTED_WORDS: Final = 6
SCAN_CHARS: Final = 4000
MAX_CUES: Final = 8
#: Every language's cues: a short "j'ai dit 3.1 pro !" is too short to tell its language reliably.
INSISTENCE: Final = tuple(sorted({c for cues in LANGUAGES.values() for c in cues.insistence}))
_VERSION: Final = re.compile(r"\d+(?:\.\d+)+")
_RETRACTION: Final = re.compile(r"\b(?:i meant|i mean|never ?mind|changed my mind)\b")


def salient(text: str, language: str) -> set[str]:
    """What a sentence is about: the versions it names and its content words (not function words)."""
    cues = LANGUAGES.get(language) or LANGUAGES["en"]
    norm = normalise(text)
    return {*_VERSION.findall(norm), *(w for w in content_words(norm) if w not in cues.function_words)}


def remembered(sp: Scratchpad) -> set[str]:
    """The keys of the weaker rules said so far in the session (a message insists only on those)."""
    return {key for key, _ in sp.ev.get("weaker_rules", [])}


def remember(sp: Scratchpad, key: str, text: str, language: str) -> None:
    """Keep a weaker rule for a later "I said ...", the session's last :data:`MAX_WEAKER` ones."""
    pending = [p for p in sp.ev.get("weaker_rules", []) if p[0] != key]
    pending.append([key, sorted(salient(text, language))])
    sp.ev["weaker_rules"] = pending[-MAX_WEAKER:]


def was_insisted(sp: Scratchpad, key: str) -> bool:
    """True when the rule of ``key`` was already insisted on in this session (saying it again keeps that)."""
    sig = sp.signals.get(key)
    return sig is not None and bool(sig.data.get("insisted"))


def insisted_on(text: str, language: str) -> tuple[set[str], set[str]]:
    """The versions and the salient words the user names right after each "I said" (up to the sentence's
    end, at most :data:`INSISTED_WORDS` words); nothing for a retraction."""
    norm = normalise(text[:SCAN_CHARS])
    if _RETRACTION.search(norm):
        return set(), set()
    versions: set[str] = set()
    words: set[str] = set()
    for m in matches(INSISTENCE, norm)[:MAX_CUES]:
        span = re.split(r"[.?!](?:\s|$)", norm[m.end():m.end() + 300], maxsplit=1)[0]
        about = salient(" ".join(span.split()[:INSISTED_WORDS]), language)
        versions |= {w for w in about if _VERSION.fullmatch(w)}
        words |= about - versions
    return versions, words


def promote(sp: Scratchpad, text: str, language: str, before: set[str]) -> None:
    """Let the weaker rules of ``before`` that ``text`` insists on stand without a second session."""
    versions, words = insisted_on(text, language)
    if not versions and not words:
        return
    for key, said in sp.ev.get("weaker_rules", []):
        sig = sp.signals.get(key)
        shared = set(said) & (versions | words)
        if key in before and sig is not None and (shared & versions or len(shared) >= 2):
            sig.data["min_sessions"] = 1
            sig.data["insisted"] = text[:200]
