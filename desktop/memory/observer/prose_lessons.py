"""Lessons from prose, without a language model (issue 13).

- ``user_rule``: the user's own instruction or correction, in their words, from a
  plain user message (never a tool result, slash-command expansion or hook feedback),
  tied to the files it names; the same words in several sessions reinforce one memory;
- ``stated_cause``: a root cause or decision the agent stated in its visible prose
  ("Root cause: ...", "That's the issue: ...", "Decision: ..."), attached to the project
  files it names (resolved at promotion against the files the session touched).

Command lessons are in ``lessons``. Every handler does bounded work per event.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from desktop.memory.observer.events import Reasoning, UserMessage
from desktop.memory.observer.harness import outside_project
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.signals import STATED_CAUSE, USER_RULE, Signal

MAX_RULES_PER_MESSAGE: Final = 2

# -- user instructions -------------------------------------------------------------------------

# A message that is not something the user typed to instruct: a slash command or its
# expansion, hook feedback, a continuation summary, pasted tool output.
_NOT_TYPED: Final = re.compile(
    r"^(?:<|/\S+|Caveat:|This session is being continued|\[Request interrupted|Stop hook feedback|"
    r"\w+ hook (?:feedback|error)|PreToolUse|PostToolUse|#+ |Execute @?\.?claude/commands|"
    r"execute /\w+|Base directory for this skill)", re.I)
# Discourse fillers before the instruction itself: "Good, but please don't ..." -> "don't ...".
_FILLER: Final = re.compile(
    r"^(?:(?:ok(?:ay)?|good|great|nope|no|yes|yeah|sorry|hmm+|also|and|but|so|then|please|just|again|"
    r"not bad|looks good|this is good|correct|right|agreed|nah|ah|oh)\b[\s,;:.!-]*)+", re.I)
# A standing rule: a prohibition, an always/never, a "must", or a correction of a tool choice.
# Bare imperatives ("use X", "keep Y", "we should Z") are mostly today's plan, so they count
# only with never/always/not/instead.
_RULE_START: Final = re.compile(
    r"^(?:don'?t|do not|never|always|make sure|stop|avoid|"
    r"you (?:must|shouldn'?t|should (?:not|never|always)|are not (?:allowed|supposed)|can'?t|do not|don'?t)|"
    r"we (?:shouldn'?t|should (?:not|never|always)|must|never|always|are using|don'?t (?:use|want|commit|add))|"
    r"we'?re using|(?:use|keep|leave|remember)\b.*\b(?:instead of|rather than|not|never|always)\b|"
    r"(?:[\w`@./-]+ ){1,4}must (?:not |never |always |be |only )?)", re.I)
# "X should glob for the name, not use a fixed one": a correction, wherever it sits.
_RULE_ANYWHERE: Final = re.compile(r"\b(?:you should (?:not|never)|"
                                   r"(?:should|must)\b[^.;]*,\s*not\b|"
                                   r"(?:never|always) (?:use|run|commit|add|load|read|write|put|create))\b", re.I)
# Words that point into the conversation ("it", "here", "again"): the sentence means nothing later.
_DEICTIC: Final = re.compile(r"\b(?:that|this)\W*$|\b(?:here|now|again|above|below|previous(?:ly)?|earlier|last time|"
                             r"this one|that one|already there|like before|as before|"
                             r"the (?:other )?ones? (?:in|from|at)|"
                             r"as you (?:\w+ )?(?:said|suggested|mentioned|noted)|if (?:you|we) must)\b", re.I)
# Template text pasted into a message (``${PRODUCT_NAME}``, ``{{user}}``): a system prompt or a
# document quoted for discussion, not the user's own instruction.
_PASTED_TEMPLATE: Final = re.compile(r"\$\{[A-Za-z_]\w*\}|\{\{\s*\w+\s*\}\}")
# An object pronoun ("show them to me") points back into the conversation; "it"/"they" later
# in a sentence usually mean the sentence's own subject ("Never load `x.md`: it is huge").
_PRONOUN: Final = re.compile(r"\b(?:them|its|those ones)\b", re.I)
# "don't we also need ...": a question, whatever its punctuation.
_INVERTED: Final = re.compile(r"^(?:don'?t|do|does|can'?t|can|could|should(?:n'?t)?|would|is|are|isn'?t|aren'?t) "
                              r"(?:we|you|I|it|they)\b", re.I)
# Session-bound wording: a plan for today, not a standing rule.
_NOT_A_RULE: Final = re.compile(
    r"\b(?:yet|for now|right now|at this time|this time|today|right away|anymore|at the moment|"
    r"this session|last session|next session|in the meantime|for later|this phase|maybe|perhaps|probably|"
    r"there must|must have|must be some|"
    r"not sure|W8|WTF)\b", re.I)
_SENTENCES: Final = re.compile(r"(?<=[.!])\s+|\n+")
_CODEISH: Final = re.compile(r"`([^`\n]{2,80})`|@([\w./-]+)|(?<![\w.])([\w.-]+/[\w./-]+|"
                             r"\.?[\w-]+\.(?:py|ts|js|md|json|toml|ya?ml|sh|sql|cfg|ini|txt|lock))\b")
_PRONOUN_START: Final = re.compile(r"^(?:it|this|that|these|those|they|he|she|which)\b", re.I)


_FILELIKE: Final = re.compile(r"\.?[\w@+-][\w@.+-]*(?:/[\w@.+-]+)*(?:\.[A-Za-z]\w{0,7}|/)")


def _files_in(tokens: list[str]) -> list[str]:
    """The tokens that name a project file or folder (``a/b.py``, ``.github/``), not code or prose."""
    return [t for t in tokens if _FILELIKE.fullmatch(t) and not outside_project(t)]


def _concrete(sentence: str) -> list[str]:
    """Code-ish tokens a sentence names (backticked, @file, paths, file names)."""
    return [next(g for g in m.groups() if g) for m in _CODEISH.finditer(sentence)]


def rule_sentences(text: str) -> list[str]:
    """The sentences of a typed user message that state a standing rule or correction."""
    stripped = text.strip()
    if not stripped or _NOT_TYPED.match(stripped) or len(stripped) > 3000 or _PASTED_TEMPLATE.search(stripped):
        return []
    out: list[str] = []
    for raw in _SENTENCES.split(stripped[:3000]):
        sentence = " ".join(raw.strip(" -*>•").split())
        if not 20 <= len(sentence) <= 320 or sentence.endswith("?") or sentence.startswith(("│", "⎿", "$")):
            continue
        core = _FILLER.sub("", sentence)
        if "?" in sentence or _NOT_A_RULE.search(sentence) or re.match(r"(?:I|I'\w+|or|our)\b", core, re.I):
            continue
        if len(core.split()) < 5 and not _concrete(core):
            continue  # "Remember our process!": a mood, not a rule
        if _DEICTIC.search(core) or _INVERTED.match(core) or (_PRONOUN.search(core) and not _concrete(core)):
            continue
        if not (_RULE_START.match(core) or _RULE_ANYWHERE.search(sentence)):
            continue
        if _PRONOUN_START.match(core) and not _concrete(sentence):
            continue  # "it shouldn't be private": nobody knows what "it" is a week later
        out.append(sentence)
        if len(out) >= MAX_RULES_PER_MESSAGE:
            break
    return out


def on_user(sp: Scratchpad, ev: UserMessage) -> None:
    """Keep the user's instructions and corrections, in their words, tied to the files they name."""
    for sentence in rule_sentences(ev.text):
        named = _files_in(_concrete(sentence))
        key = re.sub(r"[^a-z0-9 ]+", "", sentence.lower())[:120]
        sp.add_signal(Signal(USER_RULE, f"{USER_RULE}:{key}", ev.step, named[:4],
                             {"text": sentence, "events": [ev.event_key]}, [sentence]))


