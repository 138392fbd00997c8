"""Which part of the project a command line runs: the whole, or one test, file or package.

A test run narrowed by a selector (``-k name``, ``-run TestX``, a test file, ``go test ./pkg/``)
is one run's choice: it is no recipe for the project (``recipes``), and an agent running it is
checking the unit it works on, not finishing (``triggers/warn``: a check gap is said after a run of
the whole). A folder that names a suite of its own (``./integration_test/...``) is a whole suite.
Regular expressions only: the hooks import this on every call.
"""

from __future__ import annotations

import re
from typing import Final

from desktop.memory.text.lazy_re import lazy

#: Options whose value picks one run's tests (dropped with their value).
_SELECTOR_OPTS: Final = frozenset({"-k", "-run", "--run", "-t", "--filter", "--grep", "-g", "--testNamePattern",
                                   "--test-name-pattern", "--match", "--pkg", "--lf", "--deselect"})
#: Of those, the short ones followed by their value as the next word (``-run "TestA|TestB"``).
_VALUED_SHORT: Final = frozenset(o for o in _SELECTOR_OPTS if not o.startswith("--"))
#: A test file or a test id given to a runner (``tests/test_a.py``, ``a_test.go``, ``::test_x``).
_TEST_FILE: Final = re.compile(r"^(?:[\w./-]+\.(?:py|ts|js|tsx|rs|go)(?:::[\w:\[\]-]+)?|::.*)$")
#: A shell word, its quoted parts whole ("-k 'a or b'" is two words).
_WORD: Final = re.compile(r"(?:\"[^\"]*\"|'[^']*'|[^\s\"'])+")
_SELECTOR_ARG: Final = lazy(r"^[\w./@-]+\.(?:py|ts|tsx|js|jsx|go|rs|rb|java|kt|swift|spec|test)(?:::\S+)?$|::|"
                            r"^Test\w+$|^-run=|^-k=|^--filter=")
#: Words that name the kind of suite a test command runs (its purpose, besides kind and folder).
SUITE: Final = lazy(r"(?<![a-z])(integration|e2e|end-to-end|unit|acceptance|smoke|ci|all|race|bench|slow|"
                    r"fast|coverage|cover|cov)(?![a-z])")
#: A path argument naming a part of the project (the whole is ``./...``, ``.``, ``./``).
_PART: Final = lazy(r"^(?!\./\.\.\.$|\.{1,3}/?$)\.?[\w@.-]*/[\w@./-]*$")
SUITE_NAMES: Final = {"end-to-end": "e2e", "cover": "coverage", "cov": "coverage"}


def normalised(command: str, kind: str = "") -> str | None:
    """The command to reuse, flags kept, an output written outside the project dropped (``-o /tmp/x``).

    None when the run selects a part of the project (a test file, ``-k name``, ``-run TestX``,
    ``go test ./pkg/``, ``ruff check src/x.py``): that is one run's selection, not the recipe,
    unless the part is a suite of its own (``./integration_test/...``).
    """
    words = command.split()
    out: list[str] = []
    skip = False
    for i, w in enumerate(words):
        if skip:
            skip = False
            continue
        if w in ("-o", "--output") and i + 1 < len(words) and _outside(words[i + 1]):
            skip = True
            continue
        if i > 0 and (w in _SELECTOR_OPTS or _SELECTOR_ARG.search(w)):
            return None
        if _outside(w) and i > 0:
            continue
        if i > 0 and _PART.match(w) and not SUITE.search(w.lower()) and not (
                kind == "build" and not w.endswith(("/", "/..."))):  # "go build ./cmd/app" builds the app
            return None
        out.append(w)
    while out and out[-1] == "--":
        out.pop()  # "mise run test --" passes nothing on
    return " ".join(out)


def selects_part(command: str) -> bool:
    """True for a run of one part of the project (a test file, ``-run TestX``, ``go test ./pkg/``):
    an agent checking the unit it works on, not the whole."""
    return normalised(command, "test") is None


def _outside(word: str) -> bool:
    """An absolute path outside the project (``/tmp/x``, ``/dev/null``, ``~/x``)."""
    return word.startswith(("/", "~"))


def recipe_form(command: str) -> str:
    """The command an error-fix lesson quotes: no pipe into a pager or grep, no test selectors, file
    arguments, short flags or valued options (they belong to one run, not to the recipe)."""
    # Only the observer asks this: the hooks, which import this module, do not pay for the classifier.
    from desktop.memory.observer.command_kinds import category

    head = _WORD.findall(command.split(" | ")[0])
    # A test run's short selector takes its value along ("-run 'A|B'" left as "'A|B'" reads as a package).
    if category(command) == "test":
        head = [w for i, w in enumerate(head) if not (i and head[i - 1] in _VALUED_SHORT)]
    words = [w for w in head if not _TEST_FILE.match(w) and not re.match(r"[A-Z][A-Z0-9_]*=", w)
             and not (w.startswith("-") and (not w.startswith("--") or "=" in w))]
    return " ".join(words)
