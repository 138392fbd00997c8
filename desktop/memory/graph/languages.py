"""Language detection by file extension and per-thread cached tree-sitter parsers.

``tree_sitter.Parser`` objects are not thread-safe, so every thread gets its own
parser per language; ``Language`` and compiled ``Query`` objects are immutable and
shared.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from functools import cache

import tree_sitter

log = logging.getLogger("engram.graph")

_EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}


SUPPORTED_LANGUAGES: tuple[str, ...] = (
    "python", "javascript", "typescript", "tsx", "go", "rust", "java"
)


def extension(rel_path: str) -> str:
    """Return the lower-cased extension of the last path component, with the dot."""
    name = rel_path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


def detect_language(rel_path: str) -> str | None:
    """Return the language name for a path, or None when it is not a parsed language."""
    return _EXTENSIONS.get(extension(rel_path))


def _loader(language: str) -> Callable[[], object]:
    # Imported lazily so a missing grammar wheel only disables that one language.
    if language == "python":
        import tree_sitter_python as mod

        return mod.language
    if language == "javascript":
        import tree_sitter_javascript as mod_js

        return mod_js.language
    if language in ("typescript", "tsx"):
        import tree_sitter_typescript as mod_ts

        return mod_ts.language_tsx if language == "tsx" else mod_ts.language_typescript
    if language == "go":
        import tree_sitter_go as mod_go

        return mod_go.language
    if language == "rust":
        import tree_sitter_rust as mod_rs

        return mod_rs.language
    if language == "java":
        import tree_sitter_java as mod_java

        return mod_java.language
    raise KeyError(language)


@cache
def get_language(language: str) -> tree_sitter.Language | None:
    """Return the shared tree-sitter Language, or None if its grammar is unavailable."""
    try:
        return tree_sitter.Language(_loader(language)())
    except (ImportError, KeyError, ValueError) as exc:
        log.warning("tree-sitter grammar for %s unavailable: %s", language, exc)
        return None


@cache
def get_query(language: str, source: str) -> tree_sitter.Query:
    """Return a compiled Query; compiled once per (language, source) and shared."""
    lang = get_language(language)
    if lang is None:
        raise KeyError(language)
    return tree_sitter.Query(lang, source)


_local = threading.local()


def get_parser(language: str) -> tree_sitter.Parser | None:
    """Return this thread's parser for ``language`` (created on first use), or None."""
    parsers: dict[str, tree_sitter.Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    parser = parsers.get(language)
    if parser is None:
        lang = get_language(language)
        if lang is None:
            return None
        parser = parsers[language] = tree_sitter.Parser(lang)
    return parser


def parse(language: str, source: bytes) -> tree_sitter.Tree | None:
    """Parse ``source`` with this thread's parser; None when the grammar is missing."""
    parser = get_parser(language)
    return parser.parse(source) if parser is not None else None
