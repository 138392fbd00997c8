"""Real token counts for packing: the bundled WordPiece vocabulary, counted without loading a model.

Token counts come from a real tokenizer: the bundled WordPiece vocabulary of the
local embedding model (``tokenizer.json`` of all-MiniLM-L6-v2). No BPE vocabulary
(cl100k/o200k) ships with any installed package and ``tiktoken`` downloads its
files at run time, which an offline app cannot do. The estimate
:func:`~desktop.memory.text.tokens.count_tokens` is within 3% of WordPiece on
prose but 28% under on identifier-heavy memories; WordPiece splits code at least
as finely as LLM BPE vocabularies, so its counts err on the safe side of an LLM's
budget. Without the tokenizer file, the estimate is used.

Plain ASCII text (nearly every memory) is counted here, word by word, with the
WordPiece rule itself (greedy longest match against the vocabulary, ``##`` for a
word's continuation, one ``[UNK]`` for a word it cannot split) over the vocabulary
read from the JSON file: ~10 ms, where loading the HF ``tokenizers`` package and
building its tokenizer costs 60-150 ms, which a hook process started for every
agent event cannot afford. Text the rule does not cover (non-ASCII, control
characters, the special tokens) goes to the HF tokenizer, loaded on first need.
``tests/retrieval/test_lexical.py`` checks both give the same counts.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from desktop.memory.text.tokens import count_tokens

__all__ = ["token_counts", "wordpiece_count"]

log = logging.getLogger("engram.retrieval")

# BERT's pre-tokenizer splits at whitespace and makes every punctuation character a piece of its
# own; in printable ASCII everything that is not a letter, digit or space is punctuation to it.
_ASCII_PIECES = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")
# Characters where str.split() and BERT disagree about whitespace (BERT deletes control
# characters, joining their neighbours): such texts go to the tokenizer whole.
_SPLIT_DISAGREE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x85\u2028\u2029]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_CHUNK_CACHE = 65536
_WORD_CACHE = 65536
_TEXT_CACHE = 4096
_PARALLEL_FROM = 64


@dataclass(frozen=True)
class Vocabulary:
    """What the WordPiece rule needs from ``tokenizer.json``."""

    pieces: frozenset[str]
    prefix: str  # marks a piece that continues a word ("##")
    max_chars: int  # a longer word is one [UNK]
    specials: tuple[str, ...]  # added tokens ([CLS], [PAD], ...), lower-cased: left to the tokenizer

    @cached_property
    def has_special(self) -> Callable[[str], Any]:
        """A test for whether a lower-cased text contains a special token (one regex search)."""
        pattern = "|".join(re.escape(t) for t in self.specials)
        return re.compile(pattern).search if pattern else (lambda _text: None)

    def word_count(self, word: str) -> int:
        """Tokens of one pre-tokenized, normalised word: greedy longest match, [UNK] when it fails."""
        if len(word) > self.max_chars:
            return 1
        n, start, end_all = 0, 0, len(word)
        while start < end_all:
            end = end_all
            while end > start:
                piece = word[start:end] if start == 0 else self.prefix + word[start:end]
                if piece in self.pieces:
                    break
                end -= 1
            else:
                return 1  # no piece fits: the whole word is [UNK]
            n += 1
            start = end
        return n


_lock = threading.Lock()
_vocab: Vocabulary | None = None
_tokenizer: Any = None
_failed: set[str] = set()
_chunk_counts: dict[str, int] = {}
# Whole texts are mostly new to a search (its results), their words mostly not: both are remembered.
_word_counts: dict[str, int] = {}
_text_counts: dict[str, int] = {}


def load_vocabulary() -> Vocabulary | None:
    """The bundled vocabulary (read once); None when the file is missing or not WordPiece."""
    global _vocab
    if _vocab is not None or "vocab" in _failed:
        return _vocab
    with _lock:
        if _vocab is None and "vocab" not in _failed:
            try:
                from desktop.paths import bundled_tokenizer_path

                spec = json.loads(bundled_tokenizer_path().read_text(encoding="utf-8"))
                model = spec["model"]
                if model.get("type") != "WordPiece" or (spec.get("normalizer") or {}).get("lowercase") is not True:
                    raise ValueError(f"not a lower-casing WordPiece tokenizer: {model.get('type')}")
                _vocab = Vocabulary(frozenset(model["vocab"]), str(model.get("continuing_subword_prefix", "##")),
                                    int(model.get("max_input_chars_per_word", 100)),
                                    tuple(str(t["content"]).lower() for t in spec.get("added_tokens", ())))
            except Exception as exc:  # a broken install still packs, with the tokenizer or the estimate
                log.warning("tokenizer vocabulary unavailable: %s", exc)
                _failed.add("vocab")
    return _vocab


def load_tokenizer() -> Any:
    """The HF tokenizer of the bundled model (loaded once, on first need); None when it cannot load."""
    global _tokenizer
    if _tokenizer is not None or "tokenizer" in _failed:
        return _tokenizer
    with _lock:
        if _tokenizer is None and "tokenizer" not in _failed:
            try:
                from tokenizers import Tokenizer

                from desktop.paths import bundled_tokenizer_path

                tok = Tokenizer.from_file(str(bundled_tokenizer_path()))
                tok.no_truncation()
                tok.no_padding()
                _tokenizer = tok
            except Exception as exc:  # a broken install still packs, with the estimate
                log.warning("tokenizer unavailable, packing with estimated token counts: %s", exc)
                _failed.add("tokenizer")
    return _tokenizer


def exact() -> bool:
    """True when counts are the tokenizer's (else they are the estimate)."""
    return load_vocabulary() is not None or load_tokenizer() is not None


