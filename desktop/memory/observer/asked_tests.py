"""What the user asks about tests, as a habit (issues 25 and 26): tests asked for once code has
changed without them, and tests the agent just wrote questioned by the user.

Judged from what happened, not from phrase lists: the session had changed code and no test
since; the user then asked a short question naming tests ("can we add a test?", "do we have
tests for this?"); and the agent's next edits, before the user spoke again, were to test files.
One such turn is that day's request. The same in another session is the user's habit, which a
new colleague would be told on day one: write the tests with the change, unasked. It is learned,
not volunteered: said before the first code change of every later session (75 of 100 replayed
sessions), two blind judges found it not worth its tokens there. Search and MCP give it when asked;
the hooks say it at its own moment, when a check passes on untested changes (``triggers/untested``).

The second habit is the user's review: the agent's turn wrote tests, and the user's next words are
about tests ("can we double check we are not having test duplication now?", "are the first two tests
really testing something?"). In two sessions or more, that is how this user receives tests; the
user's own words say what they check, and an agent about to write tests should hear them first.

The only word read is "test", a loan word in most languages programmers write in; the question
mark is structural. Words about *running* tests ("run the tests", "don't run the integration tests,
too slow", "while that test is running...", "were any tests failing?") are about a run, not about
the tests an agent wrote or the ones it should add: a verb of execution or of a run's outcome (closed
classes) in the same sentence as the word "test" makes it neither an ask nor a review. A pasted
review, a harness message or a subagent's brief is not the user asking (``utterances.user_utterance``).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any, Final

from desktop.memory.observer.events import UserMessage
from desktop.memory.observer.prose_lessons import NOT_THE_USER
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.signals import ASKED_TESTS, REVIEWED_TESTS, Signal
from desktop.memory.observer.utterances import PROMPT, user_utterance
from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.store.errors import EngramError
from desktop.memory.store.memory_ops import EditMemory
from desktop.memory.store.writer import Tx
from desktop.memory.text.file_kinds import is_code_change, is_test_file
from desktop.memory.triggers.model import EDIT, TEST_FILES, Trigger, adds_lines

#: A request, not a pasted text or a brief: the user's own short question.
MAX_ASK_CHARS: Final = 300
_NAMES_TESTS: Final = re.compile(r"\btest(?:s|ing|e|en|es)?\b", re.I)
#: Tests named as people name them, not a task or a path (``mise run test:ci``, ``test/x``, ``docs/testing``,
#: ``test.go``), and not inside quotes or backticks (a command or a file the user pastes).
_TESTS_AS_WORD: Final = re.compile(r"(?<![\w/.-])test(?:s|ing|e|en|es)?\b(?![:/._-]\w)", re.I)
_QUOTED: Final = re.compile(r"`[^`]*`|\"[^\"]*\"")
#: Verbs of execution and of a run's outcome (English, French, German, Spanish): what is done *with*
#: tests, or what running them gave, not what the tests are.
_RUN_VERB: Final = re.compile(
    r"\b(?:re-?)?(?:run|runs|running|ran|execut(?:e|es|ed|ing)|launch(?:es|ed|ing)?|lance[rz]?|lancé|"
    r"exécut(?:e|er|ez|é)|aus(?:führen|geführt)|führ(?:e|t) \w+ aus|lauf(?:en|t)?|läuft|ejecut(?:a|ar|ad)|"
    r"corr(?:e|er)|"
    # what a run gives (a test "failing", "flaky"): the words are about a run's outcome too
    r"fail(?:s|ed|ing|ures?)?|flak(?:y|iness)|échou\w*|fehlgeschlagen|schlägt \w+ fehl|fall(?:a|an|ó|ando|ido))\b",
    re.I)
_SENTENCE_END: Final = re.compile(r"(?<=[.!?;])\s+")
_log = logging.getLogger("engram.observer.asked_tests")
_STATE: Final = "asked_tests"
_REVIEW: Final = "reviewed_tests"


def on_user(sp: Scratchpad, ev: UserMessage) -> None:
    """A short question about tests after untested changes opens a pending ask; any other prompt
    closes the one before (its turn is over)."""
    _on_review(sp, ev)
    state = sp.ev.setdefault(_STATE, {"untested": False, "ask": None, "done": False})
    state["ask"] = None
    if state["done"] or not state["untested"] or sp.parent_session_id or sp.session_type in NOT_THE_USER:
        return
    text = asks_for_tests(ev.text, ev.origin)
    if text:
        state["ask"] = {"text": redact_then_cut(text, 200), "step": ev.step, "event": ev.event_key}


def about_a_run(text: str) -> bool:
    """True when a sentence naming tests also has a verb of execution: it is about running them."""
    return any(_TESTS_AS_WORD.search(part) and _RUN_VERB.search(part) for part in _SENTENCE_END.split(text))


def asks_for_tests(message: str, origin: str = PROMPT) -> str:
    """The user's own short question naming tests ("can we add a test?"), whitespace folded; ''
    for anything else (a statement, a pasted text, a harness message, a long brief)."""
    said = user_utterance(message, origin)
    if said is None:
        return ""
    text = " ".join(said.text.split())
    return text if (len(text) <= MAX_ASK_CHARS and "?" in text and _NAMES_TESTS.search(text)
                    and not about_a_run(text)) else ""


def reviews_tests(message: str, origin: str = PROMPT) -> str:
    """The user's own short words about tests (a question or a remark: "those tests are just testing
    that writing works..."), whitespace folded; '' for anything else, and for tests named only as a
    task, a path or inside quotes (``mise run test:ci is failing`` reports a run, not the tests)."""
    said = user_utterance(message, origin)
    if said is None:
        return ""
    text = " ".join(said.text.split())
    bare = _QUOTED.sub(" ", text)
    return text if len(text) <= MAX_ASK_CHARS and _TESTS_AS_WORD.search(bare) and not about_a_run(bare) else ""


def _on_review(sp: Scratchpad, ev: UserMessage) -> None:
    """The user's first words after a turn that wrote tests: when they are about tests, that
    session's review (one a session); any user message ends the turn."""
    state = _review_state(sp)
    wrote, state["wrote"] = state["wrote"], False
    if not wrote or state["done"] or sp.parent_session_id or sp.session_type in NOT_THE_USER:
        return
    text = reviews_tests(ev.text, ev.origin)
    if text:
        state["done"] = True
        quote = redact_then_cut(text, MAX_ASK_CHARS)  # whole: a review cut mid-sentence loses its point
        data = {"text": quote, "events": [ev.event_key], "triggers": [Trigger(EDIT, TEST_FILES).as_json()]}
        sp.add_signal(Signal(REVIEWED_TESTS, REVIEWED_TESTS, ev.step, [], data, [quote]))


