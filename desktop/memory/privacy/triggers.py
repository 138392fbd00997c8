"""Cheap necessary conditions of the secret detectors, so most text skips them all.

Every detector of :mod:`secrets` (and of :mod:`prose` and :mod:`entropy`) can only
report a finding when something short it needs occurs in the text: a provider's
literal prefix (``AKIA``, ``ghp_``, ``-----BEGIN``), a secret-naming keyword followed by
an operator (``token =``, ``password:``), or a run of 32 token characters. Testing those
with ``str`` searches costs a few passes over the text at C speed; running the 20-odd
detector regexes costs ~40x more, and almost nothing written to a memory database (code,
paths, node ids, JSON of symbols) needs them. Measured on a cold index of the standard
library (906k bound values, 42 MB): the old single-regex gate let 13 % of values through
to the full scan, this one ~1 %.

The conditions are stated for ASCII text (a non-ASCII text, where lower-casing and
case-insensitive matching are not one character for one, takes the old path in
:mod:`secrets`). Every condition here is *monotone*: when a text passes, any text that
contains it passes too (substring tests and regex searches without look-around). The
write boundary relies on that to test many values joined by NUL in one go and look
closer only at the groups that pass (:mod:`boundary`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from desktop.memory.text.lazy_re import lazy

__all__ = ["ASSIGN_GATE", "PROSE_GATE", "Trigger", "ascii_gate", "cased", "folded", "folded_confirmed", "gate_spans",
           "has_token_run", "non_ascii_gate", "register", "token_runs"]

# Where a ``key = value`` assignment (secrets._ASSIGN) can match: its keyword ends right
# before an optional quote, blanks and an operator, which always starts with ':' or '='.
ASSIGN_GATE = lazy(r"(?:key|pass(?:word|wd)?|pwd|secret|token|credentials?)[\"']?[ \t]*[:=]")
# Where a secret in prose (prose._PROSE) can match: its keyword is followed by a blank or ':'.
PROSE_GATE = lazy(
    r"(?:pass(?:word|phrase|wd| ?code)|pwd|pin code|secret|token|(?:api|access|private)[ _-]?key"
    r"|credentials?)[ \t:]")
# Both gates, as alternations that each start with one literal character (``api key`` is
# looked for at its ``key``: looser, still necessary), searched in the lower-cased text.
_OP = r"(?:[\"']?[ \t]*[:=]|[ \t])"
# Each with the literals one of its matches must contain (a str search first: far cheaper
# than the regex over text that has none).
_KEYWORDS = [(lits, lazy(rx)) for lits, rx in (
    (("key",), "key" + _OP), (("secret",), "secret" + _OP), (("token",), "token" + _OP),
    (("credential",), "credentials?" + _OP),
    (("pwd", "pin code", "pass"),
     r"pwd" + _OP + r"|pin code[ \t:]|pass(?:word|wd)?[\"']?[ \t]*[:=]|pass(?:word|phrase|wd| ?code)[ \t:]"),
)]

# A random token (entropy._TOKEN) is a run of at least 32 of these characters, with an
# upper-case letter, a lower-case letter and a digit in it (entropy.looks_random).
_DIGIT = lazy(r"[0-9]")
_TOKEN_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
TOKEN_RUN = 32
_RUN_TABLE = bytes(ord("a") if c in _TOKEN_CHARS else ord(" ") for c in range(256))
_RUN = b"a" * TOKEN_RUN


def token_runs(text: str) -> bytes:
    """``text`` (ASCII) with token characters as ``a`` and every other character as a blank."""
    return text.encode("ascii", "replace").translate(_RUN_TABLE)


def _mixed_runs(text: str) -> Iterator[tuple[int, int]]:
    """Runs of 32+ token characters of ``text`` (ASCII) mixing upper case, lower case and digits."""
    if len(text) < TOKEN_RUN:
        return
    runs = token_runs(text)
    at = runs.find(_RUN)
    while at >= 0:
        end = runs.find(b" ", at)
        end = len(runs) if end < 0 else end
        run = text[at:end]
        if run.lower() != run and run.upper() != run and _DIGIT.search(run) is not None:
            yield at, end
        at = runs.find(_RUN, end)


def has_token_run(text: str) -> bool:
    """True when ``text`` (ASCII) holds a token the entropy check could report (32+ characters, mixed)."""
    return next(_mixed_runs(text), None) is not None


@dataclass(frozen=True, slots=True)
class Trigger:
    """A detector's necessary condition: one of ``literals`` occurs (and ``confirm`` then finds a match).

    ``folded``: the literals are searched in the lower-cased text (for case-insensitive rules).
    ``confirm`` must contain one of the literals (its matches are where the trigger fires).
    """

    literals: tuple[str, ...]
    folded: bool = False
    confirm: re.Pattern[str] | None = None

    def __call__(self, text: str, lowered: str) -> bool:
        """Whether the detector may match ``text`` (ASCII; ``lowered`` is ``text.lower()``)."""
        hay = lowered if self.folded else text
        for lit in self.literals:
            if lit in hay:
                return self.confirm is None or self.confirm.search(hay) is not None
        return False


def cased(*literals: str, confirm: str | None = None) -> Trigger:
    """A trigger on literals of a case-sensitive rule (searched in the text as written)."""
    return register(Trigger(literals, False, lazy(confirm) if confirm else None))


def folded(*literals: str) -> Trigger:
    """A trigger on lower-case literals of a case-insensitive rule."""
    return register(Trigger(literals, True))


def folded_confirmed(literals: tuple[str, ...], confirm: str) -> Trigger:
    """A trigger on lower-case literals whose matches ``confirm`` (on the lower-cased text) must find."""
    return register(Trigger(literals, True, lazy(confirm)))


_ALL: list[Trigger] = []
_Group = tuple[tuple[str, ...], re.Pattern[str]]  # (literals a match contains, the pattern)
_union: tuple[int, list[_Group], list[_Group], list[Trigger]] = (-1, [], [], [])
#: Every literal of the confirmed triggers, on the text and on the lower-cased text: one search
#: each tells whether any of them can fire (most stored values hold none).
_confirmed_any: list[re.Pattern[str] | None] = [None, None]


def register(trigger: Trigger) -> Trigger:
    """Add a detector's trigger to the union :func:`gate_spans` tests; returns it."""
    _ALL.append(trigger)
    return trigger


