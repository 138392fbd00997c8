"""OllamaEmbeddingProvider against a fake Ollama on loopback, via the real ``ollama`` client."""

from __future__ import annotations

import time

import numpy as np
import pytest

from desktop.memory.embedding.base import EmbeddingError, EmbeddingProvider
from desktop.memory.embedding.ollama_provider import OllamaEmbeddingProvider
from tests.support.fake_embedding_api import FakeServer, fake_vector


def test_embed_through_the_real_client(fake_ollama: FakeServer) -> None:
    provider = OllamaEmbeddingProvider(fake_ollama.url, "nomic-embed-text")
    assert isinstance(provider, EmbeddingProvider)
    assert provider.model_id == "ollama:nomic-embed-text"
    assert provider.dims == 0  # unknown until the first response

    vectors = provider.embed(["alpha", "beta"])

    assert vectors.shape == (2, 12) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    expected = np.asarray(fake_vector("alpha", 12), dtype=np.float32)
    np.testing.assert_allclose(vectors[0], expected / np.linalg.norm(expected), atol=1e-6)
    assert provider.dims == 12  # learnt from the response, no extra request
    method, path, body, _ = fake_ollama.requests[-1]
    assert (method, path) == ("POST", "/api/embed")
    assert body["model"] == "nomic-embed-text" and body["input"] == ["alpha", "beta"]
    provider.close()


def test_dims_probe_before_first_embed(fake_ollama: FakeServer) -> None:
    provider = OllamaEmbeddingProvider(fake_ollama.url, "nomic-embed-text")
    assert provider.dims == 0
    assert fake_ollama.requests == []
    assert provider.discover_dims() == 12
    assert provider.dims == 12
    assert len(fake_ollama.requests) == 1


def test_batches_keep_order(fake_ollama: FakeServer) -> None:
    provider = OllamaEmbeddingProvider(fake_ollama.url, "nomic-embed-text", batch_size=4)
    texts = [f"text {i}" for i in range(10)]
    vectors = provider.embed(texts)
    assert vectors.shape == (10, 12)
    assert len([r for r in fake_ollama.requests if r[1] == "/api/embed"]) == 3
    single = provider.embed(["text 7"])
    np.testing.assert_allclose(vectors[7], single[0], atol=1e-6)


def test_available_checks_server_and_pulled_model(fake_ollama: FakeServer) -> None:
    assert OllamaEmbeddingProvider(fake_ollama.url, "nomic-embed-text").available()
    assert OllamaEmbeddingProvider(fake_ollama.url, "nomic-embed-text:latest").available()
    assert not OllamaEmbeddingProvider(fake_ollama.url, "mxbai-embed-large").available()


def test_missing_model_maps_to_model_missing(fake_ollama: FakeServer) -> None:
    provider = OllamaEmbeddingProvider(fake_ollama.url, "qwen3-embedding")
    with pytest.raises(EmbeddingError) as info:
        provider.embed(["x"])
    assert info.value.code == "model_not_found"


def test_wrong_vector_count_is_bad_response(fake_ollama: FakeServer) -> None:
    provider = OllamaEmbeddingProvider(fake_ollama.url, "nomic-embed-text")
    fake_ollama.override = (200, {"model": "nomic-embed-text", "embeddings": [[1.0, 0.0]]})
    with pytest.raises(EmbeddingError) as info:
        provider.embed(["a", "b"])
    assert info.value.code == "bad_response"


def test_non_finite_vectors_are_bad_response(fake_ollama: FakeServer) -> None:
    provider = OllamaEmbeddingProvider(fake_ollama.url, "nomic-embed-text")
    fake_ollama.override = (200, b'{"model": "m", "embeddings": [[1.0, NaN]]}')
    with pytest.raises(EmbeddingError) as info:
        provider.embed(["a"])
    assert info.value.code == "bad_response"


def test_server_error_is_provider_error(fake_ollama: FakeServer) -> None:
    provider = OllamaEmbeddingProvider(fake_ollama.url, "nomic-embed-text")
    fake_ollama.override = (500, {"error": "llama runner process has terminated"})
    with pytest.raises(EmbeddingError) as info:
        provider.embed(["a"])
    assert info.value.code == "provider_error"


def test_changed_width_is_refused(fake_ollama: FakeServer) -> None:
    provider = OllamaEmbeddingProvider(fake_ollama.url, "nomic-embed-text")
    provider.embed(["a"])
    fake_ollama.override = (200, {"model": "m", "embeddings": [[0.5] * 7]})
    with pytest.raises(EmbeddingError) as info:
        provider.embed(["b"])
    assert info.value.code == "bad_response"


def test_dead_server_is_unavailable_quickly_and_unreachable(dead_url: str) -> None:
    provider = OllamaEmbeddingProvider(dead_url, "nomic-embed-text")
    started = time.perf_counter()
    assert provider.available() is False
    assert time.perf_counter() - started < 1.0
    with pytest.raises(EmbeddingError) as info:
        provider.embed(["hello"])
    assert info.value.code == "provider_unreachable"
    assert provider.dims == 0  # reading it never touches the network
    with pytest.raises(EmbeddingError) as info:
        provider.discover_dims()
    assert info.value.code == "provider_unreachable"


def test_blank_model_is_rejected() -> None:
    with pytest.raises(EmbeddingError) as info:
        OllamaEmbeddingProvider("http://127.0.0.1:1", "  ")
    assert info.value.code == "model_not_found"
