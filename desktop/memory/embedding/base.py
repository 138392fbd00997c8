"""The contract every embedding provider meets, and the helpers they share.

A provider turns texts into unit-length float32 vectors. Vectors from different
``model_id``s live in different spaces and must never be compared, which is
why the id is stable and carried by every stored embedding.

Providers are plain Python: they never import Qt and never touch the database
(the cache and the re-embedding job wrap them from outside).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Final, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from desktop.memory.store.errors import EngramError

__all__ = [
    "BAD_RESPONSE",
    "EMBEDDING_CODES",
    "INVALID_INPUT",
    "MODEL_MISSING",
    "NO_API_KEY",
    "NO_SECURE_STORE",
    "PROVIDER_AUTH_FAILED",
    "PROVIDER_ERROR",
    "PROVIDER_RATE_LIMITED",
    "PROVIDER_TIMEOUT",
    "PROVIDER_UNREACHABLE",
    "EmbeddingError",
    "EmbeddingProvider",
    "FloatMatrix",
    "check_texts",
    "empty_matrix",
    "l2_normalize",
    "to_matrix",
]

logger = logging.getLogger("engram.embedding")

FloatMatrix = npt.NDArray[np.float32]

# Stable error codes: the UI/CLI words them, tests and callers branch on them.
# One code per condition across the app: the agent runtime uses the same three
# (provider_unreachable, missing_api_key, model_not_found).
PROVIDER_UNREACHABLE: Final = "provider_unreachable"
PROVIDER_TIMEOUT: Final = "provider_timeout"
PROVIDER_AUTH_FAILED: Final = "provider_auth_failed"
PROVIDER_RATE_LIMITED: Final = "provider_rate_limited"
PROVIDER_ERROR: Final = "provider_error"
BAD_RESPONSE: Final = "bad_response"
NO_API_KEY: Final = "missing_api_key"
NO_SECURE_STORE: Final = "no_secure_store"
MODEL_MISSING: Final = "model_not_found"
INVALID_INPUT: Final = "invalid_input"

EMBEDDING_CODES: Final = frozenset(
    {
        PROVIDER_UNREACHABLE,
        PROVIDER_TIMEOUT,
        PROVIDER_AUTH_FAILED,
        PROVIDER_RATE_LIMITED,
        PROVIDER_ERROR,
        BAD_RESPONSE,
        NO_API_KEY,
        NO_SECURE_STORE,
        MODEL_MISSING,
        INVALID_INPUT,
    }
)


class EmbeddingError(EngramError):
    """An embedding failure the user or caller can act on, with a stable ``code``.

    An :class:`EngramError` like every other known failure; the message is for logs,
    the UI and CLI word the error from ``code`` alone.
    """

    def __init__(self, code: str, message: str = "") -> None:
        """Create an error with a stable ``code`` (one of :data:`EMBEDDING_CODES`)."""
        super().__init__(message or code, code=code)
        self.message = message or code

    def __repr__(self) -> str:
        """Show the code first: it is what callers match on."""
        return f"EmbeddingError({self.code!r}, {self.message!r})"


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Something that embeds texts into one fixed vector space.

    * ``model_id`` is stable across runs and machines (``"local:..."``,
      ``"ollama:<model>"``, ``"openai:<model>"``) because stored vectors are
      keyed by it.
    * ``dims`` is the vector width. Remote providers may only learn it from
      their first response and report 0 until then; reading it never makes a
      request (remote providers offer ``discover_dims()`` for that).
    * ``embed`` returns float32, shape ``(len(texts), dims)``, rows L2-normalised,
      in input order; it raises :class:`EmbeddingError` and nothing else for
      provider problems.
    * ``available`` answers quickly and never raises.
    """

    model_id: str

    @property
    def dims(self) -> int:
        """Width of the vectors this provider returns (0 while still unknown)."""
        ...

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Embed ``texts`` into an ``(n, dims)`` float32 matrix of unit rows."""
        ...

    def available(self) -> bool:
        """Return whether :meth:`embed` is expected to work right now."""
        ...


def check_texts(texts: Sequence[str]) -> list[str]:
    """Validate the input of ``embed`` and return it as a list.

    A bare ``str`` is rejected because iterating it would embed single
    characters, a silent and expensive mistake.
    """
    if isinstance(texts, str):
        raise EmbeddingError(INVALID_INPUT, "embed() takes a sequence of texts, not a str")
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise EmbeddingError(INVALID_INPUT, f"text #{i} is {type(text).__name__}, not str")
    return out


def empty_matrix(dims: int) -> FloatMatrix:
    """Return the ``(0, dims)`` result of embedding no texts."""
    return np.zeros((0, max(dims, 0)), dtype=np.float32)


def l2_normalize(matrix: npt.ArrayLike) -> FloatMatrix:
    """Return ``matrix`` as float32 with each row scaled to unit length.

    All-zero rows stay zero rather than becoming NaN, so one degenerate vector
    never poisons a similarity search.
    """
    arr = np.asarray(matrix, dtype=np.float32)
    if arr.ndim != 2:
        raise EmbeddingError(BAD_RESPONSE, f"expected a 2-D matrix, got shape {arr.shape}")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    np.maximum(norms, np.float32(1e-12), out=norms)
    return np.ascontiguousarray(arr / norms, dtype=np.float32)


def to_matrix(vectors: object, expected_rows: int, source: str) -> FloatMatrix:
    """Turn a provider's list of vectors into a normalised float32 matrix.

    Remote providers are not trusted: a wrong row count, ragged rows, empty
    vectors or non-finite values raise ``bad_response`` instead of being stored.
    """
    if not isinstance(vectors, Sequence) or isinstance(vectors, (str, bytes)):
        raise EmbeddingError(BAD_RESPONSE, f"{source}: embeddings are not a list")
    if len(vectors) != expected_rows:
        raise EmbeddingError(BAD_RESPONSE, f"{source}: got {len(vectors)} vectors for {expected_rows} texts")
    if expected_rows == 0:
        return empty_matrix(0)
    try:
        arr = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(BAD_RESPONSE, f"{source}: malformed vectors ({exc})") from None
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise EmbeddingError(BAD_RESPONSE, f"{source}: vectors have shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise EmbeddingError(BAD_RESPONSE, f"{source}: vectors contain NaN or infinity")
    return l2_normalize(arr)
