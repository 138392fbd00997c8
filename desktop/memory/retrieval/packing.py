"""Context packing: fit the best memories into a token budget, grouped by file, each with its citation.

Per phase there is a total budget and a share per memory type (the design's
table); a type's unused share is handed on in score order, so the budget is
never left empty while relevant memories wait. Overlapping items are merged
first: code chunks of the same file whose line ranges overlap, and memories
whose text contains another's.

Token counts are the bundled WordPiece tokenizer's (:mod:`desktop.memory.retrieval.wordpiece`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from desktop.memory.retrieval.types import PackedContext, PackedItem, SearchResult
from desktop.memory.retrieval.wordpiece import exact, token_counts
from desktop.memory.types import Memory

__all__ = ["DEFAULT_BUDGET", "PACKING", "pack", "token_counts"]

log = logging.getLogger("engram.retrieval")

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
    block_texts = {id(b): b.text() for b in blocks}  # each built once: citations cost a few us each
    counted = token_counts([*block_texts.values()] + [f"## {f or _GENERAL}" for f in names])
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
            text = block_texts[id(b)]
            lines.append(text)
            items.append(PackedItem([m.id for m in b.memories], text, costs[id(b)] - 1, file, b.type))
        sections.append("\n".join(lines))
    text = "\n\n".join(sections)
    if exact():
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
