"""The user's habits about tests, said at the moment they apply (issues 25 and 26).

``observer/asked_tests`` learns the habit from what happened: in two sessions or more, code changed
without tests, the user asked for them, and the agent's next edits were tests. A new colleague is
told it on day one; an agent needs it at the moment it would otherwise hand back untested code:
when a check (tests, lint, build) has just passed and the session has changed code since its last
test edit. Said at every session start instead, two blind judges found it not worth its tokens.

The other habit, the user questioning tests an agent just wrote, fires before a session's first test
edit (its trigger, ``<tests>``). What the user checks is in their words, and the memory was worded
from one session's. As it is said, it carries the user's concern that came back: the quotes that
share words with what the user said in other sessions (:func:`in_users_words`). A remark made once
("can we break up the transition test?") is about that test; two blind judges found a habit said
with such remarks useless in most sessions.

The session's state is one column of ``hook_sessions``: the first code file changed since the last
test edit ('' when none). It is written only when it flips, so a session's many edits cost a write
each time the agent moves between code and tests, not one per edit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Any, Final

from desktop.memory.observer.signal_kinds import ASKED_TESTS, REVIEWED_TESTS, REVIEWED_TESTS_LEAD
from desktop.memory.privacy.boundary import redact_stored, redact_then_cut
from desktop.memory.store.writer import FnOp, Tx
from desktop.memory.text.file_kinds import is_code_change, is_test_file
from desktop.memory.triggers.model import COMMAND, Trigger
from desktop.memory.triggers.warn import LINE_CHARS, Outcomes
from desktop.memory.trust import INJECTABLE_SQL
from desktop.memory.types import Memory

#: What counts as a check that passed: a test run, a linter or a build (not a format or an install).
CHECK_KINDS: Final = frozenset({"test", "lint", "build"})
#: The habit's moment as a trigger, for the warning's record: any check (it is never stored).
HABIT_TRIGGER: Final = Trigger(COMMAND, "*")
#: The user's words said with the review habit: the newest sessions' first.
MORE_WORDS: Final = 3
#: The habit's own lead when it is said with the user's words that came back (the stored memory is
#: reworded with them when another session reinforces it: ``observer/asked_tests.reword_review``).
REVIEW_LEAD: Final = "After an agent wrote tests here, the user asked: "
#: Words a quote must share with other sessions' quotes to be the user's concern that came back.
#: One: "test duplication" and "doubt how useful" are one concern in words that never meet. Asking
#: for two lost the warnings before two of the user's later complaints about it (in process over
#: sessions 0-159: 76 labelled repeats warned with two, 80 with one, 78 before).
SHARED_WORDS: Final = 1
#: A word of a quote: five letters or more (shorter ones are the grammar of any sentence), compared
#: by its first five.
_WORD: Final = re.compile(r"[^\W\d_]{5,}")
_STEM: Final = 5
#: Function words of five letters or more (English and French, the languages Engram speaks): the
#: grammar of a remark, never its concern. Shared by two remarks, they matched a rebase request to a
#: review ("i should rebase … there's already a fix") and "I think we should …" to every opinion.
_FUNCTION_WORDS: Final = frozenset(w[:_STEM] for w in (
    "should", "would", "could", "there", "their", "those", "these", "other", "about", "which", "where", "while",
    "after", "before", "again", "already", "always", "never", "still", "every", "something", "anything", "nothing",
    "everything", "really", "maybe", "think", "because", "since", "until", "being", "having", "doing", "going",
    "actually", "basically", "probably", "please", "thanks", "right", "though", "through", "without", "within",
    "another", "between", "alors", "aussi", "avant", "après", "encore", "toujours", "jamais", "quand", "comme",
    "cette", "leurs", "notre", "votre", "faire", "peut-être", "pourquoi", "parce", "depuis", "pendant", "quelque",
    "chose", "rien", "merci"))
#: A quote's first sentence, when it has one of a useful length.
_FIRST_SENTENCE: Final = re.compile(r"(.{20,}?[?.!])(?:\s|$)", re.S)


def in_users_words(memory: Memory) -> Memory | None:
    """A habit memory said in the user's words that came back: the quotes of its provenance that
    share words with what the user said in other sessions (:func:`recurring`), the most shared first,
    then the newest. None when no quote recurs yet: the habit is not said on one-off remarks.

    Each quote is the first sentence of what the user said, whole: a quote cut mid-word reads as
    noise, so a quote that does not fit the line is left out, and only the first may be cut. A
    memory a person reworded keeps its words, with the quotes after them, and is said even when
    none recurs."""
    if memory.metadata.get("signal") != REVIEWED_TESTS:
        return memory  # "add tests" needs no one's words: two blind judges labelled it by its moments
    own = memory.content.startswith(REVIEWED_TESTS_LEAD)
    lead = REVIEW_LEAD if own else f"{memory.content.rstrip('.')}; in other sessions: "
    said = _worded(lead, memory.provenance, "" if own else memory.content)
    if not said:
        return None if own else memory
    return replace(memory, content=said)


def reworded_review(content: str, provenance: list[Any]) -> str:
    """The stored wording of the review habit with the user's concern that came back, as it is said
    (:func:`in_users_words`); '' when it stays as it is (a person's wording, or nothing recurs yet)."""
    if not content.startswith(REVIEWED_TESTS_LEAD):
        return ""
    new = _worded(REVIEWED_TESTS_LEAD, provenance, "")
    return new if new != content else ""


def _worded(lead: str, provenance: list[Any], already: str) -> str:
    """``lead`` and the recurring quotes that fit one line after it, whole (only the first may be
    cut), none of them twice nor one ``already`` says; '' when none recurs."""
    room = LINE_CHARS - len(lead) - 1
    seen: list[str] = []
    for said in recurring(_quotes(provenance)):
        quote = redact_stored(said)  # redacted before it is measured
        if not quote or any(quote[:60] in s for s in seen) or (already and quote[:60] in already):
            continue
        if len(quote) + 4 <= room:
            seen.append(quote)
        elif not seen and room > 24:
            seen.append(redact_then_cut(quote, room - 4, "…"))
        else:
            continue
        room -= len(seen[-1]) + 4
        if len(seen) == MORE_WORDS:
            break
    return lead + "; ".join(f'"{q}"' for q in seen) + "." if seen else ""


def _quotes(provenance: list[Any]) -> list[str]:
    """The first sentence of the user's words each session of a memory's provenance gave, newest
    first, one a session: what is said is what is compared (a concern shared only by later sentences
    left a quote that did not say it, judged weak in BookMinder's r44)."""
    out: list[str] = []
    for prov in reversed(provenance):
        words = prov.get("evidence") if isinstance(prov, dict) else None
        quote = _first_sentence(str(words[0])) if isinstance(words, list) and words else ""
        if quote and quote not in out:  # the same words twice are one remark, not a concern that came back
            out.append(quote)
    return out


def recurring(quotes: list[str], subject: str = "test") -> list[str]:
    """The quotes that share at least :data:`SHARED_WORDS` word with quotes of other sessions, the
    most shared first, then in the order given. A word counts when it comes back, in two quotes or
    more, without being the habit's subject: not the ``subject`` every quote was chosen for ("tests",
    "testing"), nor a word in nearly all of them (three quotes in four, once there are more than
    four), nor a function word (:data:`_FUNCTION_WORDS`). Words are compared by
    their first letters, so "duplicate" and "duplication" are one concern, in any language written
    with spaces."""
    words = [{w.casefold()[:_STEM] for w in _WORD.findall(q) if not w.casefold().startswith(subject)}
             - _FUNCTION_WORDS for q in quotes]
    seen_in: dict[str, int] = {}
    for ws in words:
        for w in ws:
            seen_in[w] = seen_in.get(w, 0) + 1
    most = max(3, len(quotes) * 3 // 4)
    scored = [(sum(1 for w in ws if 2 <= seen_in[w] <= most), i) for i, ws in enumerate(words)]
    return [quotes[i] for n, i in sorted(scored, key=lambda x: (-x[0], x[1])) if n >= SHARED_WORDS]


def _first_sentence(text: str) -> str:
    """The first sentence of a quote (its whole text when it has none of a useful length)."""
    flat = " ".join(text.split())
    m = _FIRST_SENTENCE.match(flat)
    return m.group(1) if m else flat


def is_check(command: str) -> bool:
    """True when one of the command line's segments runs the tests, a linter or a build."""
    # Loaded here, not with the module: most calls the hooks see need no command kinds (7 ms of patterns).
    from desktop.memory.observer.command_kinds import category
    from desktop.memory.observer.shell_parse import parse_line

    return any(category(s.text) in CHECK_KINDS for s in parse_line(command, "", "").segments)


def check_passed(command: str, output: str) -> bool:
    """A check that succeeded, its output showing no failure where a pager hid its exit status."""
    from desktop.memory.observer.command_kinds import shows_failure

    return is_check(command) and not shows_failure(output)


def failed_unseen(command: Any, output: str) -> bool:
    """A check whose exit status a pipe or ``|| true`` hid (``mise run lint | head``), its output
    showing it failed: for what is said after it, a failure like any other. ``command`` is the call's
    command argument as the agent gave it (a string, or an argv list)."""
    from desktop.memory.observer.tool_names import command_text

    line = command_text(command) if command is not None else ""
    if "|" not in line and ";" not in line:
        return False  # the common case: nothing could hide the exit status (no pattern module loaded)
    from desktop.memory.observer.command_kinds import category, shows_failure
    from desktop.memory.observer.shell_parse import parse_line

    if not shows_failure(output):
        return False
    return any(s.masked and category(s.text) in CHECK_KINDS for s in parse_line(line, "", "").segments)


def untested_change(conn: Any, session_id: str) -> str:
    """The first code file the session changed since its last test edit ('' when none)."""
    row = conn.execute("SELECT untested FROM hook_sessions WHERE session_id = ?", (session_id,)).fetchone()
    return str(row[0]) if row else ""


def untested_after(previous: str, files: Iterable[str]) -> str:
    """The session's untested change after an edit that succeeded wrote ``files``: a test clears
    it, a code file sets it when it was clear, anything else (docs, configuration) leaves it."""
    files = list(files)
    if any(is_test_file(f) for f in files):
        return ""
    code = [f for f in files if is_code_change(f)]
    return previous or (code[0] if code else "")


def note_edit(db: Any, session_id: str, files: Iterable[str]) -> Any | None:
    """Record an edit of an external session (``hook_sessions``). Returns the writer's future when
    the state flipped, None when nothing needed writing."""
    files = list(files)
    if not files:
        return None
    old = untested_change(db.reads.conn(), session_id)
    new = untested_after(old, files)
    if bool(old) == bool(new):
        return None

    def write(tx: Tx) -> None:
        tx.execute("INSERT INTO hook_sessions(session_id, untested, updated_at) VALUES (?,?,?) "
                   "ON CONFLICT(session_id) DO UPDATE SET untested = excluded.untested, "
                   "updated_at = excluded.updated_at", (session_id, new, tx.now))
    return db.writer.submit(FnOp("hook_untested_change", write))


def tests_habit(conn: Any, memories: Any, floor: float, exclude: Iterable[int] = ()) -> list[Memory]:
    """The habit lessons that may be said (injectable, at or above ``floor``, not in ``exclude``),
    the best evidenced first: at most one."""
    rows = conn.execute(
        f"SELECT id FROM memories WHERE {INJECTABLE_SQL} AND confidence >= ? "
        "AND json_extract(metadata, '$.signal') = ? "
        "ORDER BY json_array_length(provenance_session_ids) DESC, confidence DESC, id LIMIT 4",
        (floor, ASKED_TESTS)).fetchall()
    skip = set(exclude)
    ids = [int(r[0]) for r in rows if int(r[0]) not in skip]
    found = memories.get_many(ids[:1])
    return [found[i] for i in ids[:1] if i in found]


def asked_anyway(db: Any, session_id: str, prompt: str, memories: Any) -> Any | None:
    """The user asked for tests, or questioned them, after that habit was said in this session: the
    warning did not help (its outcome becomes ``repeated``). Returns the writer's future, None when
    nothing changed."""
    outcomes = Outcomes(db)
    open_ids = outcomes.open_ids(session_id)
    if not open_ids:
        return None  # the common case: nothing warned, and the utterance scorer is not loaded
    from desktop.memory.observer.asked_tests import asks_for_tests, reviews_tests

    kinds = {ASKED_TESTS} if asks_for_tests(prompt) else set()
    if reviews_tests(prompt):
        kinds.add(REVIEWED_TESTS)
    if not kinds:
        return None
    found = memories.get_many(open_ids)
    habit = [i for i, m in found.items() if m.metadata.get("signal") in kinds]
    return outcomes.repeated(session_id, habit, "prompt") if habit else None
