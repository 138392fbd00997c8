"""Embedding providers: bundled ONNX MiniLM (default), Ollama, OpenAI-compatible.

The contract and shared helpers are imported eagerly; the providers are loaded
on first access (PEP 562) because ``ollama``/``httpx``/``pydantic`` cost
noticeable import time that code needing only :func:`cache_key` should not pay.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from desktop.memory.embedding.base import EmbeddingError, EmbeddingProvider
from desktop.memory.embedding.contextual import cache_key, contextual_text

if TYPE_CHECKING:
    from desktop.memory.embedding.detect import detect_provider
    from desktop.memory.embedding.local import LocalMiniLMProvider
    from desktop.memory.embedding.ollama_provider import OllamaEmbeddingProvider
    from desktop.memory.embedding.openai_provider import OpenAICompatibleEmbeddingProvider

__all__ = [
    "EmbeddingError",
    "EmbeddingProvider",
    "LocalMiniLMProvider",
    "OllamaEmbeddingProvider",
    "OpenAICompatibleEmbeddingProvider",
    "cache_key",
    "contextual_text",
    "detect_provider",
]

_LAZY = {
    "detect_provider": "desktop.memory.embedding.detect",
    "LocalMiniLMProvider": "desktop.memory.embedding.local",
    "OllamaEmbeddingProvider": "desktop.memory.embedding.ollama_provider",
    "OpenAICompatibleEmbeddingProvider": "desktop.memory.embedding.openai_provider",
}


def __getattr__(name: str) -> Any:
    """Import a provider module the first time one of its names is used."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
