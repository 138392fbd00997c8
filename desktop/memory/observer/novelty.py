"""The novelty filter: is a candidate memory already known (cosine > 0.88)?

Behind a small interface so promotion does not care which embedder runs: the
app passes its EmbeddingProvider (the bundled MiniLM by default); tests and
benchmarks may pass :class:`HashingEmbedder`, which is instant and needs no
model. Vectors of existing memories are cached by text, so each session embeds
only what it has not seen, in one batch, before any transaction opens.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import re
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Final, Protocol

import numpy as np

logger = logging.getLogger("engram.observer")

NOVELTY_THRESHOLD: Final = 0.88
_CACHE_LIMIT: Final = 20_000


class Embedder(Protocol):
    """The part of EmbeddingProvider the novelty filter needs."""

    @property
    def model_id(self) -> str:
        """Stable id of the vector space."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""


class HashingEmbedder:
    """A dependency-free bag-of-words embedder (hashed unigrams and bigrams, L2-normalised).

    Good enough to catch near-identical sentences; used in tests and when no
    embedding model is available, so novelty still works offline.
    """

    model_id = "hashing:bow-512"
    dims = 512

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts into the hashed space."""
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for i, text in enumerate(texts):
            words = re.findall(r"\w+", text.lower())
            for tok in words + [a + " " + b for a, b in itertools.pairwise(words)]:
                h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=4).digest(), "little")
                out[i, h % self.dims] += 1.0 if h & 1 << 31 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms


class Novelty:
    """Finds, for each candidate text, an existing memory it nearly repeats."""

    def __init__(self, embedder: Any, threshold: float = NOVELTY_THRESHOLD) -> None:
        """``embedder`` is any object with ``model_id`` and ``embed(texts) -> ndarray``."""
        self.embedder = embedder
        self.threshold = threshold
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self.embed_calls = 0
        self.last_vectors: dict[str, np.ndarray] = {}

    def match(self, candidates: list[str], existing: list[tuple[int, str]]) -> list[int | None]:
        """For each candidate: the id of an existing memory with cosine > threshold, or None.

        A candidate that nearly repeats an earlier candidate of the same batch gets
        ``-1 - index`` of that candidate, so the caller can fold them together.
        Everything not cached is embedded in one call.
        """
        if not candidates:
            return []
        todo = [t for t in dict.fromkeys([*candidates, *(t for _, t in existing)]) if t not in self._cache]
        if todo:
            try:
                vecs = np.asarray(self.embedder.embed(todo), dtype=np.float32)
                self.embed_calls += 1
            except Exception:  # no model: fall back to exact-fingerprint dedup only
                logger.exception("novelty embedding failed; only exact duplicates are caught")
                return [None] * len(candidates)
            for text, vec in zip(todo, vecs, strict=True):
                self._cache[text] = vec
            while len(self._cache) > _CACHE_LIMIT:
                self._cache.popitem(last=False)
        self.last_vectors = {t: self._cache[t] for t in candidates}
        cand = np.stack([self._cache[t] for t in candidates])
        out: list[int | None] = [None] * len(candidates)
        if existing:
            ex = np.stack([self._cache[t] for _, t in existing])
            sims = cand @ ex.T
            best = sims.argmax(axis=1)
            for i, j in enumerate(best):
                if sims[i, j] > self.threshold:
                    out[i] = existing[int(j)][0]
        inner = cand @ cand.T
        for i in range(len(candidates)):
            if out[i] is None:
                for j in range(i):
                    if inner[i, j] > self.threshold:
                        # Follow j to whatever it already folds into (an existing memory or an earlier one).
                        out[i] = out[j] if out[j] is not None else -1 - j
                        break
        return out
