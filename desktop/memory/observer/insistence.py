"""A weaker rule the user had to say again in the same session ("I said 3.1 pro!").

A sentence the rule scorer finds rule-like but not strongly so waits for a second session
(``prose_lessons``). When the user points back at it later in the same session ("I said ...",
"I told you ...", "rikal jsem ..."), having to say it again is that repetition: the rule stands at
once. What is insisted on is read from the words right after the cue, and must name the rule: a
version or a code token it names (a file, a path, backticked text), or two of its other salient words.
A retraction ("when I said X I meant Y", "forget what I said") or a report ("what I told you about X")
insists on nothing, and a veto typed when declining one call stays about that call.

Bounded work per message: the cues are found once over the first :data:`SCAN_CHARS` characters, at
most :data:`MAX_CUES` of them are read, and a session remembers its last :data:`MAX_WEAKER` weaker
rules.
"""

from __future__ import annotations

import re
from typing import Final

from desktop.memory.observer.cues import LANGUAGES, matches, normalise
from desktop.memory.observer.rule_scorer import concrete_tokens, content_words
from desktop.memory.observer.scratchpad import Scratchpad

#: Weaker rules of one session kept for the user's "I said ..." (the latest ones: the likeliest).
MAX_WEAKER: Final = 20
#: How far after "I said" the user names what they said: "I told you to use gemini for that research".
INSISTED_WORDS: Final = 6
SCAN_CHARS: Final = 4000
MAX_CUES: Final = 8
#: Every language's cues: a short "j'ai dit 3.1 pro !" is too short to tell its language reliably.
INSISTENCE: Final = tuple(sorted({c for cues in LANGUAGES.values() for c in cues.insistence}))
#: A version: dotted numbers ("3.1", "2.5.0").
VERSION: Final = re.compile(r"\d+(?:\.\d+)+")
#: What ``concrete_tokens`` reads as one name: backticked text, paths, file names.
_CODE: Final = re.compile(r"`[^`\n]{2,80}`|(?<![\w.])(?:[\w.-]+/)+[\w.-]+|(?<![\w/])\.?[\w-]+\.[a-z]{1,5}\b")
_RETRACTION: Final = re.compile(r"\b(?:i meant|i mean|never ?mind|changed my mind|was wrong|after all|"
                                r"forget (?:what|that)|ignore (?:what|that)|scratch that)\b")
#: A cue after these words reports a past statement ("what I said about X", "I know I said X"), not insistence.
_REPORTED: Final = re.compile(r"(?:\bwhat|\bknow|\bforget|\bignore|\bwhen|\bif|\bthat)\s+$")


def _names(text: str) -> set[str]:
    """The code tokens of ``text`` by their last part: `.entire/settings.json` and settings.json are one."""
    return {t.lower().rstrip("/").rsplit("/", 1)[-1] for t in concrete_tokens(text)}


def _about(text: str, language: str) -> tuple[set[str], set[str]]:
    """What a text is about: the versions and code tokens it names (a file name is one token, not its
    parts), and its other content words (not function words)."""
    cues = LANGUAGES.get(language) or LANGUAGES["en"]
    norm = normalise(text)
    named = {*VERSION.findall(norm), *_names(text)}
    prose = _CODE.sub(" ", norm)
    return named, {w for w in content_words(prose) if w not in cues.function_words} - named


def salient(text: str, language: str) -> set[str]:
    """Everything a sentence is about (``_about``'s names and words together)."""
    named, words = _about(text, language)
    return named | words


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
    """What the user names right after each "I said" (up to the sentence's end, at most
    :data:`INSISTED_WORDS` words): the versions and code tokens, and the other salient words. Nothing for a
    retraction, or for a cue that reports a past statement ("what I said about X")."""
    norm = normalise(text[:SCAN_CHARS])
    if _RETRACTION.search(norm):
        return set(), set()
    named: set[str] = set()
    words: set[str] = set()
    for m in matches(INSISTENCE, norm)[:MAX_CUES]:
        if _REPORTED.search(norm[max(0, m.start() - 12):m.start()]):
            continue
        span = re.split(r"[.?!](?:\s|$)", text[m.end():m.end() + 300], maxsplit=1)[0]
        names, other = _about(" ".join(span.split()[:INSISTED_WORDS]), language)
        named |= names
        words |= other
    return named, words


def promote(sp: Scratchpad, text: str, language: str, before: set[str]) -> None:
    """Let the weaker rules of ``before`` that ``text`` insists on stand without a second session."""
    named, words = insisted_on(text, language)
    if not named and not words:
        return
    for key, said in sp.ev.get("weaker_rules", []):
        sig = sp.signals.get(key)
        shared = set(said) & (named | words)
        if key in before and sig is not None and (shared & named or len(shared) >= 2):
            sig.data["min_sessions"] = 1
            sig.data["insisted"] = text[:200]
