"""Word the core's known errors as the one line the `engram` command promises.

The core raises typed errors with stable codes (``EngramError`` and its
subclasses, ``EmbeddingError``, ``SecretStoreError``, ``TranscriptImportError``);
the CLI turns each into one line on stderr and an exit status, never a
traceback. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import sys

from desktop.memory.store.errors import EngramError

__all__ = ["known_error_line"]

# Where the other known error classes live. They are looked up among the modules already
# loaded: an error class whose module was never imported cannot have been raised, and not
# importing them keeps `engram list` from loading numpy (embedding) or keyring (secrets).
_KNOWN_ELSEWHERE = (("desktop.memory.embedding.base", "EmbeddingError"),
                    ("desktop.memory.secrets_store", "SecretStoreError"),
                    ("desktop.memory.observer.records", "TranscriptImportError"))


def _loaded(module: str, name: str) -> type | None:
    mod = sys.modules.get(module)
    cls = getattr(mod, name, None) if mod is not None else None
    return cls if isinstance(cls, type) else None


# What the user can do about each embedding failure; the error's own message says what failed.
_EMBEDDING_HINTS = {
    "model_not_found": "The embedding model could not be loaded; `engram doctor` checks the installation "
                   "(reinstalling Engram restores the bundled model).",
    "provider_unreachable": "The embedding server cannot be reached; is it running?",
    "provider_timeout": "The embedding server did not answer in time.",
    "provider_auth_failed": "The embedding server refused the API key.",
    "provider_rate_limited": "The embedding server is rate-limiting requests; try again later.",
    "missing_api_key": "No API key is stored for the embedding provider.",
    "no_secure_store": "No secure key store is available on this system for the API key.",
}


def _one_line(text: str) -> str:
    """Collapse a message onto one line (paths and server replies may carry newlines)."""
    return " ".join(str(text).split())


def known_error_line(exc: BaseException) -> str | None:
    """Return the one-line message for a known error, or None for anything else (a bug)."""
    # An EmbeddingError is an EngramError too: its own hints (what to check) come first.
    embedding = _loaded(*_KNOWN_ELSEWHERE[0])
    if embedding is not None and isinstance(exc, embedding):
        code, message = str(getattr(exc, "code", "")), str(getattr(exc, "message", ""))
        hint = _EMBEDDING_HINTS.get(code, "Embedding failed.")
        detail = message if message != code else ""
        return _one_line(f"{hint} ({code}{': ' + detail if detail else ''})")
    if isinstance(exc, EngramError):
        from desktop.cli.words import word

        hint = (" Nothing was changed; `engram doctor --move-aside` keeps it renamed and starts an empty memory."
                if exc.code == "corrupt_database" else "")
        said = word(exc.code, str(exc))
        detail = f" ({exc})" if said != str(exc) and exc.code not in ("corrupt_database", "disk_full") else ""
        return _one_line(f"{said}{detail}{hint}")
    if isinstance(exc, OSError):  # a write outside the database (a settings or log file) on a full disk
        from desktop.memory.store.errors import os_error

        known = os_error(exc, getattr(exc, "filename", "") or "")
        return known_error_line(known) if known is not exc else None
    others = tuple(c for c in (_loaded(*k) for k in _KNOWN_ELSEWHERE[1:]) if c is not None)
    if others and isinstance(exc, others):
        return _one_line(f"{exc} ({getattr(exc, 'code', '')})")
    return None
