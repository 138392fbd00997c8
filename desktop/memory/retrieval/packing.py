"""Context packing: fit the best memories into a token budget, grouped by file, each with its citation.

Per phase there is a total budget and a share per memory type (the design's
table); a type's unused share is handed on in score order, so the budget is
never left empty while relevant memories wait. Overlapping items are merged
first: code chunks of the same file whose line ranges overlap, and memories
whose text contains another's.

Token counts come from a real tokenizer: the bundled WordPiece vocabulary of
the local embedding model, run by the HF ``tokenizers`` package (Rust, ~10 us
per item). No BPE vocabulary (cl100k/o200k) ships with any installed package and
``tiktoken`` downloads its files at run time, which an offline app cannot do.
The estimate :func:`count_tokens` is within 3% of WordPiece on prose but 28%
under on identifier-heavy memories; WordPiece splits code at least as finely as
LLM BPE vocabularies, so its counts are exact for a real tokenizer and err on the
safe side of an LLM's budget. Without the tokenizer file, the estimate is used.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from desktop.memory.retrieval.types import PackedContext, PackedItem, SearchResult
from desktop.memory.text.tokens import count_tokens
from desktop.memory.types import Memory

__all__ = ["DEFAULT_BUDGET", "PACKING", "pack", "token_counts"]

log = logging.getLogger("engram.retrieval")
_tokenizer: Any = None
_tokenizer_lock = threading.Lock()
_tokenizer_failed = False


def _load_tokenizer() -> Any:
    global _tokenizer, _tokenizer_failed
    if _tokenizer is not None or _tokenizer_failed:
        return _tokenizer
    with _tokenizer_lock:
        if _tokenizer is None and not _tokenizer_failed:
            try:
                from tokenizers import Tokenizer

                from desktop.memory.embedding.local import default_tokenizer_path

                tok = Tokenizer.from_file(str(default_tokenizer_path()))
                tok.no_truncation()
                tok.no_padding()
                _tokenizer = tok
            except Exception as exc:  # a broken install still packs, with the estimate
                log.warning("tokenizer unavailable, packing with estimated token counts: %s", exc)
                _tokenizer_failed = True
    return _tokenizer


def token_counts(texts: Sequence[str]) -> list[int]:
    """Token counts of ``texts`` by the bundled real tokenizer (estimate if it is missing).

    ASCII text is counted word by word with remembered word counts (:func:`_wordpiece_count`,
    identical to the tokenizer's and ~10x faster); other text goes through the tokenizer.
    """
    tok = _load_tokenizer()
    if tok is None:
        return [count_tokens(t) for t in texts]
    out = [_wordpiece_count(tok, t) for t in texts]
    todo = [i for i, n in enumerate(out) if n is None]
    if todo:
        if len(todo) >= _PARALLEL_FROM:
            fresh = [len(e.ids) for e in tok.encode_batch([texts[i] for i in todo], add_special_tokens=False)]
        else:
            # encode_batch hands work to a thread pool; for a few short texts, waking its
            # threads on a busy 2-core machine costs more than encoding them in turn.
            fresh = [len(tok.encode(texts[i], add_special_tokens=False).ids) for i in todo]
        for i, n in zip(todo, fresh, strict=True):
            out[i] = n
    return [int(n or 0) for n in out]


# BERT's pre-tokenizer splits at whitespace and makes every punctuation character a piece of its
# own; in printable ASCII everything that is not a letter, digit or space is punctuation to it.
_ASCII_PIECES = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")
# Characters where str.split() and BERT disagree about whitespace (BERT deletes control
# characters, joining their neighbours): such texts go to the tokenizer whole.
_SPLIT_DISAGREE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x85\u2028\u2029]")
_CHUNK_CACHE = 65536
_PARALLEL_FROM = 64
_chunk_counts: dict[str, int] = {}
_specials: re.Pattern[str] | None = None


def _special_tokens(tok: Any) -> re.Pattern[str]:
    """A pattern finding the tokenizer's added tokens ([CLS], [PAD], ...) in lower-cased text; built once
    (one regex search per chunk instead of a generator over the tokens)."""
    global _specials
    if _specials is None:
        try:
            words = [t.content.lower() for t in tok.get_added_tokens_decoder().values()]
        except Exception:  # an unknown tokenizer build: never take the fast path
            words = [""]
        _specials = re.compile("|".join(map(re.escape, words)) if words else "(?!)")
    return _specials


def _chunk_count(tok: Any, chunk: str) -> int:
    """Tokens of one whitespace-free chunk: WordPiece per piece for plain ASCII, else the tokenizer."""
    lowered = chunk.lower()
    if chunk.isascii() and not _special_tokens(tok).search(lowered):
        model = tok.model
        return sum(len(model.tokenize(p)) for p in _ASCII_PIECES.findall(lowered))
    return len(tok.encode(chunk, add_special_tokens=False).ids)


def _wordpiece_count(tok: Any, text: str) -> int | None:
    """The tokenizer's count for ``text``, summed over its whitespace-separated chunks.

    Normalisation and pre-tokenization never cross whitespace, so the count of a
    text is the sum of its chunks' counts; each distinct chunk is counted once and
    remembered (a project's vocabulary is small), which makes packing ~10x faster
    than re-tokenising every result. None for the rare text with characters that
    BERT and Python split differently (the caller then asks the tokenizer).
    """
    if _SPLIT_DISAGREE.search(text):
        return None
    n = 0
    for chunk in text.split():
        c = _chunk_counts.get(chunk)
        if c is None:
            c = _chunk_count(tok, chunk)
            if len(_chunk_counts) >= _CHUNK_CACHE:
                _chunk_counts.clear()
            _chunk_counts[chunk] = c
        n += c
    return n

DEFAULT_BUDGET = 2000
PACKING: dict[str, tuple[int, dict[str, float]]] = {
    "define": (2500, {"workflow_recipe": 0.30, "requirement": 0.20, "decision": 0.20, "dead_end": 0.15,
                      "task_calibration": 0.10, "other": 0.05}),
    "implement": (3000, {"gotcha": 0.30, "error_pattern": 0.25, "causal_dependency": 0.15, "pattern": 0.15,
                         "dead_end": 0.10, "other": 0.05}),
    "validate": (2500, {"error_pattern": 0.30, "requirement": 0.25, "e2e_observation": 0.25,
                        "work_unit_outcome": 0.15, "other": 0.05}),
    "refine": (2000, {"error_pattern": 0.35, "gotcha": 0.25, "dead_end": 0.20, "pattern": 0.15, "other": 0.05}),
    "explore": (2000, {"module_insight": 0.40, "decision": 0.25, "pattern": 0.20, "causal_dependency": 0.15}),
    "reflect": (1500, {"work_unit_outcome": 0.40, "task_calibration": 0.35, "dead_end": 0.15, "other": 0.10}),
}
_GENERAL = "General"


@dataclass
class _Block:
    memories: list[Memory]
    score: float
    rank: int
    file: str | None
    lines: tuple[int, int] | None = None
    parts: list[str] = field(default_factory=list)

    @property
    def type(self) -> str:
        return self.memories[0].type

    def text(self) -> str:
        cites = " ".join(m.citation() for m in self.memories)
        body = "\n".join(self.parts)
        return f"- {body} {cites}" if "\n" not in body else f"- {cites}\n{body}"


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _merge(results: Sequence[SearchResult]) -> list[_Block]:
    """One block per memory, except overlapping chunks / contained texts, which are merged."""
    blocks: list[_Block] = []
    norms: list[str] = []  # each block's normalised text, kept in step with its parts (not redone per pair)
    for rank, r in enumerate(results):
        m = r.memory
        file = m.related_files[0] if m.related_files else None
        lines = (m.chunk_start_line, m.chunk_end_line) if m.chunk_start_line and m.chunk_end_line else None
        merged = False
        mine = _norm(m.content)
        for i, b in enumerate(blocks):
            theirs = norms[i]
            if lines and b.lines and b.file == file and lines[0] <= b.lines[1] and b.lines[0] <= lines[1]:
                b.lines = (min(b.lines[0], lines[0]), max(b.lines[1], lines[1]))
                if mine not in theirs:
                    b.parts.append(m.content.strip())
                    norms[i] = _norm("\n".join(b.parts))
                b.memories.append(m)
                merged = True
                break
            if mine and (mine in theirs or theirs in mine):
                if len(mine) > len(theirs):
                    b.parts = [m.content.strip()]
                    norms[i] = _norm(b.parts[0])
                b.memories.append(m)
                merged = True
                break
        if not merged:
            blocks.append(_Block([m], r.score, rank, file, lines, [m.content.strip()]))
            norms.append(_norm(m.content.strip()))
    return blocks


def pack(results: Sequence[SearchResult], budget_tokens: int | None = None, phase: str | None = None) -> PackedContext:
    """Pack ``results`` (best first) into ``budget_tokens`` (default: the phase's budget)."""
    phase_budget, allocation = PACKING.get(phase or "", (DEFAULT_BUDGET, {"other": 1.0}))
    budget = int(budget_tokens if budget_tokens is not None else phase_budget)
    blocks = _merge(results)
    names = list({b.file: None for b in blocks})
    counted = token_counts([b.text() for b in blocks] + [f"## {f or _GENERAL}" for f in names])
    costs = {id(b): n + 1 for b, n in zip(blocks, counted, strict=False)}
    header_cost = {f: n + 1 for f, n in zip(names, counted[len(blocks):], strict=True)}
    quota = {t: share * budget for t, share in allocation.items()}

    chosen: list[_Block] = []
    taken: set[int] = set()  # by identity: _Block equality would compare whole memories
    used = 0
    files: set[str | None] = set()

    def cost_of(b: _Block) -> int:
        return costs[id(b)] + (0 if b.file in files else header_cost[b.file])

    # Pass 1: each type within its share; pass 2: leftovers in score order.
    for strict in (True, False):
        for b in blocks:
            if id(b) in taken:
                continue
            c = cost_of(b)
            if used + c > budget:
                continue
            key = b.type if b.type in quota else "other"
            if strict:
                if quota.get(key, 0.0) < c:
                    continue
                quota[key] -= c
            chosen.append(b)
            taken.add(id(b))
            files.add(b.file)
            used += c
    chosen.sort(key=lambda b: b.rank)
    groups: dict[str | None, list[_Block]] = {}
    for b in chosen:
        groups.setdefault(b.file, []).append(b)
    sections: list[str] = []
    items: list[PackedItem] = []
    for file, members in groups.items():
        lines = [f"## {file or _GENERAL}"]
        for b in members:
            text = b.text()
            lines.append(text)
            items.append(PackedItem([m.id for m in b.memories], text, costs[id(b)] - 1, file, b.type))
        sections.append("\n".join(lines))
    text = "\n\n".join(sections)
    if _load_tokenizer() is not None:
        # WordPiece splits at whitespace first, so pieces joined by newlines cost exactly the
        # sum of their counts: no second pass over the whole text.
        tokens = sum(i.tokens for i in items) + sum(header_cost[f] - 1 for f in groups)
    else:
        tokens = token_counts([text])[0] if text else 0
    while tokens > budget and items:  # the estimate of the whole may exceed the sum of the pieces
        last = items.pop()
        text = text[: text.rfind(last.text)].rstrip()
        tokens = token_counts([text])[0] if text else 0
    packed_ids = {mid for item in items for mid in item.memory_ids}
    dropped = [r.memory.id for r in results if r.memory.id not in packed_ids]
    return PackedContext(text=text, items=items, tokens=tokens, budget=budget, dropped_ids=dropped)
