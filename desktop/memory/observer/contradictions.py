"""Lessons a later session proved wrong: "this command fails" when it then worked (issue 25/26).

A checker's lesson that says "annotate `//nolint:errcheck,gosec`" is wrong when the checker later
reports part of that annotation as unused (golangci-lint's nolintlint, ruff's RUF100, eslint's
unused disable directive): the project's configuration already exempts what the extra name was
for, and an agent following the lesson fails lint. That report retires it the same way.

A lesson that says a command of some shape fails here (a flag git does not take, a tool not on
the PATH) or is refused (a hook's rule) stays true only until that shape runs fine. Agents' tools
get installed, hooks get relaxed, a one-off install problem goes away; a warning about a command
that now works costs the agent's trust in every other warning. So each finished session's
successful commands are matched against those lessons' triggers, and a lesson one of them
contradicts is retired (audited, with the command that worked), unless a person confirmed or
pinned it, in which case it is marked for their review instead. A tool that refused an argument's
value (``observer/tool_arguments``) and later took it is the same: the value was not the cause.

A lesson that recommends running a command (a stronger check, a recipe) meets the user's verdict when
the user declines to let that command run: users decline a slow integration run they prefer to start
themselves, and a lesson that goes on telling agents to run it sets the agent against them. The lesson
is not proven wrong (the check may well catch what it says), so it is not retired: it waits for the
user's review, with their words, and is not said until they keep it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from desktop.memory.observer.checker_output import annotation
from desktop.memory.observer.review_commands import review_kind, review_recipe
from desktop.memory.observer.shell_parse import parse_line
from desktop.memory.observer.signals import CHECK_GAP, CHECK_RULE, COMMAND_FIX, HOOK_BLOCK, RECIPE, TOOL_ARGS
from desktop.memory.observer.tool_names import OTHER
from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.store.writer import Tx
from desktop.memory.triggers.index import candidates
from desktop.memory.triggers.model import COMMAND, TOOL, CallShape, matches, shape_of

log = logging.getLogger("engram.observer")

#: Lessons whose claim is "a call of this shape fails / is refused".
FAILS_SIGNALS: Final = frozenset({COMMAND_FIX, HOOK_BLOCK})
#: Lessons whose advice is "run this command".
RECOMMENDS: Final = (CHECK_GAP, RECIPE)
#: The history entry's code for a lesson sent to review because the user declined what it recommends.
DECLINED_CODE: Final = "declined_advice"
MAX_SUCCEEDED: Final = 400


#: A checker saying a suppression names a rule it did not need: (the rule, as the checker names it).
_UNUSED: Final = (re.compile(r"directive `//nolint:[^`]*` is unused for linter \"?([\w-]+)\"?"),  # nolintlint
                  re.compile(r"Unused `noqa` directive \(unused: `([\w-]+)`"),  # ruff RUF100
                  re.compile(r"Unused eslint-disable directive \(no problems were reported from '([\w/@-]+)'"))
MAX_UNUSED: Final = 40
#: The names in an annotation (``//nolint:errcheck,gosec //`` -> nolint, errcheck, gosec).
_NAMES: Final = re.compile(r"[\w/@-]+")


@dataclass(frozen=True)
class Contradiction:
    """A lesson and the command of this session that ran fine although the lesson says it fails
    (or, with ``reason``, what else of this session proved it wrong)."""

    memory_id: int
    command: str
    person_kept: bool
    reason: str = ""
    review_only: bool = False
    """The user's verdict, not proof: the lesson waits for their review instead of being retired."""
    words: str = ""
    """What the user typed when declining (redacted), for the history the app words."""


def unused_suppressions(output: str) -> list[str]:
    """The rules a checker's output reports a suppression annotation did not need."""
    if "nused" not in output:
        return []  # almost every output: no pattern run
    found: dict[str, None] = {}
    for rx in _UNUSED:
        for m in rx.finditer(output[-20_000:]):
            found[m.group(1)] = None
    return list(found)[:MAX_UNUSED]


