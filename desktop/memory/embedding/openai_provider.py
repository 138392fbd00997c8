"""Embeddings from an OpenAI-compatible ``POST {base_url}/embeddings`` endpoint.

Works with OpenAI itself and with servers that copy its API (LM Studio,
llama.cpp, vLLM, LiteLLM, ...). The API key is fetched on each request from a
getter (normally the OS keyring, see :mod:`desktop.memory.secrets_store`) so
that a key changed in the settings is used at once and never kept in a
settings file or in this object.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

import httpx
import numpy as np

from desktop.memory.embedding.base import (
    BAD_RESPONSE,
    MODEL_MISSING,
    NO_API_KEY,
    NO_SECURE_STORE,
    PROVIDER_AUTH_FAILED,
    PROVIDER_ERROR,
    PROVIDER_RATE_LIMITED,
    PROVIDER_TIMEOUT,
    PROVIDER_UNREACHABLE,
    EmbeddingError,
    FloatMatrix,
    check_texts,
    empty_matrix,
    to_matrix,
)
from desktop.memory.privacy.boundary import redact_then_cut

__all__ = [
    "DEFAULT_OPENAI_BASE_URL",
    "DEFAULT_OPENAI_MODEL",
    "ApiKeyGetter",
    "OpenAICompatibleEmbeddingProvider",
]

logger = logging.getLogger("engram.embedding")

ApiKeyGetter = Callable[[], str | None]

DEFAULT_OPENAI_BASE_URL: Final = "https://api.openai.com/v1"
DEFAULT_OPENAI_MODEL: Final = "text-embedding-3-small"
DEFAULT_TIMEOUT_S: Final = 30.0
PROBE_TIMEOUT_S: Final = 2.0
# OpenAI accepts up to 2048 inputs per request; 128 bounds the request size and
# the work lost when one request fails.
DEFAULT_BATCH_SIZE: Final = 128
# Native widths, so `dims` needs no request for the well-known models.
_KNOWN_DIMS: Final = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
_DIMS_PROBE: Final = "dimension probe"


class OpenAICompatibleEmbeddingProvider:
    """Embeddings over the OpenAI ``/embeddings`` HTTP API, using httpx."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_getter: ApiKeyGetter,
        *,
        dimensions: int | None = None,
        require_api_key: bool = True,
        timeout: float = DEFAULT_TIMEOUT_S,
        probe_timeout: float = PROBE_TIMEOUT_S,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        """Configure the provider; no request is made until ``embed``/``available``.

        ``dimensions`` is sent to models that can shorten their vectors
        (text-embedding-3-*); ``require_api_key=False`` allows local servers that
        need no key.
        """
        model = model.strip()
        if not model:
            raise EmbeddingError(MODEL_MISSING, "no embedding model configured")
        self.base_url = (base_url.strip() or DEFAULT_OPENAI_BASE_URL).rstrip("/")
        self.model = model
        self.model_id: str = f"openai:{model}"
        self._api_key_getter = api_key_getter
        self._dimensions = dimensions
        self._require_api_key = require_api_key
        self._timeout = timeout
        self._probe_timeout = probe_timeout
        self._batch_size = max(1, batch_size)
        self._dims: int | None = dimensions or _KNOWN_DIMS.get(model)
        self._lock = threading.Lock()
        # httpx.Client is thread-safe and pools connections (TLS set-up is the
        # slow part of a small request), so one client serves every call.
        self._http = httpx.Client(timeout=timeout, follow_redirects=True)

    @property
    def dims(self) -> int:
        """Vector width: requested, well known, learnt from a response, or 0 if not yet known.

        Never makes a request (see :meth:`discover_dims`).
        """
        return self._dims or 0

    def discover_dims(self) -> int:
        """Return the vector width, embedding a probe text if it is not known yet."""
        if self._dims is None:
            self.embed([_DIMS_PROBE])
        assert self._dims is not None
        return self._dims

    def _headers(self) -> dict[str, str]:
        """Build request headers, fetching the API key from its getter."""
        try:
            key = self._api_key_getter()
        except EmbeddingError:
            raise
        except Exception as exc:
            # secrets_store errors carry their own stable code (no_secure_store, ...).
            code = getattr(exc, "code", NO_SECURE_STORE)
            raise EmbeddingError(str(code), f"cannot read the API key: {exc}") from None
        headers = {"Accept": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        elif self._require_api_key:
            raise EmbeddingError(NO_API_KEY, f"no API key stored for {self.model_id}")
        return headers

    def available(self) -> bool:
        """Return whether a key is present and the server answers quickly; never raises.

        Uses ``GET /models``, which costs nothing, instead of a paid embedding.
        """
        try:
            headers = self._headers()
            response = self._http.get(f"{self.base_url}/models", headers=headers, timeout=self._probe_timeout)
        except Exception as exc:  # any failure means "not usable now", by contract
            logger.debug("%s not available: %s", self.base_url, exc)
            return False
        # 404: some compatible servers have no /models; they are still up.
        return response.status_code < 400 or response.status_code == 404

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Embed ``texts``; raises :class:`EmbeddingError` with a stable code on failure."""
        items = check_texts(texts)
        if not items:
            return empty_matrix(self._dims or 0)
        headers = self._headers()
        parts = [
            self._embed_batch(items[i : i + self._batch_size], headers) for i in range(0, len(items), self._batch_size)
        ]
        return parts[0] if len(parts) == 1 else np.ascontiguousarray(np.concatenate(parts))

    def _embed_batch(self, batch: list[str], headers: dict[str, str]) -> FloatMatrix:
        """POST one batch and return its validated vectors in input order."""
        body: dict[str, Any] = {"model": self.model, "input": batch, "encoding_format": "float"}
        if self._dimensions:
            body["dimensions"] = self._dimensions
        started = time.perf_counter()
        try:
            response = self._http.post(f"{self.base_url}/embeddings", json=body, headers=headers)
        except httpx.ConnectTimeout:
            raise EmbeddingError(PROVIDER_UNREACHABLE, f"connecting to {self.base_url} timed out") from None
        except httpx.TimeoutException:
            raise EmbeddingError(PROVIDER_TIMEOUT, f"{self.base_url} did not answer in time") from None
        except httpx.TransportError as exc:  # refused, DNS, TLS, reset
            raise EmbeddingError(PROVIDER_UNREACHABLE, f"cannot reach {self.base_url}: {exc}") from None
        if response.status_code >= 400:
            raise self._map_status(response)
        vectors = self._parse(response, len(batch))
        matrix = to_matrix(vectors, len(batch), self.model_id)
        self._remember_dims(matrix.shape[1])
        logger.debug(
            "%s embedded %d texts in %.0f ms",
            self.model_id,
            len(batch),
            (time.perf_counter() - started) * 1000,
        )
        return matrix

    def _parse(self, response: httpx.Response, expected: int) -> list[Any]:
        """Extract ``data[*].embedding`` ordered by ``index`` from a 2xx response."""
        try:
            payload = response.json()
            data = payload["data"]
            if not isinstance(data, list):
                raise TypeError("data is not a list")
            # The API may return items out of order; `index` is authoritative.
            if all(isinstance(d, dict) and isinstance(d.get("index"), int) for d in data):
                data = sorted(data, key=lambda d: d["index"])
            return [d["embedding"] for d in data]
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError(
                BAD_RESPONSE, f"unexpected reply from {self.base_url} ({expected} texts): {exc!r}"
            ) from None

    def _map_status(self, response: httpx.Response) -> EmbeddingError:
        """Translate an HTTP error status into a stable code."""
        status = response.status_code
        detail = _error_message(response)
        if status in (401, 403):
            return EmbeddingError(PROVIDER_AUTH_FAILED, f"API key rejected ({status}): {detail}")
        if status == 429:
            return EmbeddingError(PROVIDER_RATE_LIMITED, f"rate limited: {detail}")
        if status == 404 or (status == 400 and "model" in detail.lower()):
            return EmbeddingError(MODEL_MISSING, f"model {self.model!r} rejected: {detail}")
        return EmbeddingError(PROVIDER_ERROR, f"{self.base_url} answered {status}: {detail}")

    def _remember_dims(self, dims: int) -> None:
        """Record the width on first sight; refuse a width that changes later."""
        with self._lock:
            if self._dims is None:
                self._dims = dims
                logger.info("%s returns %d-dim vectors", self.model_id, dims)
            elif self._dims != dims:
                raise EmbeddingError(BAD_RESPONSE, f"{self.model_id} returned {dims} dims, expected {self._dims}")

    def close(self) -> None:
        """Close the HTTP connection pool (safe to call twice)."""
        self._http.close()

    def __repr__(self) -> str:
        """Identify the provider in logs (never the key)."""
        return f"OpenAICompatibleEmbeddingProvider(base_url={self.base_url!r}, model={self.model!r})"


def _error_message(response: httpx.Response) -> str:
    """Return the server's error text (OpenAI puts it in ``error.message``), shortened."""
    try:
        payload = response.json()
        error = payload.get("error") if isinstance(payload, dict) else None
        message = error.get("message") if isinstance(error, dict) else error
        text = str(message) if message else response.text
    except ValueError:
        text = response.text
    return redact_then_cut(text.strip(), 300)