# -- stated causes and decisions --------------------------------------------------------------

_CAUSE: Final = re.compile(
    r"(?:\*\*)?(?P<label>root cause(?: found| identified)?|the root cause (?:is|was)|that'?s the (?:issue|problem|bug)|"
    r"the (?:real |actual )?(?:issue|problem|bug) (?:is|was) that|decision|we decided to|"
    r"the fix (?:is|was) to)(?:\*\*)?\s*[:!—-]?\s+(?P<body>.{20,400}?)(?=(?<!\w\.\w)[.!]\s|\n|$)",
    re.I)


def attach_files(names: list[str], session_files: Iterable[str]) -> list[str]:
    """The project files a session touched (read or edited, any time) that ``names`` refer to.

    ``library.py`` resolves to ``bookminder/library.py``; a folder name matches the files under it.
    Run at session end, so a file opened after the sentence was written counts too.
    """
    touched = [p for p in session_files if not outside_project(p)]
    out: list[str] = []
    for name in names:
        if name in touched or (name.endswith("/") and any(p.startswith(name) for p in touched)):
            hit: str | None = name
        else:
            tail = "/" + name.lstrip("./")
            hit = next((p for p in touched if ("/" + p).endswith(tail)), None)
        if hit is not None and hit not in out:
            out.append(hit)
    return out


def on_agent_text(sp: Scratchpad, ev: Reasoning) -> None:
    """A root cause or decision the agent stated in visible prose (never hidden thinking)."""
    if ev.kind != "text" or len(ev.text) < 30:
        return
    for m in _CAUSE.finditer(ev.text[:6000]):
        body = " ".join(m.group("body").split()).strip(" *")
        named = _concrete(body)
        if not named:
            continue  # "the issue is that it does not work": no file, no value, nothing to act on
        files = _files_in(named)
        if not files:
            continue  # attached to their files (checked against the session's files at promotion)
        label = m.group("label").lower()
        kind = "decision" if label.startswith(("decision", "we decided")) else "cause"
        key = re.sub(r"[^a-z0-9 ]+", "", body.lower())[:120]
        sp.add_signal(Signal(STATED_CAUSE, f"{STATED_CAUSE}:{key}", ev.step, files[:4],
                             {"text": body, "kind": kind, "events": [ev.event_key]}, [body]))
        return