def annotation_contradicted(conn: Any, session_id: str, unused: list[str]) -> list[Contradiction]:
    """Live checker lessons whose annotation names, besides their own rule, a rule this session's
    checker reported as not needed there (``//nolint:errcheck,gosec`` for gosec, errcheck unused).
    A lesson's own rule reported unused once says only that this one line did not need it."""
    if not unused:
        return []
    rows = conn.execute(
        "SELECT id, content, user_verified, pinned, provenance_session_ids, json_extract(metadata, '$.signal_key') "
        "FROM memories WHERE deprecated = 0 AND json_extract(metadata, '$.signal') = ?", (CHECK_RULE,)).fetchall()
    found: list[Contradiction] = []
    for mid, content, verified, pinned, sessions, key in rows:
        own = str(key or "").partition(":")[2]  # ``check_rule:gosec``: the rule the lesson is about
        note = annotation(str(content))
        if not own or not note or session_id in str(sessions):
            continue
        wrong = [r for r in _NAMES.findall(note) if r != own and r in unused]
        if wrong:
            found.append(Contradiction(int(mid), "", bool(verified or pinned),
                                       f"the checker reported `{wrong[0]}` in its annotation as unused in "
                                       f"session {session_id[:8]}"))
    return found


def contradicted(conn: Any, session_id: str, commands: list[str], root: Path | None = None) -> list[Contradiction]:
    """The live "this fails" lessons that a successful command of this session contradicts."""
    found: dict[int, Contradiction] = {}
    for command in commands[:MAX_SUCCEEDED]:
        shape = shape_of("Bash", {"command": command}, [])
        for armed in candidates(conn, shape):
            if armed.memory_id in found or armed.trigger.kind != COMMAND or not matches(armed.trigger, shape, root):
                continue
            row = conn.execute(
                "SELECT json_extract(metadata, '$.signal'), provenance_session_ids, user_verified, pinned "
                "FROM memories WHERE id = ?", (armed.memory_id,)).fetchall()
            if not row or row[0][0] not in FAILS_SIGNALS or session_id in str(row[0][1]):
                continue
            found[armed.memory_id] = Contradiction(armed.memory_id, command, bool(row[0][2] or row[0][3]))
    return list(found.values())


def tool_contradicted(conn: Any, session_id: str, calls: list[list[str]]) -> list[Contradiction]:
    """The live tool-argument lessons a call of this session went through with the refused value of
    (``calls``: each the tool's name, then its argument names and ``name=value`` settings, as
    ``observer/tool_arguments`` records them).
    A lesson from a call the user declined is not contradicted: another time, they let it pass."""
    found: dict[int, Contradiction] = {}
    for raw, *params in calls[:MAX_SUCCEEDED]:
        shape = CallShape(OTHER, None, (), raw_tool=raw, params=tuple(params))
        for armed in candidates(conn, shape):
            took = [t for t in armed.trigger.tokens if t in shape.params] if armed.trigger.kind == TOOL else []
            if armed.memory_id in found or not took:
                continue
            row = conn.execute(
                "SELECT json_extract(metadata, '$.signal'), json_extract(metadata, '$.declined'), "
                "provenance_session_ids, user_verified, pinned FROM memories WHERE id = ?",
                (armed.memory_id,)).fetchall()
            if not row or row[0][0] != TOOL_ARGS or row[0][1] or session_id in str(row[0][2]):
                continue
            found[armed.memory_id] = Contradiction(armed.memory_id, f"{raw} {took[0]}", bool(row[0][3] or row[0][4]),
                                                   f"`{raw}` took `{took[0]}` in session {session_id[:8]}")
    return list(found.values())


