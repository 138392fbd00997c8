"""Choose the embedding provider from the settings.

Policy, in order:

1. An explicit choice (``embedding_provider`` = ``"local"`` | ``"ollama"`` |
   ``"openai"``) always wins, even when that provider is down right now:
   silently switching models would put vectors from two incomparable spaces
   into one index. The caller sees ``available() == False`` and says so.
2. Otherwise (``"auto"`` or unset) the bundled local model: it works offline,
   with no configuration and no server.
3. Only if the bundled model is missing (a broken install) *and* an Ollama
   model was configured (``ollama_model`` or ``embedding_model``) does
   auto-detection use Ollama.

Detection makes no network request, so it is cheap at start-up.

Recognised keys (all optional; values under a nested ``extra`` mapping are
read too, with lower precedence, so :class:`desktop.settings.Settings` can be
passed as ``dataclasses.asdict(settings)`` or as the dataclass itself)::

    embedding_provider   "auto" | "local" | "ollama" | "openai"
    embedding_model      model of the chosen remote provider (Ollama or OpenAI)
    local_model_path     override for model.onnx
    local_tokenizer_path override for tokenizer.json
    embedding_threads    onnxruntime intra-op threads (default 2)
    ollama_host          default http://127.0.0.1:11434
    ollama_model         overrides embedding_model for Ollama (default nomic-embed-text)
    ollama_dimensions    Matryoshka width for models that support it
    openai_base_url      default https://api.openai.com/v1
    openai_model         overrides embedding_model for OpenAI (default text-embedding-3-small)
    openai_dimensions    e.g. 1024 for text-embedding-3-*
    openai_key_name      keyring username of the key (default "openai")
    openai_require_key   False for local OpenAI-compatible servers
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from desktop.memory import secrets_store
from desktop.memory.embedding.base import EmbeddingProvider
from desktop.memory.embedding.local import LocalMiniLMProvider
from desktop.memory.embedding.ollama_provider import (
    DEFAULT_OLLAMA_HOST,
    DEFAULT_OLLAMA_MODEL,
    OllamaEmbeddingProvider,
)
from desktop.memory.embedding.openai_provider import (
    DEFAULT_OPENAI_BASE_URL,
    DEFAULT_OPENAI_MODEL,
    OpenAICompatibleEmbeddingProvider,
)

if TYPE_CHECKING:  # only named in annotations: the core does not import the app's settings
    from desktop.settings import Settings

__all__ = ["PROVIDER_CHOICES", "detect_provider"]

logger = logging.getLogger("engram.embedding")

PROVIDER_CHOICES: Final = ("auto", "local", "ollama", "openai")


def _text(settings: Mapping[str, Any], key: str, default: str | None = None) -> str | None:
    """Read a string setting; blank values count as unset."""
    value = settings.get(key)
    if value is None:
        return default
    text = str(value).strip()
    return text or default


def _int(settings: Mapping[str, Any], key: str) -> int | None:
    """Read a positive integer setting; anything else counts as unset (and is logged)."""
    value = settings.get(key)
    if value in (None, ""):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        logger.warning("ignoring setting %s=%r: not an integer", key, value)
        return None
    return number if number > 0 else None


def _flag(settings: Mapping[str, Any], key: str, default: bool) -> bool:
    """Read a boolean setting that may arrive as a string from a config file."""
    value = settings.get(key)
    if value is None:
        return default
    if isinstance(value, str):
        return value.strip().lower() not in ("0", "false", "no", "off", "")
    return bool(value)


def _flatten(settings: Mapping[str, Any] | object) -> dict[str, Any]:
    """Merge top-level settings over their ``extra`` mapping; accept the Settings dataclass."""
    if isinstance(settings, Mapping):
        top = dict(settings)
    elif dataclasses.is_dataclass(settings) and not isinstance(settings, type):
        top = dict(vars(settings))
    else:
        raise TypeError(f"settings must be a mapping, not {type(settings).__name__}")
    extra = top.get("extra")
    merged = dict(extra) if isinstance(extra, Mapping) else {}
    # Blank top-level values (the dataclass defaults "") must not hide extra's.
    merged.update({k: v for k, v in top.items() if v not in (None, "")})
    return merged


def _local(settings: Mapping[str, Any]) -> LocalMiniLMProvider:
    """Build the bundled MiniLM provider."""
    return LocalMiniLMProvider(
        _text(settings, "local_model_path"),
        _text(settings, "local_tokenizer_path"),
        intra_op_threads=_int(settings, "embedding_threads") or 1,
    )


def _ollama(settings: Mapping[str, Any]) -> OllamaEmbeddingProvider:
    """Build the Ollama provider from its settings."""
    return OllamaEmbeddingProvider(
        _text(settings, "ollama_host", DEFAULT_OLLAMA_HOST) or DEFAULT_OLLAMA_HOST,
        _text(settings, "ollama_model") or _text(settings, "embedding_model") or DEFAULT_OLLAMA_MODEL,
        dimensions=_int(settings, "ollama_dimensions"),
    )


def _openai(settings: Mapping[str, Any]) -> OpenAICompatibleEmbeddingProvider:
    """Build the OpenAI-compatible provider; its key is read from the keyring per request."""
    key_name = _text(settings, "openai_key_name", "openai") or "openai"

    def api_key() -> str | None:
        return secrets_store.get_api_key(key_name)

    return OpenAICompatibleEmbeddingProvider(
        _text(settings, "openai_base_url", DEFAULT_OPENAI_BASE_URL) or DEFAULT_OPENAI_BASE_URL,
        _text(settings, "openai_model") or _text(settings, "embedding_model") or DEFAULT_OPENAI_MODEL,
        api_key,
        dimensions=_int(settings, "openai_dimensions"),
        require_api_key=_flag(settings, "openai_require_key", True),
    )


def detect_provider(settings: Mapping[str, Any] | Settings) -> EmbeddingProvider:
    """Return the embedding provider the settings call for (see the module docstring).

    Never makes a network request; never raises for a provider that is merely
    unavailable.
    """
    settings = _flatten(settings)
    choice = (_text(settings, "embedding_provider", "auto") or "auto").lower()
    if choice not in PROVIDER_CHOICES:
        logger.warning("unknown embedding_provider %r; using auto-detection", choice)
        choice = "auto"

    provider: EmbeddingProvider
    if choice == "ollama":
        provider = _ollama(settings)
        reason = "configured"
    elif choice == "openai":
        provider = _openai(settings)
        reason = "configured"
    elif choice == "local":
        provider = _local(settings)
        reason = "configured"
    else:
        local = _local(settings)
        ollama_configured = _text(settings, "ollama_model") or _text(settings, "embedding_model")
        if local.available() or not ollama_configured:
            provider, reason = local, "default (bundled, offline)"
        else:
            logger.warning("bundled embedding model missing; falling back to configured Ollama")
            provider, reason = _ollama(settings), "bundled model missing, Ollama configured"

    if choice == "local" and not provider.available():
        # Explicit choices are kept (see module docstring); make the problem visible.
        logger.warning("configured embedding provider %s is not available", provider.model_id)
    logger.info("embedding provider: %s (%s)", provider.model_id, reason)
    return provider
