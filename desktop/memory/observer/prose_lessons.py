"""Lessons from prose, without a language model (issue 13).

- ``user_rule``: the user's own standing rule or correction, in their words, with its
  reason, from any user utterance (a prompt, a message queued while the agent worked, a
  memory note, a correction typed when declining a tool call; never a slash-command
  expansion, hook feedback or pasted text: see ``utterances``), chosen by the explainable
  scorer of ``rule_scorer``; the same rule in several sessions reinforces one memory, and a
  weaker rule the user insists on later in the session ("I said 3.1 pro!") stands at once;
- ``project_fact`` (from the user): what the user states about the project's hosts,
  services, repository, shell, tools and versions (facts from command outcomes are in
  ``project_facts``);
- ``stated_cause``: a root cause or decision the agent stated in its visible prose
  ("Root cause: ...", "That's the issue: ...", "Decision: ..."), attached to the project
  files it names (resolved at promotion against the files the session touched).

Command lessons are in ``lessons``. Every handler does bounded work per event.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from desktop.memory.observer import insistence, referents
from desktop.memory.observer.cues import words
from desktop.memory.observer.events import Reasoning, UserMessage
from desktop.memory.observer.harness import outside_project
from desktop.memory.observer.rule_scorer import RULE, RULE_THRESHOLD, kept
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.signals import PROJECT_FACT, STATED_CAUSE, USER_RULE, Signal
from desktop.memory.observer.taint import tainted_record
from desktop.memory.observer.utterances import CORRECTION, user_utterance
from desktop.memory.privacy.boundary import redacted_key

# -- user instructions and facts ----------------------------------------------------------------

#: Sessions that never carry the user's words: a sub-agent's "prompt" is its parent's brief,
#: a compaction's is the harness's summary request.
NOT_THE_USER: Final = frozenset({"subagent", "compaction"})
_CODEISH: Final = re.compile(r"`([^`\n]{2,80})`|@([\w./-]+)|(?<![\w.])([\w.-]+/[\w./-]+|"
                             r"\.?[\w-]+\.(?:py|ts|js|go|rs|md|json|toml|ya?ml|sh|sql|cfg|ini|txt|lock|lua))\b")
_FILELIKE: Final = re.compile(r"\.?[\w@+-][\w@.+-]*(?:/[\w@.+-]+)*(?:\.[A-Za-z]\w{0,7}|/)")


def _files_in(tokens: list[str]) -> list[str]:
    """The tokens that name a project file or folder (``a/b.py``, ``.github/``), not code or prose."""
    return [t for t in tokens if _FILELIKE.fullmatch(t) and not outside_project(t)]


def _concrete(sentence: str) -> list[str]:
    """Code-ish tokens a sentence names (backticked, @file, paths, file names)."""
    return [next(g for g in m.groups() if g) for m in _CODEISH.finditer(sentence)]


def rule_key(text: str) -> str:
    """The same rule in other words of the same content: its content words, sorted (order,
    punctuation and case do not matter), so a rule said again in another session counts there."""
    content = sorted({w for w in words(redacted_key(text, len(text) + 64)) if len(w) > 2})  # redact first
    return " ".join(content)[:160]


def on_user(sp: Scratchpad, ev: UserMessage) -> None:
    """Keep the user's standing rules and project facts, in their words, tied to the files they name."""
    if sp.session_type in NOT_THE_USER or sp.parent_session_id:
        return
    said = user_utterance(ev.text, ev.origin)
    if said is None:
        return
    before = insistence.remembered(sp)
    for verdict in kept(said):
        named = _files_in(_concrete(verdict.text))
        kind = USER_RULE if verdict.kind == RULE else PROJECT_FACT
        data: dict[str, object] = {"text": verdict.text, "events": [ev.event_key], "score": verdict.score,
                                   "why": list(verdict.features), "origin": said.origin,
                                   "language": said.language}
        key = f"{kind}:{rule_key(verdict.text)}"
        if kind == USER_RULE and (verdict.score < RULE_THRESHOLD or said.origin == CORRECTION) \
                and not insistence.was_insisted(sp, key):
            # A weaker rule stands only when another session says it again; so does what the user
            # typed when declining one call ("don't run CI, too slow"): it is about that call until
            # said again (blind judges, two rounds: a one-off veto filed as the project's rule).
            data["min_sessions"] = 2
        if kind == PROJECT_FACT:
            data["source"] = "user"
        sp.add_signal(Signal(kind, key, ev.step, named[:4], data, [verdict.text]))
        if kind == USER_RULE:
            referents.open_rule(sp, key, verdict.text, verdict.features)  # "one way to get the git author": which?
        if data.get("min_sessions") and said.origin != CORRECTION:
            # A veto typed when declining one call stays about that call, insisted on or not.
            insistence.remember(sp, key, verdict.text, said.language)
    insistence.promote(sp, said.text, said.language, before)


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
        key = re.sub(r"[^a-z0-9 ]+", "", redacted_key(body, 4000))[:120]
        sig = Signal(STATED_CAUSE, f"{STATED_CAUSE}:{key}", ev.step, files[:4],
                     {"text": body, "kind": kind, "events": [ev.event_key]}, [body])
        # Words the agent copied from a file or a command's output carry its taint (taint.py).
        sig.tainted = tainted_record(body, sp.output_shingles, sp.saw_instruction)
        sp.add_signal(sig)
        return