def _words_count(vocab: Vocabulary, words: list[str]) -> int:
    """Summed WordPiece counts of pre-tokenized words, each distinct word counted once.

    The loops stay in C except over words never seen. A full cache is replaced, never
    cleared in place, so a search on another thread summing over it cannot miss a word.
    """
    global _word_counts
    cache = _word_counts
    try:
        return sum(map(cache.__getitem__, words))
    except KeyError:
        pass
    if len(cache) >= _WORD_CACHE:
        cache = _word_counts = {}
    for word in set(words).difference(cache):
        cache[word] = vocab.word_count(word)
    return sum(map(cache.__getitem__, words))


def _chunk_count(vocab: Vocabulary, chunk: str) -> int | None:
    """Tokens of one whitespace-free chunk; None when the WordPiece rule here does not cover it."""
    lowered = chunk.lower()
    if vocab.has_special(lowered):
        return None
    if chunk.isascii():
        return _words_count(vocab, _ASCII_PIECES.findall(lowered))
    # Non-ASCII punctuation (the "…" of every cut citation, dashes, curly quotes) is a word of its
    # own to BERT, so one token (its piece or [UNK]); any other non-ASCII text goes to the tokenizer.
    parts = _NON_ASCII.split(lowered)
    if not all(unicodedata.category(c).startswith("P") for c in _NON_ASCII.findall(lowered)):
        return None
    return len(parts) - 1 + _words_count(vocab, [p for part in parts for p in _ASCII_PIECES.findall(part)])


def wordpiece_count(text: str) -> int | None:
    """The tokenizer's count for ``text``, summed over its whitespace-separated chunks.

    Normalisation and pre-tokenization never cross whitespace, so the count of a
    text is the sum of its chunks' counts; each distinct chunk is counted once and
    remembered (a project's vocabulary is small). None when the vocabulary is
    missing or the text has characters the rule here leaves to the tokenizer.
    """
    vocab = load_vocabulary()
    if vocab is None or _SPLIT_DISAGREE.search(text):
        return None
    n = _text_counts.get(text)
    if n is not None:
        return n
    # Pieces never span whitespace, so a text whose only non-ASCII characters are punctuation
    # (the "…" of every cut citation) is split whole, in one regex pass: chunk by chunk cost
    # ~1 us each for the ~400 chunks of a search's results, most of them new to the chunk cache.
    lowered = text.lower()
    marks = _NON_ASCII.findall(lowered)
    if not vocab.has_special(lowered) and all(unicodedata.category(c).startswith("P") for c in marks):
        n = len(marks) + _words_count(vocab, _ASCII_PIECES.findall(lowered))
        if len(_text_counts) >= _TEXT_CACHE:
            _text_counts.clear()
        _text_counts[text] = n
        return n
    n = 0
    for chunk in text.split():
        c = _chunk_counts.get(chunk)
        if c is None:
            c = _chunk_count(vocab, chunk)
            if c is None:
                return None
            if len(_chunk_counts) >= _CHUNK_CACHE:
                _chunk_counts.clear()
            _chunk_counts[chunk] = c
        n += c
    return n


def token_counts(texts: Sequence[str]) -> list[int]:
    """Token counts of ``texts`` by the bundled real tokenizer (the estimate if it is missing)."""
    out = [wordpiece_count(t) for t in texts]
    todo = [i for i, n in enumerate(out) if n is None]
    if todo:
        tok = load_tokenizer()
        if tok is None:
            fresh = [count_tokens(texts[i]) for i in todo]
        elif len(todo) >= _PARALLEL_FROM:
            fresh = [len(e.ids) for e in tok.encode_batch([texts[i] for i in todo], add_special_tokens=False)]
        else:
            # encode_batch hands work to a thread pool; for a few short texts, waking its
            # threads on a busy 2-core machine costs more than encoding them in turn.
            fresh = [len(tok.encode(texts[i], add_special_tokens=False).ids) for i in todo]
        for i, n in zip(todo, fresh, strict=True):
            out[i] = n
    return [int(n or 0) for n in out]
