"""Provider auto-detection: explicit choice wins, the bundled model is the default."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from desktop.memory import secrets_store
from desktop.memory.embedding.detect import detect_provider
from desktop.memory.embedding.local import LocalMiniLMProvider
from desktop.memory.embedding.ollama_provider import OllamaEmbeddingProvider
from desktop.memory.embedding.openai_provider import OpenAICompatibleEmbeddingProvider
from tests.support.fake_embedding_api import FakeServer
from tests.support.keyrings import MemoryKeyring


def test_default_is_the_bundled_model(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="engram.embedding"):
        provider = detect_provider({})
    assert isinstance(provider, LocalMiniLMProvider)
    assert provider.available()
    assert any("local:all-minilm-l6-v2-int8" in r.getMessage() for r in caplog.records)
    assert all(r.name == "engram.embedding" for r in caplog.records)


def test_auto_ignores_a_running_ollama_unless_chosen(fake_ollama: FakeServer) -> None:
    provider = detect_provider({"embedding_provider": "auto", "ollama_host": fake_ollama.url})
    assert isinstance(provider, LocalMiniLMProvider)
    assert fake_ollama.requests == []  # detection never touches the network


def test_explicit_ollama(fake_ollama: FakeServer) -> None:
    provider = detect_provider(
        {"embedding_provider": "ollama", "ollama_host": fake_ollama.url, "embedding_model": "nomic-embed-text"}
    )
    assert isinstance(provider, OllamaEmbeddingProvider)
    assert provider.model_id == "ollama:nomic-embed-text"
    assert provider.embed(["x"]).shape == (1, 12)


def test_explicit_ollama_is_kept_even_when_down(dead_url: str) -> None:
    provider = detect_provider({"embedding_provider": "OLLAMA", "ollama_host": dead_url})
    assert isinstance(provider, OllamaEmbeddingProvider)
    assert provider.model_id == "ollama:nomic-embed-text"
    assert not provider.available()


def test_explicit_openai_reads_key_from_keyring(fake_openai: FakeServer, memory_keyring: MemoryKeyring) -> None:
    secrets_store.set_api_key("openai", "sk-test-123")
    provider = detect_provider(
        {
            "embedding_provider": "openai",
            "openai_base_url": fake_openai.url,
            "extra": {"openai_dimensions": "16"},
        }
    )
    assert isinstance(provider, OpenAICompatibleEmbeddingProvider)
    assert provider.model_id == "openai:text-embedding-3-small"
    assert provider.dims == 16
    assert provider.embed(["x"]).shape == (1, 16)


def test_auto_falls_back_to_configured_ollama_only_if_bundle_missing(tmp_path: Path) -> None:
    missing = {"local_model_path": str(tmp_path / "none.onnx")}
    assert isinstance(detect_provider(missing), LocalMiniLMProvider)
    provider = detect_provider({**missing, "ollama_model": "nomic-embed-text"})
    assert isinstance(provider, OllamaEmbeddingProvider)


def test_unknown_choice_falls_back_to_auto(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="engram.embedding"):
        provider = detect_provider({"embedding_provider": "voyage"})
    assert isinstance(provider, LocalMiniLMProvider)
    assert "voyage" in caplog.text


def test_accepts_the_settings_dataclass() -> None:
    from desktop.settings import Settings

    provider = detect_provider(Settings(data_dir=Path("/nonexistent")))  # type: ignore[arg-type]
    assert isinstance(provider, LocalMiniLMProvider)