def _review_state(sp: Scratchpad) -> dict[str, bool]:
    """The session's review state: did the current turn write tests; was the review already seen."""
    state: dict[str, bool] = sp.ev.setdefault(_REVIEW, {"wrote": False, "done": False})
    return state


def on_edit(sp: Scratchpad, path: str, step: int, *, whole_file: bool = False,
            args: dict[str, Any] | None = None) -> None:
    """A code edit leaves the session untested; a test edit answering a pending ask is the lesson
    when it adds to the file (a rename in the tests after "were any tests failing?" answers no ask
    for tests); a test edit makes the turn one that wrote tests."""
    if is_test_file(path):
        _review_state(sp)["wrote"] = True
    state = sp.ev.setdefault(_STATE, {"untested": False, "ask": None, "done": False})
    if is_test_file(path):
        state["untested"] = False
        ask = state["ask"]
        if ask is not None and not state["done"] and adds_lines(args or {}, whole_file=whole_file):
            state["done"] = True  # one piece of evidence a session
            data = {"text": ask["text"], "events": [ask["event"]]}
            sp.add_signal(Signal(ASKED_TESTS, ASKED_TESTS, step, [], data, [ask["text"]]))
    elif is_code_change(path):
        state["untested"] = True


def reword_review(tx: Tx, memory_id: int) -> None:
    """After another session reinforced the review habit, store it in the user's concern that came
    back (``triggers/untested.reworded_review``): it was worded from the first session's remark,
    often about that one test ("can you add an explicit test for this?", judged an anecdote). The
    audit log keeps the earlier wording; a person's wording is never replaced."""
    from desktop.memory.triggers.untested import reworded_review

    row = tx.execute("SELECT content, provenance, user_verified FROM memories WHERE id = ?", (memory_id,)).fetchone()
    if row is None or row[2]:
        return
    new = reworded_review(str(row[0]), json.loads(row[1] or "[]"))
    if not new:
        return
    try:
        EditMemory(memory_id, {"content": new}, actor="observer", reason="the user's concern that came back").apply(tx)
    except EngramError as exc:  # another memory says it already: the session's promotion goes on
        _log.info("review habit #%d kept its words: %s", memory_id, exc)
