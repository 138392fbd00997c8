"""Packing budgets, citations, merging, grouping; SLO degradation and recovery."""

from __future__ import annotations

from desktop.memory.retrieval.packing import PACKING, pack, token_counts
from desktop.memory.retrieval.slo import SloMonitor
from desktop.memory.retrieval.types import Explanation, SearchResult
from desktop.memory.text.tokens import count_tokens
from desktop.memory.types import Memory


def result(mid: int, content: str, *, type_: str = "gotcha", files: tuple[str, ...] = (), score: float = 1.0,
           lines: tuple[int, int] | None = None) -> SearchResult:
    m = Memory(mid, type_, content, related_files=list(files))
    if lines:
        m.chunk_start_line, m.chunk_end_line = lines
    return SearchResult(m, score, Explanation())


def test_pack_respects_budget_and_cites_every_item():
    results = [result(i, f"memory number {i} says something about the billing retry logic " * 3,
                      files=(f"billing/f{i % 3}.py",), score=1 - i / 100) for i in range(1, 40)]
    packed = pack(results, 300)
    assert 0 < packed.tokens <= 300 and token_counts([packed.text])[0] == packed.tokens
    # The estimate agrees with the real tokenizer on this prose-like text within 10%.
    assert abs(count_tokens(packed.text) - packed.tokens) <= 0.1 * packed.tokens
    for item in packed.items:
        for mid in item.memory_ids:
            assert f"[Memory #{mid}:" in packed.text
    assert packed.dropped_ids  # not everything fits
    # Grouped by file: one header per file.
    headers = [line for line in packed.text.splitlines() if line.startswith("## ")]
    assert len(headers) == len(set(headers)) == len({i.file for i in packed.items})
    # Best results are the ones kept.
    assert packed.memory_ids[0] == 1


def test_per_phase_budget_and_type_allocation():
    results = [result(i, f"note {i} " + "filler text " * 20, type_="note", score=2 - i / 100) for i in range(1, 30)]
    results += [result(100 + i, f"gotcha {i} " + "filler text " * 20, type_="gotcha", score=1 - i / 100)
                for i in range(1, 30)]
    packed = pack(results, None, "implement")
    assert packed.budget == PACKING["implement"][0] and packed.tokens <= packed.budget
    gotcha_ids = [m for m in packed.memory_ids if m >= 100]
    # gotchas have a 30% share in implement although every note scored higher.
    assert gotcha_ids and sum(i.tokens for i in packed.items if i.type == "gotcha") >= 0.25 * packed.budget


def test_overlapping_items_are_merged():
    results = [result(1, "def a():\n    return 1", type_="code", files=("m.py",), lines=(1, 10)),
               result(2, "def b():\n    return 2", type_="code", files=("m.py",), lines=(5, 20)),
               result(3, "always close the pool"), result(4, "Always close the pool!")]
    packed = pack(results, 500)
    groups = {tuple(i.memory_ids) for i in packed.items}
    assert (1, 2) in groups and (3, 4) in groups


def test_slo_degrades_and_recovers():
    slo = SloMonitor(budget_ms=50, window=20, min_samples=5)
    for _ in range(4):
        slo.record(500)
    assert not slo.degraded  # too few samples to judge
    slo.record(500)
    assert slo.degraded and not slo.limits().rerank and slo.limits().candidates < 50
    for _ in range(20):
        slo.record(5)
    assert not slo.degraded and slo.transitions == 2
