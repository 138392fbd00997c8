"""How a user's sentence is shaped, read before it is weighed (``rule_scorer``).

- Where it opens: past its discourse markers ("oh, yeah, ...") and whether one answered the agent; past a
  universal adverb that leads it; which clause carries its mood.
- How it names generality and alternatives: a universal that directs ("always run"), not one that describes
  ("is never called"); the alternative named ("X, not Y").
- How fast typing and politeness word it: mood words with two neighbouring letters swapped ("shoudl"); the
  speaker's reminder anywhere in it ("..., but I wanted to remind you to X") and the aside a "but" sets apart;
  the politeness past ("I wanted to ask") that is no story; the habitual ("we should be using X").
"""

from __future__ import annotations

import re
from typing import Final

from desktop.memory.observer.cues import LanguageCues, blank, find, matches, starts_with

_CLAUSE: Final = re.compile(r"\s*(?:[,;:]|\s--?\s|\s[—–]\s|\(|\))\s*")

#: First or second person, then a past tense: the story of this session ("we removed", "you wrote").
PAST: Final = re.compile(r"\b(?:i|we|you|he|she|they)\s+(?:\w+ly\s+|just\s+|already\s+)?"
                         r"(?:(?!need\b|\w*ceed\b)\w+ed|was|were|did|had|made|got|said|wrote|ran|went|saw|found|broke|"
                         r"forgot|left|put|took|gave|thought|tried)\b")
#: A modal of obligation said to the team or the agent, then the progressive: a practice to keep up ("we should
#: be using strong types", "you shouldn't be reading the logs"), not one step. Not an expectation ("we should be
#: seeing X", "should be getting", "should be going to"), nor a guess ("you must be running an old node"), nor a
#: relative clause ("the test you should be looking at"): the subject opens a clause. English grammar.
HABITUAL: Final = re.compile(r"(?:^|[,;:]\s*|\b(?:and|but|so)\s+)(?:we|you)\s+(?:should|ought to|need to|have to)"
                             r"(?:n't|\s+not)?\s+(?:always\s+|never\s+|really\s+|also\s+|all\s+)?be\s+"
                             r"(?!(?:see|gett|hear|receiv|expect|do|work|hav|kidd|jok)ing\b|going to\b)[a-z]{2,}ing\b")
#: The speaker's past of politeness speaks of now: "I wanted to remind you to ..." is no story.
POLITE_PAST: Final = re.compile(r"\bi (?:just )?wanted to (?=remind|ask|say|mention|tell|let you know)")


def multiword(phrases: tuple[str, ...]) -> tuple[str, ...]:
    """The phrases of more than one word."""
    return tuple(p for p in phrases if " " in p)


def alternation(phrases: tuple[str, ...]) -> str:
    """A regex alternation of ``phrases``, longest first (so "in this repo" wins over "in")."""
    return "|".join(re.escape(p) for p in sorted(set(phrases), key=len, reverse=True))


def clause_at(norm: str, cue: str) -> str:
    """The clause of ``norm`` around the first occurrence of ``cue`` (commas, dashes, parentheses cut)."""
    at = norm.find(cue)
    if at < 0:
        return norm
    bounds = [0, *(m.end() for m in _CLAUSE.finditer(norm) if m.end() <= at)]
    ends = [m.start() for m in _CLAUSE.finditer(norm) if m.start() >= at + len(cue)]
    return norm[max(bounds):(ends[0] if ends else len(norm))]


def deixis_count(cues: LanguageCues, clause: str) -> int:
    """Deictic words that point into the conversation (a demonstrative before a project noun does not)."""
    hits = find(cues.deixis, clause)
    if cues.project_nouns:
        nouns = alternation(cues.project_nouns)
        hits = [h for h in hits if not re.search(rf"\b{re.escape(h)} (?:{nouns})\b", clause)]
    return len(hits)


def directed_universal(cues: LanguageCues, norm: str) -> bool:
    """A universal adverb that directs ("always run", "we never commit", "to always check"), not one that
    describes ("is never called", "are always empty", "never worked")."""
    if not cues.universal:
        return False
    aux = set(cues.auxiliaries)
    tokens = norm.split()
    for m in re.finditer(rf"(?<![\w'])(?:{alternation(cues.universal)})(?![\w'])", norm):
        before = norm[:m.start()].split()[-2:]
        after = [w for w in norm[m.end():].split()[:3] if not w.endswith("ly")][:1]
        if any(w.strip(",.;:!") in aux for w in before):
            continue
        if cues.code == "en" and after and re.fullmatch(r"\w+(?:ed|en)[,.;:!]*", after[0]):
            continue  # "never called", "always written": a participle describes
        return bool(tokens)
    return False


