"""Code-aware text helpers: identifier splitting for FTS5, safe MATCH queries, token counts.

FTS5's ``unicode61`` tokenizer sees ``verifyJwt`` as one token, so a search for
"verify" would miss it.  :func:`expand_code_terms` appends the parts of every
compound identifier when the FTS row is written, and :func:`fts_match_query`
applies the same splitting to the user's query, quoting every term so that no
user text can ever be parsed as FTS5 syntax.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["count_tokens", "expand_code_terms", "fts_match_query", "query_terms", "split_identifier"]

# A "compound" is any run of word characters and the punctuation that glues
# identifiers and paths together (verify_jwt, auth/tokens.ts, pkg::mod, a-b).
_COMPOUND = re.compile(r"[\w$@#./\\:\-]+")
# Alphanumeric runs inside a compound (underscore is a separator here).
_ALNUM_RUN = re.compile(r"[^\W_]+")
# camelCase / PascalCase / acronym boundaries; digits stick to the part before
# them ("getURL2" -> get, URL2; "sha256sum" -> sha256, sum).
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+")

_STOPWORDS_TEXT = (
    "a an and are as at be but by can could did do does for from had has have how i if in into is it its "
    "me my no not of on or our should so that the their then there these this those to was we were what "
    "when where which who why will with would you your "
)
_STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
_MAX_QUERY_TERMS = 64  # a pasted page as a query must not become a 5,000-term OR


def split_identifier(word: str) -> list[str]:
    """Split one identifier or path into lower-case parts (see `_split_cached`)."""
    return list(_split_cached(word))


# Code repeats the same identifiers endlessly; indexing a codebase splits each one once.
@lru_cache(maxsize=65_536)
def _split_cached(word: str) -> tuple[str, ...]:
    """Split one identifier or path into lower-case parts.

    ``verifyJwt`` -> ``["verify", "jwt"]``, ``HTTPServerError`` -> ``["http", "server",
    "error"]``, ``auth/tokens.ts`` -> ``["auth", "tokens", "ts"]``.
    """
    parts: list[str] = []
    for run in _ALNUM_RUN.findall(word):
        # Case boundaries are only meaningful for ASCII identifiers; other scripts
        # (and words like "straße") are kept whole rather than cut mid-word.
        pieces = _CAMEL.findall(run) if run.isascii() else [run]
        parts.extend(p.lower() for p in pieces)
    return tuple(parts)


# ASCII text: every character that cannot be in a compound becomes a blank, so
# ``str.split`` finds the compounds of _COMPOUND (whose ``\w`` is [A-Za-z0-9_] there) at C
# speed; the regex engine took half of the time of indexing a code chunk's FTS row.
_COMPOUND_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$@#./\\:-")
_NOT_COMPOUND = str.maketrans({c: " " for c in range(128) if chr(c) not in _COMPOUND_CHARS})
# compound -> the parts it adds to a row (() when it adds none); plain words are most of them.
_ADDED: dict[str, tuple[str, ...]] = {}
_ADDED_MAX = 200_000


def _added_parts(compound: str) -> tuple[str, ...]:
    """The parts ``compound`` adds to an FTS row: its split, when it splits into two or more."""
    # Plain words (the vast majority) have nothing to split: skip the regex work.
    if compound.isalpha() and (compound.islower() or compound[1:].islower()):
        parts: tuple[str, ...] = ()
    else:
        parts = _split_cached(compound)
        if len(parts) < 2:
            parts = ()
    if len(_ADDED) >= _ADDED_MAX:
        _ADDED.clear()
    _ADDED[compound] = parts
    return parts


def expand_code_terms(text: str) -> str:
    """Return ``text`` followed by the parts of its compound identifiers, for the FTS row.

    The original text is kept verbatim; extra terms are appended once each, so
    ``"call verifyJwt"`` becomes ``"call verifyJwt verify jwt"``.
    """
    seen: set[str] = set()
    extra: list[str] = []
    compounds = text.translate(_NOT_COMPOUND).split() if text.isascii() else _COMPOUND.findall(text)
    known = _ADDED.get
    # Each distinct compound once (code repeats its identifiers); first-seen order keeps the output.
    for compound in dict.fromkeys(compounds):
        parts = known(compound)
        if parts is None:
            parts = _added_parts(compound)
        for part in parts:
            if part not in seen:
                seen.add(part)
                extra.append(part)
    if not extra:
        return text
    return f"{text} {' '.join(extra)}"


def _query_terms(query: str, whole: bool) -> list[str]:
    terms: list[str] = []
    seen: set[str] = set()

    def add(term: str) -> None:
        if term and term not in seen and term not in _STOPWORDS:
            seen.add(term)
            terms.append(term)

    for compound in _COMPOUND.findall(query):
        for run in _ALNUM_RUN.findall(compound):
            parts = split_identifier(run)
            if whole and len(parts) > 1:
                # The whole identifier as the FTS row spells it: a BM25 boost for exact
                # matches in "or" mode; in "and" mode it would wrongly require it.
                add(run.lower())
            for part in parts:
                add(part)
    return terms[:_MAX_QUERY_TERMS]


def query_terms(text: str) -> list[str]:
    """The content words of ``text`` as FTS5 sees them: lower-cased, identifier-split, no stopwords."""
    return _query_terms(text, whole=False)


def fts_match_query(query: str, mode: str = "or") -> str | None:
    """Turn free user text into a safe FTS5 MATCH expression, or None if nothing is searchable.

    Every term is a double-quoted FTS5 string, so quotes, ``-``, ``:``, ``*``,
    parentheses and the words ``AND``/``OR``/``NOT``/``NEAR`` in user text are data,
    never syntax.  Terms are lower-cased, identifier-split like
    :func:`expand_code_terms`, stripped of English stopwords and de-duplicated.
    ``mode`` is ``"or"`` (any term, ranked by BM25) or ``"and"`` (all terms).
    """
    if mode not in ("or", "and"):
        raise ValueError(f"mode must be 'or' or 'and', not {mode!r}")
    terms = _query_terms(query, whole=mode == "or")
    if not terms:
        return None
    joiner = " OR " if mode == "or" else " AND "
    return joiner.join('"' + t.replace('"', '""') + '"' for t in terms)


# ---------------------------------------------------------------------------
# Token counting
# ---------------------------------------------------------------------------

# The cl100k pre-tokenizer (letters with one leading non-letter, 1-3 digit
# groups, punctuation runs, newline runs, whitespace) written for Python's re.
_PRETOKEN = re.compile(
    r"'(?:[sdmtSDMT]|ll|ve|re|LL|VE|RE)"
    r"|(?:[^\r\n\w]|_)?[^\W\d_]+"
    r"|\d{1,3}"
    r"| ?[^\s\w]+[\r\n]*"
    r"|\s*[\r\n]+"
    r"|\s+(?!\S)"
    r"|\s+"
)
_LETTERS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[^\W\d_A-Za-z]+")

# Calibrated constants (see count_tokens).
_SHORT_WORD = 8  # letter parts up to this length are usually one BPE token
_CHARS_PER_TOKEN_LONG = 4.5  # longer parts cost roughly one token per this many chars
_PUNCT_PER_TOKEN = 1.5  # BPE vocabularies merge common pairs: "()", "):", "=>", "\","


def _word_cost(word: str) -> float:
    cost = 0.0
    for part in _LETTERS.findall(word):
        if not part.isascii():
            # Non-Latin scripts cost about one token per character in cl100k-like vocabularies.
            cost += len(part)
        elif len(part) <= _SHORT_WORD:
            cost += 1.0
        else:
            cost += max(1.0, len(part) / _CHARS_PER_TOKEN_LONG)
    return cost or 1.0


def count_tokens(text: str) -> int:
    """Estimate how many LLM tokens (cl100k-like BPE) ``text`` costs, in linear time.

    The text is pre-tokenized with the cl100k split rules; each piece is priced:
    a letter run costs one token per camel-case part (long parts ``len/4``), a
    1-3 digit group one token, a punctuation run one token per two characters,
    and a newline or indentation run one token.

    Calibration: no GPT-2/cl100k vocabulary ships with any installed package
    (there is no ``tiktoken``), so the constants were tuned against the real
    WordPiece tokenizer of the bundled MiniLM model
    (``resources/models/all-minilm-l6-v2/tokenizer.json``, run with the HF
    ``tokenizers`` package) on a mixed corpus of English prose, Python source and
    JSON, and cross-checked against the published cl100k rule of thumb of about
    four characters per token for English.  ``tests/text/test_tokens.py``
    asserts the estimate stays within 10% of that tokenizer on such a corpus.
    """
    if not text:
        return 0
    total = 0.0
    for piece in _PRETOKEN.findall(text):
        first = piece[0]
        if first.isdigit() or piece.isspace():
            total += 1.0
        else:
            body = piece.lstrip()
            if body and (body[0].isalpha() or (len(body) > 1 and body[0] in "_" and body[1].isalpha())):
                total += _word_cost(body)
            elif body and not body[0].isalnum() and len(body) > 1 and body[-1].isalpha():
                # A leading punctuation char glued to a word (".append", "#include").
                total += _word_cost(body[1:]) + 0.5
            else:
                total += max(1.0, len(body.rstrip("\r\n")) / _PUNCT_PER_TOKEN)
    return max(1, round(total))
