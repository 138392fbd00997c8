"""Word the core's known errors as the one line the `engram` command promises.

The core raises typed errors with stable codes (``EngramError`` and its
subclasses, ``EmbeddingError``, ``SecretStoreError``, ``TranscriptImportError``);
the CLI turns each into one line on stderr and an exit status, never a
traceback. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

from desktop.memory.embedding.base import (
    MODEL_MISSING,
    NO_API_KEY,
    NO_SECURE_STORE,
    PROVIDER_AUTH_FAILED,
    PROVIDER_RATE_LIMITED,
    PROVIDER_TIMEOUT,
    PROVIDER_UNREACHABLE,
    EmbeddingError,
)
from desktop.memory.observer.records import TranscriptImportError
from desktop.memory.secrets_store import SecretStoreError
from desktop.memory.store.errors import EngramError

__all__ = ["KNOWN_ERRORS", "known_error_line"]

KNOWN_ERRORS: tuple[type[Exception], ...] = (EngramError, EmbeddingError, SecretStoreError, TranscriptImportError)

# What the user can do about each embedding failure; the error's own message says what failed.
_EMBEDDING_HINTS = {
    MODEL_MISSING: "The embedding model could not be loaded; `engram doctor` checks the installation "
                   "(reinstalling Engram restores the bundled model).",
    PROVIDER_UNREACHABLE: "The embedding server cannot be reached; is it running?",
    PROVIDER_TIMEOUT: "The embedding server did not answer in time.",
    PROVIDER_AUTH_FAILED: "The embedding server refused the API key.",
    PROVIDER_RATE_LIMITED: "The embedding server is rate-limiting requests; try again later.",
    NO_API_KEY: "No API key is stored for the embedding provider.",
    NO_SECURE_STORE: "No secure key store is available on this system for the API key.",
}


def _one_line(text: str) -> str:
    """Collapse a message onto one line (paths and server replies may carry newlines)."""
    return " ".join(str(text).split())


def known_error_line(exc: BaseException) -> str | None:
    """Return the one-line message for a known error, or None for anything else (a bug)."""
    if isinstance(exc, EngramError):
        hint = (" Nothing was changed; `engram doctor --move-aside` keeps it renamed and starts an empty memory."
                if exc.code == "corrupt_database" else "")
        return _one_line(f"{exc}{hint}")
    if isinstance(exc, EmbeddingError):
        hint = _EMBEDDING_HINTS.get(exc.code, "Embedding failed.")
        detail = exc.message if exc.message != exc.code else ""
        return _one_line(f"{hint} ({exc.code}{': ' + detail if detail else ''})")
    if isinstance(exc, SecretStoreError | TranscriptImportError):
        return _one_line(f"{exc} ({exc.code})")
    return None
