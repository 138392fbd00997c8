"""What a user's rule was about, read from what the session did right after it.

A rule is often said without its object: "there should be only one way to get the git author",
"it has to be the latest model, 3.1". The agent that heard it then wrote or ran the object:
``GetGitAuthorFromRepo`` in the next edits, ``gemini -m gemini-3.1-pro-preview`` in the next
commands. Blind judges called such rules vague for lack of exactly that name, so a rule that names no
code token of its own gets the one the session gave it, kept beside the user's words.

What counts as the rule's object is grammar, not a list: a name the agent *introduced* after the rule
(in an edit's new text and not its old text, or in a command, each only once it went through) that
spells two adjacent words of the rule in their order (``GetGitAuthorFromRepo`` holds "git author"), or
that carries a version the rule names (``gemini-3.1-pro-preview`` holds "3.1"). It must come back in at
least :data:`MIN_CALLS` calls within :data:`WINDOW_STEPS` steps and be the clear favourite; otherwise
nothing is added (a wrong name would mislead more than a missing one). A rule that forbids or negates
anything is not followed: what the agent writes after "never use 2.5" is not what the rule is about. Nor
is a command that only looks, shows or removes (``grep -rn gemini-2.5``, ``rm``), a whole file written
(nothing tells what it introduced), or a file name; and a command is shown only up to its first word that
expands, substitutes or redirects (``$X``, ``$(…)``, ``<(…)``, ``>``): what is shown is what went through.

Bounded work: the session's last :data:`MAX_OPEN` rules are followed, each counts at most
:data:`MAX_NAMES` names, a call is read to :data:`SCAN_CHARS` characters and gives at most
:data:`MAX_PER_CALL` names, and every pattern is linear in the text.
"""

from __future__ import annotations

import functools
import itertools
import re
import shlex
from typing import Any, Final

from desktop.memory.observer.command_kinds import SHOWS_TEXT
from desktop.memory.observer.cues import LANGUAGES, normalise
from desktop.memory.observer.insistence import VERSION as _VERSION
from desktop.memory.observer.rule_scorer import concrete_tokens
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.triggers.code_shape import written_text
from desktop.memory.triggers.model import replaced_texts

MAX_OPEN: Final = 4
MAX_NAMES: Final = 24
#: Of a rule's words: at most this many pairs and versions are followed.
MAX_PAIRS, MAX_VERSIONS = 24, 4
MAX_PER_CALL: Final = 200
WINDOW_STEPS: Final = 80
MIN_CALLS: Final = 2
SCAN_CHARS: Final = 20_000
#: A shown command: at most this many words of it, up to the name.
SHOWN_WORDS: Final = 8
_STATE: Final = "referents"
_PENDING: Final = "referent_hits"

_WORD: Final = re.compile(r"[a-z0-9]+(?:\.[0-9]+)*")
_IDENT: Final = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{3,60}\b")
#: A name-like token that may carry a version (``gemini-3.1-pro-preview``, ``python:3.12``), whole.
_TOKEN: Final = re.compile(r"(?<![\w.:-])[A-Za-z0-9][\w.:-]{0,59}(?![\w.:-])")
#: An identifier's words: ``GetGitAuthorFromRepo`` -> get git author from repo; ``git_author`` -> git author.
_PART: Final = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
#: Shell operators between simple commands.
_OPERATORS: Final = frozenset({"&&", "||", ";", "|", "&", "|&", ";;", "\n"})
#: Programs whose arguments are what they look for, show or remove, not what was done.
_LOOKERS: Final = SHOWS_TEXT | {"sed", "awk", "head", "tail", "less", "more", "wc", "diff", "jq", "tee", "rm", "mv",
                                "cp", "touch", "mkdir", "chmod", "ln", "kill", "pkill", "pgrep"}
#: Programs that run another: the program they run is the one that counts.
_WRAPPERS: Final = frozenset({"timeout", "sudo", "env", "nice", "time", "nohup", "xargs", "command", "exec"})
#: A word the shell would expand (a variable, a substitution, a glob, a brace, a tilde, a comment): it and what
#: follows it are not shown, since the command shown would not be the one that ran.
_UNSAFE: Final = re.compile(r"[$`<>()*?\[\]{}~#!\n]")
_PLAIN: Final = re.compile(r"[\w.:=@+,/-]+")
#: A file name: a path, or a name with an extension of letters (``gemini-3.1.log``).
_FILE: Final = re.compile(r".*/.*|.*\.[A-Za-z]{1,8}")
#: Words that forbid or negate, in any language the cues know: such a rule is not followed.
_FORBIDDING: Final = frozenset({"not", "no", "never", "avoid", "without", "instead", "stop", "nothing", "none", "pas",
                              *(c for cues in LANGUAGES.values() for c in cues.prohibition if " " not in c)})
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
    return pairs[:MAX_PAIRS], sorted(set(_VERSION.findall(normalise(text))))[:MAX_VERSIONS]


def open_rule(sp: Scratchpad, key: str, text: str, features: tuple[str, ...]) -> None:
    """Follow the session after a rule that names no code token of its own and forbids or negates nothing
    ("the loader should never read env vars": what the agent writes next is not the rule's object)."""
    norm = normalise(text)
    if concrete_tokens(text) or "prohibition" in features or "n't" in norm or _FORBIDDING & set(_WORD.findall(norm)):
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
    return any(_version_at(v).search(token) for v in versions)


@functools.lru_cache(maxsize=256)
def _version_at(version: str) -> re.Pattern[str]:
    """A version as a whole number in a token ("3.1" in "gemini-3.1-pro", not in "13.10"), compiled once."""
    return re.compile(rf"(?<![\d.]){re.escape(version)}(?![\d])")


