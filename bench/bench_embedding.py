"""Micro benchmark of the bundled embedding model (LocalMiniLMProvider).

Prints single-query latency (p50/p95 over many short queries, model already
loaded) and batch throughput on ~200-character texts, for the default settings
(2 intra-op threads, no thread spinning) and, for comparison, with spinning on.

Run from the repository root::

    .venv/bin/python bench/bench_embedding.py [--queries 300] [--texts 512]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from desktop.memory.embedding.local import LocalMiniLMProvider

# Vocabulary of the synthetic "memories": words an Engram memory would contain.
_VOCABULARY = """
writer thread commit transaction sqlite index vector memory retrieval fusion graph
closure table migration ledger settings keyring provider token batch cache embedding
decision gotcha convention module function class import pytest fixture timeout retry
backoff jitter socket request response schema column trigger checkpoint wal reader
"""
_WORDS = re.findall(r"\w+", _VOCABULARY)
_QUERIES = (
    "where is the retry logic",
    "how do migrations work",
    "why does the writer use one thread",
    "fts5 tokenizer for code identifiers",
    "what breaks when the keyring is locked",
)


def make_texts(count: int, length: int, seed: int = 7) -> list[str]:
    """Return ``count`` pseudo-sentences of about ``length`` characters."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        words: list[str] = []
        while sum(len(w) + 1 for w in words) < length:
            words.append(rng.choice(_WORDS))
        texts.append(" ".join(words)[:length])
    return texts


def percentile(samples: list[float], q: float) -> float:
    """Return the q-th percentile (0-100) by nearest rank."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def bench(provider: LocalMiniLMProvider, queries: int, texts: list[str]) -> dict[str, float]:
    """Measure one provider configuration."""
    started = time.perf_counter()
    provider.warm_up()
    load_ms = (time.perf_counter() - started) * 1000
    for q in _QUERIES:  # let allocators and caches settle
        provider.embed([q])
    single = []
    for i in range(queries):
        t0 = time.perf_counter()
        provider.embed([_QUERIES[i % len(_QUERIES)]])
        single.append((time.perf_counter() - t0) * 1000)
    provider.embed(texts[:32])
    t0 = time.perf_counter()
    provider.embed(texts)
    batch_s = time.perf_counter() - t0
    return {
        "load_ms": load_ms,
        "p50": statistics.median(single),
        "p95": percentile(single, 95),
        "tps": len(texts) / batch_s,
    }


def main() -> None:
    """Run the benchmark and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--texts", type=int, default=512)
    parser.add_argument("--chars", type=int, default=200)
    args = parser.parse_args()
    texts = make_texts(args.texts, args.chars)

    configs = [
        ("default (2 threads, no spin)", LocalMiniLMProvider()),
        ("2 threads, spinning", LocalMiniLMProvider(allow_spinning=True)),
        ("1 thread", LocalMiniLMProvider(intra_op_threads=1)),
    ]
    print(
        f"# local:all-minilm-l6-v2-int8 on {platform.machine()} ({os.cpu_count()} CPUs), "
        f"Python {platform.python_version()}"
    )
    print(f"# {args.queries} single short queries; batch = {len(texts)} texts x {args.chars} chars\n")
    print("| config | first load ms | single p50 ms | single p95 ms | batch texts/s |")
    print("|---|---:|---:|---:|---:|")
    for name, provider in configs:
        r = bench(provider, args.queries, texts)
        print(f"| {name} | {r['load_ms']:.0f} | {r['p50']:.2f} | {r['p95']:.2f} | {r['tps']:.0f} |")


if __name__ == "__main__":
    main()
