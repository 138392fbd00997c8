"""What kind of file a project-relative path names, from its name alone: a test, prose, or code.

Kept apart from the code graph's parsers (``graph.languages`` loads tree-sitter) so that a hook on the
agent's hot path can tell a test from code without loading them.
"""

from __future__ import annotations

import posixpath
import re
from typing import Final

from desktop.memory.text.lazy_re import lazy

#: Files chunked as prose windows; anything else unknown is prose too, this set only documents what
#: the indexer is expected to feed it.
PROSE_EXTENSIONS: Final[frozenset[str]] = frozenset(
    {".md", ".markdown", ".rst", ".txt", ".yaml", ".yml", ".toml", ".json", ".ini", ".cfg"}
)
#: Files that are not code: prose, and data, lock files and images.
NOT_CODE: Final = PROSE_EXTENSIONS | frozenset({".adoc", ".conf", ".lock", ".sum", ".mod", ".csv", ".tsv", ".xml",
                                                ".svg", ".png", ".jpg", ".jpeg", ".gif", ".ico", ".env",
                                                ".gitignore", ".log"})
_TEST_NAME: Final = lazy(
    r"(^test_.*\.py$)|(_test\.(py|go|rb)$)|(_spec\.(py|rb)$)|(\.(test|spec)\.[cm]?[jt]sx?$)|(Tests?\.java$)"
)
#: Folders of tests by convention (``spec``/``specs``: RSpec, pytest-describe).
_TEST_DIRS: Final = frozenset({"tests", "test", "__tests__", "spec", "specs"})


def is_test_file(rel_path: str) -> bool:
    """Return True for test files by name convention or by living under a tests dir."""
    parts = rel_path.split("/")
    return bool(_TEST_NAME.search(parts[-1])) or any(p in _TEST_DIRS for p in parts[:-1])


def is_code_change(path: str) -> bool:
    """True for a source file that is not a test (an extension, and not prose, configuration or data)."""
    ext = posixpath.splitext(path)[1].lower()
    return bool(ext) and ext not in NOT_CODE and not is_test_file(path)


#: A line that declares a test case, in the common frameworks' forms: ``func TestX(`` (Go),
#: ``def test_x(`` / ``def it_x(`` (pytest, pytest-describe), ``it("…"`` / ``test(`` (Jest, Mocha,
#: Vitest, RSpec), ``#[test]`` (Rust), ``@Test`` (JUnit), ``[Fact]`` / ``[Test]`` (.NET), and a Go
#: subtest ``t.Run("…"``.
_TEST_CASE: Final = lazy(
    r"^\s*(?:func\s+(?:\([^)]*\)\s*)?(?:Test|Benchmark|Fuzz)(?![a-z])\w*\s*\(|(?:async\s+)?def\s+(?:test\w*|it_\w+)\s*\(|"
    r"(?:it|test|specify|scenario)(?:\.\w+)?\s*\(?\s*[\"'`]|#\[(?:\w+::)?test\]|@(?:Test|ParameterizedTest)\b|"
    r"\[(?:Fact|Theory|Test|TestMethod)\b|\w+\.Run\(\s*[\"'`])", re.M)


def declared_tests(text: str) -> int:
    """How many test cases ``text`` declares (see :data:`_TEST_CASE`)."""
    return len(_TEST_CASE.findall(text))