def _grouped(literals: set[str]) -> list[_Group]:
    """One alternation per first character (the re engine then scans for a literal prefix, at C speed).

    A literal that contains another one adds nothing to the union and is dropped.
    """
    kept = sorted(lit for lit in literals if not any(o != lit and o in lit for o in literals))
    groups: dict[str, list[str]] = {}
    for lit in kept:
        groups.setdefault(lit[0], []).append(re.escape(lit))
    return [(tuple(re.sub(r"\\(.)", r"\1", lit) for lit in g), re.compile("|".join(g))) for g in groups.values()]


def _the_union() -> tuple[list[_Group], list[_Group], list[Trigger]]:
    """(regexes on the text, regexes on the lower-cased text, triggers with a confirming regex)."""
    global _union
    if _union[0] != len(_ALL):
        plain = {lit for t in _ALL if t.confirm is None and not t.folded for lit in t.literals}
        lower = {lit for t in _ALL if t.confirm is None and t.folded for lit in t.literals}
        confirmed = [t for t in _ALL if t.confirm is not None]
        _union = (len(_ALL), _grouped(plain), _grouped(lower) + list(_KEYWORDS), confirmed)
        for i, folded in enumerate((False, True)):
            lits = sorted({re.escape(lit) for t in confirmed if t.folded == folded for lit in t.literals})
            _confirmed_any[i] = re.compile("|".join(lits)) if lits else None
    return _union[1], _union[2], _union[3]


def gate_spans(text: str, lowered: str) -> Iterator[tuple[int, int]]:
    """Spans of ``text`` (ASCII) where some detector's trigger fires; none means no detector can match.

    A text holding no span cannot hold a secret. Spans may overlap and come in no order.
    """
    on_text, on_lowered, confirmed = _the_union()
    for hay, groups in ((text, on_text), (lowered, on_lowered)):
        for literals, rx in groups:
            # Cheaper than the regex only for one or two literals (one str search each).
            if len(literals) > 2 or any(lit in hay for lit in literals):
                for m in rx.finditer(hay):
                    yield m.span()
    on_cased, on_folded = _confirmed_any
    if (on_cased is not None and on_cased.search(text)) or (on_folded is not None and on_folded.search(lowered)):
        for trigger in confirmed:
            hay = lowered if trigger.folded else text
            if trigger.confirm is not None and any(lit in hay for lit in trigger.literals):
                for m in trigger.confirm.finditer(hay):
                    yield m.span()
    yield from _mixed_runs(text)


# The gate of a non-ASCII text (where lower-casing can change offsets and case-insensitive
# rules match a few non-ASCII letters): every rule needs one of these, a literal prefix of
# a known format, a secret-naming keyword, a URL scheme, a DER header or a long token.
# tests/security/test_detectors.py checks every corpus secret passes it.
_QUICK = lazy(
    r"pass|pwd|pin code|secret|token|credential|key|auth|bearer|-----begin|sk-|gh[pousr]_|github_pat_|glpat-"
    r"|a(?:kia|sia|bia|cca|3t)|aiza|xox|xapp-|hooks\.slack|_live_|_test_|npm_|sk[0-9a-f]|sg\.|eyj|://|mii"
    r"|private>|mysql|mariadb|redis-cli|curl|log ?-?in|logon|salt|seed|pepper"
)  # searched in the lower-cased text (a case-insensitive alternation is ~5x slower)
_QUICK_TOKEN = lazy(r"[A-Za-z0-9+/_\-]{32}")


def non_ascii_gate(text: str) -> bool:
    """False when no detector can match ``text`` (any text; the coarse gate non-ASCII text needs)."""
    return _QUICK.search(text.lower()) is not None or _QUICK_TOKEN.search(text) is not None


def ascii_gate(text: str, lowered: str) -> bool:
    """False when no detector can match ``text`` (ASCII; ``lowered`` is ``text.lower()``)."""
    return next(gate_spans(text, lowered), None) is not None
