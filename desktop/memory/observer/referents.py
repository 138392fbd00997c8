"""What a user's rule was about, read from what the session did right after it.

A rule is often said without its object: "there should be only one way to get the git author",
"it has to be the latest model, 3.1". The agent that heard it then wrote or ran the object:
``GetGitAuthorFromRepo`` in the next edits, ``gemini -m gemini-3.1-pro-preview`` in the next
commands. Blind judges called such rules vague for lack of exactly that name, so a rule that names no
code token of its own gets the one the session gave it, kept beside the user's words.

What counts as the rule's object is grammar, not a list: a name the agent *introduced* after the rule
(in an edit's new text and not its old text, in a new file, or in a command that succeeded) that spells
two adjacent words of the rule in their order (``GetGitAuthorFromRepo`` holds "git author"), or that
carries a version the rule names (``gemini-3.1-pro-preview`` holds "3.1"). It must come back in at least
:data:`MIN_CALLS` calls within :data:`WINDOW_STEPS` steps and be the clear favourite; otherwise nothing
is added (a wrong name would mislead more than a missing one).

Bounded work: the session's last :data:`MAX_OPEN` rules are followed, each counts at most
:data:`MAX_NAMES` names, and a call is read to :data:`SCAN_CHARS` characters.
"""

from __future__ import annotations

import itertools
import re
from typing import Any, Final

from desktop.memory.observer.cues import LANGUAGES, normalise
from desktop.memory.observer.rule_scorer import concrete_tokens
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.triggers.code_shape import written_text
from desktop.memory.triggers.model import replaced_texts

MAX_OPEN: Final = 4
MAX_NAMES: Final = 24
WINDOW_STEPS: Final = 80
MIN_CALLS: Final = 2
SCAN_CHARS: Final = 20_000
_STATE: Final = "referents"

_WORD: Final = re.compile(r"[a-z0-9]+(?:\.[0-9]+)*")
_VERSION: Final = re.compile(r"\d+(?:\.\d+)+")
_IDENT: Final = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{3,60}\b")
#: An identifier's words: ``GetGitAuthorFromRepo`` -> get git author from repo; ``git_author`` -> git author.
_PART: Final = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_SEGMENT: Final = re.compile(r"&&|\|\||[;|\n]")
#: Words that tie nothing to a subject, in any language the cues know.
_FUNCTION: Final = frozenset(w for cues in LANGUAGES.values() for w in cues.function_words)


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _subject(text: str) -> tuple[list[list[str]], list[str]]:
    """The rule's adjacent word pairs (neither a function word, both of three letters or more) and its
    versions."""
    found = _WORD.findall(normalise(text))
    pairs = [[_stem(a), _stem(b)] for a, b in itertools.pairwise(found)
             if len(a) >= 3 and len(b) >= 3 and a not in _FUNCTION and b not in _FUNCTION
             and not a.isdigit() and not b.isdigit() and not _VERSION.fullmatch(a) and not _VERSION.fullmatch(b)]
    return pairs, sorted(set(_VERSION.findall(normalise(text))))


def open_rule(sp: Scratchpad, key: str, text: str) -> None:
    """Follow the session after a rule that names no code token of its own, to find its object."""
    if concrete_tokens(text):
        return
    pairs, versions = _subject(text)
    if not pairs and not versions:
        return
    followed = [r for r in sp.ev.get(_STATE, []) if r["key"] != key]
    followed.append({"key": key, "step": sp.step, "pairs": pairs, "versions": versions, "seen": {}})
    sp.ev[_STATE] = followed[-MAX_OPEN:]


def _spells(name: str, pairs: list[list[str]]) -> bool:
    parts = [_stem(p.lower()) for p in _PART.findall(name)]
    return any(parts[i:i + 2] == pair for pair in pairs for i in range(len(parts) - 1))


def _carries(token: str, versions: list[str]) -> bool:
    return any(re.search(rf"(?<![\d.]){re.escape(v)}(?![\d])", token) for v in versions)


def _count(sp: Scratchpad, names: dict[str, str], versioned: dict[str, str]) -> None:
    """Count, for each followed rule, the names of one call that spell it (``names``: identifier ->
    how to show it) or carry its version (``versioned``)."""
    live = [r for r in sp.ev.get(_STATE, []) if sp.step - r["step"] <= WINDOW_STEPS]
    sp.ev[_STATE] = live
    for rule in live:
        hits = {shown for name, shown in names.items() if _spells(name, rule["pairs"])}
        hits |= {shown for token, shown in versioned.items() if _carries(token, rule["versions"])}
        seen: dict[str, int] = rule["seen"]
        for shown in hits:
            if shown in seen or len(seen) < MAX_NAMES:
                seen[shown] = seen.get(shown, 0) + 1
        sig = sp.signals.get(rule["key"])
        if sig is None:
            continue
        best = _favourite(seen)
        if best is None:
            sig.data.pop("referent", None)
        else:
            sig.data["referent"] = best


def _favourite(seen: dict[str, int]) -> str | None:
    """The name seen in the most calls, when in :data:`MIN_CALLS` or more and ahead of every other."""
    ranked = sorted(seen.items(), key=lambda kv: -kv[1])
    if not ranked or ranked[0][1] < MIN_CALLS or (len(ranked) > 1 and ranked[1][1] == ranked[0][1]):
        return None
    return ranked[0][0]


def on_written(sp: Scratchpad, args: dict[str, Any]) -> None:
    """An edit or a write: the names its new text introduces (absent from the text it replaces)."""
    if not sp.ev.get(_STATE):
        return
    new = written_text(args)[:SCAN_CHARS]
    old = set(_IDENT.findall(" ".join(replaced_texts(args))[:SCAN_CHARS]))
    names = {n: f"wrote `{n}`" for n in set(_IDENT.findall(new)) - old}
    versioned = {t: f"wrote `{t}`" for t in set(re.findall(r"[\w.-]*\d+\.\d+[\w.-]*", new))}
    _count(sp, names, versioned)


def on_ran(sp: Scratchpad, command: str) -> None:
    """A command that succeeded: its words, and a versioned value shown with its program and flag."""
    if not sp.ev.get(_STATE):
        return
    names: dict[str, str] = {}
    versioned: dict[str, str] = {}
    for segment in _SEGMENT.split(command[:SCAN_CHARS]):
        tokens = [t.strip("\"'") for t in segment.split()]
        if not tokens:
            continue
        for i, token in enumerate(tokens):
            if _IDENT.fullmatch(token):
                names[token] = f"ran `{token}`"
            if _VERSION.search(token) and i:
                flag = tokens[i - 1] if i > 1 and tokens[i - 1].startswith("-") else ""
                versioned[token] = "ran `" + " ".join(t for t in (tokens[0], flag, token) if t) + "`"
    _count(sp, names, versioned)