def _hits(sp: Scratchpad, names: dict[str, str], versioned: dict[str, str]) -> dict[str, list[str]]:
    """For each followed rule still in its window, what of one call's names spell it (``names``:
    identifier -> how to show it) or carry its version (``versioned``)."""
    live = [r for r in sp.ev.get(_STATE, []) if sp.step - r["step"] <= WINDOW_STEPS]
    sp.ev[_STATE] = live
    out: dict[str, list[str]] = {}
    for rule in live:
        hits = {shown for name, shown in names.items() if _spells(name, rule["pairs"])}
        hits |= {shown for token, shown in versioned.items() if _carries(token, rule["versions"])}
        if hits:
            out[rule["key"]] = sorted(hits)[:MAX_NAMES]
    return out


def _count(sp: Scratchpad, hits: dict[str, list[str]]) -> None:
    """Count one call that went through, and keep each rule's clear favourite on its signal."""
    for rule in sp.ev.get(_STATE, []):
        seen: dict[str, int] = rule["seen"]
        for shown in hits.get(rule["key"], []):
            if shown in seen or len(seen) < MAX_NAMES:
                seen[shown] = seen.get(shown, 0) + 1
        sig = sp.signals.get(rule["key"])
        if sig is None or rule["key"] not in hits:
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


def _first(found: list[str], drop: set[str]) -> list[str]:
    """The distinct items of ``found`` not in ``drop``, in order, at most :data:`MAX_PER_CALL`."""
    return [t for t in dict.fromkeys(found) if t not in drop][:MAX_PER_CALL]


def on_edit_call(sp: Scratchpad, args: dict[str, Any], pend: dict[str, Any]) -> None:
    """An edit or a write asked for: what its new text introduces (absent from the text it replaces),
    counted once it went through (``on_result``): a declined edit is the agent's guess, not the object."""
    if not sp.ev.get(_STATE):  # no rule followed: nothing to read (most edits)
        return
    old = " ".join(replaced_texts(args))[:SCAN_CHARS]
    if not old:  # a whole file written: nothing tells what it introduced
        return
    new = written_text(args)[:SCAN_CHARS]
    names = {n: f"wrote `{n}`" for n in _first(_IDENT.findall(new), set(_IDENT.findall(old)))}
    versioned = {t: f"wrote `{t}`" for t in _first([t for t in _TOKEN.findall(new)
                                                    if _VERSION.search(t) and not _FILE.fullmatch(t)],
                                                   set(_TOKEN.findall(old)))}
    hits = _hits(sp, names, versioned)
    if hits:
        pend[_PENDING] = hits


def _commands(command: str) -> list[list[str]]:
    """The simple commands of a command line, each as the shell reads its words. A line break outside quotes
    ends a command; a heredoc ends the reading (its body is no command); past a quote left open (a prompt cut
    at the recorded length), only the words before it."""
    lex = shlex.shlex(command[:SCAN_CHARS], posix=True, punctuation_chars="();<>|&\n")
    lex.whitespace = " \t\r"
    lex.whitespace_split = True
    out: list[list[str]] = [[]]
    try:
        for token in itertools.islice(lex, MAX_PER_CALL):
            if token.startswith("<<"):
                break
            if token in _OPERATORS:
                out.append([])
            else:  # a redirection or a subshell stays a word: nothing past it is shown (``_UNSAFE``)
                out[-1].append(token)
    except ValueError:
        pass
    return [words for words in out if words]


def _program(words: list[str]) -> list[str]:
    """The words from the program a command runs: past assignments and a wrapper without options ("timeout 30
    gemini ...", "env X=1 gemini ..."); none when a wrapper has options (which word is the program is unclear)."""
    while words and ("=" in words[0] or words[0] in _WRAPPERS):
        wrapper = words[0] in _WRAPPERS
        words = words[1:]
        if wrapper and words and words[0].startswith("-"):
            return []
        while wrapper and words and words[0].isdigit():
            words = words[1:]
    return words


def on_command_call(sp: Scratchpad, command: str, pend: dict[str, Any]) -> None:
    """A command asked for: its names, each shown with the words of its command up to it, counted once it
    succeeded (``on_result``). A command that only looks or shows (``grep``, ``cat``) names nothing."""
    if not sp.ev.get(_STATE):
        return
    names: dict[str, str] = {}
    versioned: dict[str, str] = {}
    for command_words in _commands(command):
        words = _program(command_words)
        if not words or words[0].rsplit("/", 1)[-1] in _LOOKERS or not _PLAIN.fullmatch(words[0]):
            continue
        for i, word in enumerate(words[1:], 1):
            if _UNSAFE.search(word):
                break
            upto = [shlex.quote(w) for w in words[:i + 1]]
            shown = " ".join(upto if len(upto) <= SHOWN_WORDS else [upto[0], "…", *upto[-3:]])
            if _IDENT.fullmatch(word):
                names.setdefault(word, f"ran `{shown}`")
            if len(word) <= 60 and _PLAIN.fullmatch(word) and _VERSION.search(word) and not _FILE.fullmatch(word):
                versioned.setdefault(word, f"ran `{shown}`")
    hits = _hits(sp, names, versioned)
    if hits:
        pend[_PENDING] = hits


def on_result(sp: Scratchpad, pend: dict[str, Any]) -> None:
    """The call went through (no error, not declined): count what it named."""
    hits = pend.get(_PENDING)
    if hits:
        _count(sp, hits)
