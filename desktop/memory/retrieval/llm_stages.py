"""Optional LLM stages: a listwise reranker and the HyDE query writer.

The protocols and the Ollama stages live here; a reranker on the user's cloud chat
model comes from the agents' model factory (``desktop.agents.model_factory``), which
knows the chat providers. Both are off unless an LLM is configured. Each has a hard timeout, and any
failure (server down, model missing, slow, unparsable reply) raises
:class:`StageUnavailable`, which the pipeline turns into "stage skipped":
an optional stage can make a search better, never make it fail.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import ollama

__all__ = ["HydeWriter", "OllamaHyde", "OllamaReranker", "Reranker", "StageUnavailable",
           "call_failed", "parse_order", "rerank_prompt"]

log = logging.getLogger("engram.retrieval")

_NUMBERS = re.compile(r"\d+")
_MAX_DOC_CHARS = 400


class StageUnavailable(Exception):
    """An optional stage could not run now (the search goes on without it)."""


class Reranker(Protocol):
    """Re-orders the top candidates of a query; returns their indexes, best first."""

    name: str

    def rerank(self, query: str, documents: Sequence[str]) -> list[int]:
        """Indexes into ``documents``, most relevant first (may omit irrelevant ones)."""
        ...


class HydeWriter(Protocol):
    """Writes a hypothetical memory that would answer the query (HyDE)."""

    name: str

    def write(self, query: str) -> str:
        """A short passage answering ``query`` as a memory would."""
        ...


def _client(host: str, timeout: float) -> ollama.Client:
    import ollama  # imported lazily: the pipeline without an LLM never pays for it

    return ollama.Client(host=host, timeout=timeout)


def call_failed(exc: Exception, what: str) -> StageUnavailable:
    log.info("%s skipped: %s", what, exc)
    return StageUnavailable(f"{what}: {type(exc).__name__}: {exc}")


def rerank_prompt(query: str, documents: Sequence[str]) -> str:
    """The listwise ranking prompt: numbered passages, a JSON list of numbers back."""
    listing = "\n".join(f"[{i + 1}] {' '.join(d.split())[:_MAX_DOC_CHARS]}" for i, d in enumerate(documents))
    return (f"Query: {query}\n\nPassages:\n{listing}\n\nRank the passages by how well they answer the "
            "query. Reply with only a JSON list of passage numbers, most relevant first.")


def parse_order(text: str, n: int) -> list[int]:
    """0-based passage indexes from a reply (a JSON list, else every number in it); raises when none."""
    order: list[int] = []
    try:
        parsed = json.loads(text)
        numbers = [int(x) for x in parsed] if isinstance(parsed, list) else []
    except (ValueError, TypeError):
        numbers = [int(x) for x in _NUMBERS.findall(text)]
    for num in numbers:
        if 1 <= num <= n and num - 1 not in order:
            order.append(num - 1)
    if not order:
        raise StageUnavailable("rerank: reply had no passage numbers")
    return order


class _OllamaStage:
    """An optional stage served by a model on an Ollama server (one HTTP client, closable)."""

    def __init__(self, host: str, model: str, *, timeout: float) -> None:
        """Configure; no request is made until the stage is used."""
        self.host = host
        self.model = model
        self._client = _client(host, timeout)

    def close(self) -> None:
        """Close the Ollama client's HTTP connections."""
        inner = getattr(self._client, "_client", None)  # ollama.Client keeps an httpx.Client there
        if inner is not None:
            inner.close()


class OllamaReranker(_OllamaStage):
    """Listwise reranking by a chat model through Ollama's ``/api/chat``."""

    name = "ollama-rerank"

    def __init__(self, host: str, model: str, *, timeout: float = 2.0) -> None:
        """Configure; no request is made until :meth:`rerank`."""
        super().__init__(host, model, timeout=timeout)

    def rerank(self, query: str, documents: Sequence[str]) -> list[int]:
        """Ask the model for the passage numbers in order of relevance."""
        prompt = rerank_prompt(query, documents)
        try:
            reply = self._client.chat(model=self.model, messages=[{"role": "user", "content": prompt}],
                                      options={"temperature": 0})
            text = reply.message.content or ""
        except Exception as exc:  # any failure means "skip this stage"
            raise call_failed(exc, "rerank") from None
        return parse_order(text, len(documents))


class OllamaHyde(_OllamaStage):
    """HyDE through Ollama's ``/api/generate``: a two-sentence hypothetical memory."""

    name = "ollama-hyde"

    def __init__(self, host: str, model: str, *, timeout: float = 3.0) -> None:
        """Configure; no request is made until :meth:`write`."""
        super().__init__(host, model, timeout=timeout)

    def write(self, query: str) -> str:
        """Generate the passage; raises StageUnavailable on any failure."""
        prompt = f'Write a 2-sentence memory about a codebase that would perfectly answer: "{query}"'
        try:
            reply = self._client.generate(model=self.model, prompt=prompt, options={"temperature": 0,
                                                                                    "num_predict": 100})
            text = (reply.response or "").strip()
        except Exception as exc:  # any failure means "skip this stage"
            raise call_failed(exc, "hyde") from None
        if not text:
            raise StageUnavailable("hyde: empty reply")
        return text