def names_alternative(cues: LanguageCues, norm: str) -> bool:
    """True when the sentence names the alternative: "instead of Y", "rather than Y", "X, not Y"."""
    words_ = tuple(c for c in cues.contrast if " " in c or c in ("instead", "statt", "misto", "zamiast"))
    return bool(find(words_, norm) or re.search(r", (?:not|never|nicht|pas|ne|no|nie) \W?\w", norm))


_TYPED: dict[str, dict[str, str]] = {}


def _swaps(word: str) -> set[str]:
    """``word`` with two neighbouring letters swapped, every way ("should" -> "shoudl", "sohuld", ...)."""
    return {word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(len(word) - 1) if word[i] != word[i + 1]}


def _slips(cues: LanguageCues) -> dict[str, str]:
    """The mood words of a language (a prohibition, a modal, a universal: one word of four letters or more)
    as fast typing swaps two of their letters ("shoudl", "alwyas"), each mapped to the word."""
    table = _TYPED.get(cues.code)
    if table is None:
        mood = {w for w in (*cues.prohibition, *cues.obligation, *cues.universal) if " " not in w and len(w) >= 4}
        table = {slip: w for w in mood for slip in _swaps(w) if slip not in mood}
        _TYPED[cues.code] = table
    return table


def untyped(norm: str, cues: LanguageCues) -> str:
    """``norm`` with the mood words fast typing misspelled put right ("we shoudl" -> "we should"). Only
    neighbouring letters swapped: such a slip of these words is no other word."""
    table = _slips(cues)
    return re.sub(r"[a-z']{4,}", lambda m: table.get(m.group(0), m.group(0)), norm)


def reminder_in(cues: LanguageCues, text: str) -> re.Match[str] | None:
    """Where ``text`` reminds the agent of something ("I wanted to remind you to ..."), if it does."""
    found = matches(cues.reminders, text)  # the cues' compiled alternation, built once per cue tuple
    return found[0] if found else None


def preamble(sentence: str, cues: LanguageCues) -> int:
    """How much of a sentence a "but" sets aside before its reminder ("Sorry for interrupting, but I wanted to
    remind you to X": the apology), in characters; 0 when none."""
    at = reminder_in(cues, sentence.lower())
    if at is None:
        return 0
    # Only what a "but" sets aside ("Sorry for interrupting, but ..."): a scope before the reminder ("For the
    # payments service, I wanted to remind you ...") is the rule's own (fresh-eyes review).
    # After a clause's end only: "Everyone but the on-call engineer, ..." is an exception, not an aside.
    cuts = [m.end() for m in re.finditer(r"(?:[,;:]|\s--?|\s[—–])\s*(?:but|mais|aber)\s+", sentence[:at.start()], re.I)]
    return cuts[-1] if cuts else 0


def hedged(cues: LanguageCues, before: str, sentence: str) -> bool:
    """True when what comes before a reminder makes it no instruction: a question ("can you add a reminder
    to ...?"), a reason or a condition ("because the bot will remind you to ...")."""
    return sentence.rstrip().endswith("?") or bool(
        starts_with(cues.question, before) or starts_with(cues.reason, before) or starts_with(cues.conditional, before))


def past_universal(opener: str, cues: LanguageCues) -> str:
    """The opener past a universal adverb that leads it ("from now on use X" -> "use X")."""
    lead = starts_with(cues.universal, opener)
    return opener[len(lead):].lstrip(" ,") if lead else opener


def unphrased(text: str, phrases: tuple[str, ...]) -> str:
    """``text`` with the multi-word ``phrases`` blanked ("from now on": its "now" points nowhere)."""
    return blank(multiword(phrases), text)


#: Markers that are also negations: "no, don't ..." is a marker, "não apague" (don't delete) is not.
_NEGATING: Final = frozenset({"no", "nope", "non", "nein", "nee", "nao", "ne", "nie"})


def without_interjections(opener: str, cues: LanguageCues) -> tuple[str, bool]:
    """The sentence's opening past its discourse markers ("oh, yeah, please don't ..." -> "please don't ..."),
    and whether one of them answered the agent ("yes", "no", "ok": what follows reacts to one proposal).
    A marker is not the mood, and the mood is read from how the sentence opens. A marker that begins a cue
    of its own ("no more ...", "so that ...") stays, and a negating one is passed only before punctuation or
    another marker."""
    replied = False
    for _ in range(3):
        if starts_with(cues.prohibition, opener) or starts_with(cues.reason, opener):
            break
        marker = starts_with(cues.interjections, opener)
        rest = opener[len(marker):] if marker else ""
        if not marker or rest[:1] not in (" ", ",", "!", ".", ":") or not rest.strip(" ,!.:-"):
            break
        if marker in _NEGATING and rest[:1] == " " and not starts_with(cues.interjections, rest.lstrip()):
            break
        replied = replied or marker in cues.replies
        opener = rest.lstrip(" ,!.:-—–")
    return opener, replied