def declined_contradicted(conn: Any, session_id: str, declined: list[list[str]]) -> list[Contradiction]:
    """The live lessons recommending a command the user declined to let run in this session
    (``declined``: each the command, then the words the user typed, or '')."""
    if not declined:
        return []  # almost every session
    rows = conn.execute(
        "SELECT id, json_extract(metadata, '$.signal_key'), user_verified, pinned FROM memories "
        "WHERE deprecated = 0 AND needs_review = 0 AND json_extract(metadata, '$.signal') IN (?, ?)",
        RECOMMENDS).fetchall()
    found: list[Contradiction] = []
    for mid, key, verified, pinned in rows:
        hit = next(((c, w) for c, w in declined[:MAX_SUCCEEDED] if declines_advice(c, str(key or ""))), None)
        if hit is None:
            continue
        words = redact_then_cut(hit[1], 120)
        said = f' ("{words}")' if words else ""
        found.append(Contradiction(int(mid), hit[0], bool(verified or pinned),
                                   f"the user declined `{redact_then_cut(hit[0], 120)}` in session "
                                   f"{session_id[:8]}{said}", review_only=True, words=words))
    return found


def advised(signal_key: str) -> str:
    """The command a lesson's key says to run: a gap's stronger check (``check_gap:A>B`` -> B), a
    recipe's command (``recipe:<purpose>:<command>``); '' for any other lesson."""
    kind, _, rest = signal_key.partition(":")
    if kind == CHECK_GAP:
        return rest.partition(">")[2]
    return rest.partition(":")[2] if kind == RECIPE else ""


def advice_words(signal_key: str) -> list[str]:
    """The words of the command a lesson's key says to run (its last segment: a recipe's setup
    aside); [] for a lesson that recommends no command."""
    segments = parse_line(advised(signal_key), "", "").segments
    return segments[-1].text.split() if segments else []


def declines_advice(line: str, signal_key: str) -> bool:
    """True when ``line``, a command the user declined, runs what the lesson keyed ``signal_key`` says to
    run: a check gap's stronger check, its words in order whatever targets follow
    (``mise run test:integration 2>&1 | tail`` runs ``mise run test:integration``), or a recipe's
    command exactly (a declined ``pytest -x tests/slow`` says nothing of the recipe ``pytest``; a
    declined ``gh pr create --draft --title x`` is the recipe ``gh pr create --draft --title …``)."""
    wanted = advice_words(signal_key)
    if not wanted:
        return False
    exact = signal_key.startswith(f"{RECIPE}:")
    for seg in parse_line(line, "", "").segments:
        words = seg.text.split()
        if exact:
            review = review_kind(seg.text)  # a review recipe states its command with one PR's text taken out
            form = review_recipe(seg.text, review) if review else None
            if words == wanted or (form is not None and form.split() == wanted):
                return True
            continue
        it = iter(words)
        if words[:1] == wanted[:1] and all(w in it for w in wanted):
            return True
    return False


def retire(tx: Tx, session_id: str, items: list[Contradiction]) -> int:
    """Inside the session's promotion: retire (or, a person's or one the user declined, mark for
    review) each contradicted lesson."""
    for c in items:
        said = redact_then_cut(c.command, 300)  # redact first, then cut
        reason = c.reason or f"`{redact_then_cut(said, 120)}` ran fine in session {session_id[:8]}"
        if c.review_only or c.person_kept:
            if c.review_only:  # the app words it from the code: "you declined `…` in session …"
                tx.audit("review", c.memory_id, actor="observer", reason=reason, detail={
                    "code": DECLINED_CODE, "command": said, "session": session_id[:8], "words": c.words})
            else:
                tx.audit("stale", c.memory_id, actor="observer", reason=reason, detail={"command": said})
            tx.execute("UPDATE memories SET needs_review = 1, updated_at = ? WHERE id = ?", (tx.now, c.memory_id))
        else:
            tx.audit("deprecate", c.memory_id, actor="observer", reason=reason, detail={"command": said})
            tx.execute("UPDATE memories SET deprecated = 1, deprecated_at = ?, deprecated_reason = ?, updated_at = ? "
                       "WHERE id = ? AND deprecated = 0", (tx.now, reason, tx.now, c.memory_id))
        tx.changed("memory", "updated", [c.memory_id])
    if items:
        log.info("session %s contradicted %d lesson(s)", session_id, len(items))
    return len(items)
