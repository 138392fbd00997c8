"""Embeddings from a local Ollama server, through the official ``ollama`` client.

Used only when the user configures it (e.g. ``nomic-embed-text`` or
``qwen3-embedding``): better models than the bundled MiniLM, but they need a
running server and a pulled model, so nothing here is ever chosen implicitly.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import Final

import httpx
import numpy as np
import ollama
import pydantic

from desktop.memory.embedding.base import (
    BAD_RESPONSE,
    MODEL_MISSING,
    PROVIDER_ERROR,
    PROVIDER_TIMEOUT,
    PROVIDER_UNREACHABLE,
    EmbeddingError,
    FloatMatrix,
    check_texts,
    empty_matrix,
    to_matrix,
)

__all__ = ["DEFAULT_OLLAMA_HOST", "DEFAULT_OLLAMA_MODEL", "OllamaEmbeddingProvider"]

logger = logging.getLogger("engram.embedding")

DEFAULT_OLLAMA_HOST: Final = "http://127.0.0.1:11434"
DEFAULT_OLLAMA_MODEL: Final = "nomic-embed-text"
# Generous: the first call may load the model into memory (seconds on a laptop).
DEFAULT_TIMEOUT_S: Final = 60.0
# available() runs on UI-adjacent paths; a dead host must answer within this.
PROBE_TIMEOUT_S: Final = 1.5
# Ollama batches internally; 64 keeps one request's JSON small and a failure cheap.
DEFAULT_BATCH_SIZE: Final = 64
_DIMS_PROBE: Final = "dimension probe"


def _same_model(listed: str, wanted: str) -> bool:
    """Match Ollama model names, where ``name`` means ``name:latest``."""

    def full(name: str) -> str:
        return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"

    return full(listed) == full(wanted)


class OllamaEmbeddingProvider:
    """Embeddings via Ollama's ``/api/embed``; ``dims`` comes from the first response."""

    def __init__(
        self,
        host: str = DEFAULT_OLLAMA_HOST,
        model: str = DEFAULT_OLLAMA_MODEL,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        probe_timeout: float = PROBE_TIMEOUT_S,
        batch_size: int = DEFAULT_BATCH_SIZE,
        dimensions: int | None = None,
        keep_alive: str | None = None,
    ) -> None:
        """Configure the provider; no request is made until ``embed``/``available``.

        ``dimensions`` asks Matryoshka models (qwen3-embedding) for shorter
        vectors; ``keep_alive`` (e.g. ``"10m"``) keeps the model loaded.
        """
        model = model.strip()
        if not model:
            raise EmbeddingError(MODEL_MISSING, "no Ollama embedding model configured")
        self.host = host.strip() or DEFAULT_OLLAMA_HOST
        self.model = model
        self.model_id: str = f"ollama:{model}"
        self._client = ollama.Client(host=self.host, timeout=timeout)
        # A separate client so that the quick probe never waits behind the long
        # embedding timeout (and never shares its connection pool).
        self._probe = ollama.Client(host=self.host, timeout=probe_timeout)
        self._batch_size = max(1, batch_size)
        self._dimensions = dimensions
        self._keep_alive = keep_alive
        self._dims: int | None = None
        self._dims_lock = threading.Lock()

    @property
    def dims(self) -> int:
        """Vector width, or 0 until the first response (see :meth:`discover_dims`).

        Never makes a request: attribute access must stay cheap and safe (a
        runtime Protocol ``isinstance`` check reads it, too).
        """
        return self._dims or 0

    def discover_dims(self) -> int:
        """Return the vector width, embedding a probe text if none has been seen yet.

        Raises :class:`EmbeddingError` when the server cannot be reached.
        """
        if self._dims is None:
            self.embed([_DIMS_PROBE])
        assert self._dims is not None
        return self._dims

    def available(self) -> bool:
        """Return whether the server answers quickly and has the model pulled; never raises."""
        try:
            listed = self._probe.list()
        except Exception as exc:  # any failure means "not usable now", by contract
            logger.debug("ollama at %s not available: %s", self.host, exc)
            return False
        names = [m.model or "" for m in listed.models]
        if any(_same_model(name, self.model) for name in names):
            return True
        # debug, not info: the UI may poll available() every few seconds.
        logger.debug("ollama at %s is up but model %s is not pulled", self.host, self.model)
        return False

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Embed ``texts``; raises :class:`EmbeddingError` with a stable code on failure."""
        items = check_texts(texts)
        if not items:
            return empty_matrix(self._dims or 0)
        parts = [self._embed_batch(items[i : i + self._batch_size]) for i in range(0, len(items), self._batch_size)]
        if len(parts) == 1:
            return parts[0]
        return np.ascontiguousarray(np.concatenate(parts, axis=0))

    def _embed_batch(self, batch: list[str]) -> FloatMatrix:
        """Send one ``/api/embed`` request and validate its vectors."""
        started = time.perf_counter()
        try:
            response = self._client.embed(
                model=self.model,
                input=batch,
                # Ollama cuts inputs longer than the model's context instead of failing.
                truncate=True,
                dimensions=self._dimensions,
                keep_alive=self._keep_alive,
            )
            vectors = response.embeddings
        except ollama.ResponseError as exc:
            raise self._map_response_error(exc) from None
        except ConnectionError as exc:  # the client turns httpx.ConnectError into this
            raise EmbeddingError(PROVIDER_UNREACHABLE, f"cannot connect to Ollama at {self.host}: {exc}") from None
        except httpx.ConnectTimeout:
            raise EmbeddingError(PROVIDER_UNREACHABLE, f"connecting to Ollama at {self.host} timed out") from None
        except httpx.TimeoutException:
            raise EmbeddingError(PROVIDER_TIMEOUT, f"Ollama at {self.host} did not answer in time") from None
        except httpx.TransportError as exc:
            raise EmbeddingError(PROVIDER_UNREACHABLE, f"transport error talking to Ollama: {exc}") from None
        except (pydantic.ValidationError, ValueError) as exc:  # non-JSON or wrong shape
            raise EmbeddingError(BAD_RESPONSE, f"unexpected reply from Ollama: {exc}") from None
        matrix = to_matrix(vectors, len(batch), "ollama")
        self._remember_dims(matrix.shape[1])
        logger.debug("ollama embedded %d texts in %.0f ms", len(batch), (time.perf_counter() - started) * 1000)
        return matrix

    def _remember_dims(self, dims: int) -> None:
        """Record the width on first sight; a later change means the model was swapped."""
        with self._dims_lock:
            if self._dims is None:
                self._dims = dims
                logger.info("%s returns %d-dim vectors", self.model_id, dims)
            elif self._dims != dims:
                # Mixing widths would corrupt the vector index: refuse loudly.
                raise EmbeddingError(
                    BAD_RESPONSE,
                    f"{self.model_id} changed width from {self._dims} to {dims}",
                )

    def _map_response_error(self, exc: ollama.ResponseError) -> EmbeddingError:
        """Translate an HTTP error from Ollama into a stable code."""
        text = str(exc.error).lower()
        if exc.status_code == 404 or ("model" in text and "not found" in text):
            return EmbeddingError(MODEL_MISSING, f"Ollama has no model {self.model!r} (run `ollama pull`): {exc}")
        if exc.status_code == 400 and "does not support" in text:
            # e.g. a chat model configured as the embedding model.
            return EmbeddingError(MODEL_MISSING, f"{self.model!r} cannot embed: {exc}")
        return EmbeddingError(PROVIDER_ERROR, f"Ollama error: {exc}")

    def close(self) -> None:
        """Close the HTTP connections (safe to call twice)."""
        self._client.close()
        self._probe.close()

    def __repr__(self) -> str:
        """Identify the provider in logs."""
        return f"OllamaEmbeddingProvider(host={self.host!r}, model={self.model!r})"
