"""OpenAICompatibleEmbeddingProvider against a fake OpenAI-style server on loopback."""

from __future__ import annotations

import time

import numpy as np
import pytest

from desktop.memory import secrets_store
from desktop.memory.embedding.base import EmbeddingError, EmbeddingProvider
from desktop.memory.embedding.openai_provider import OpenAICompatibleEmbeddingProvider
from tests.support.fake_embedding_api import FakeServer, fake_vector
from tests.support.keyrings import MemoryKeyring

KEY = "sk-test-123"


def _provider(url: str, key: str | None = KEY, **kwargs: object) -> OpenAICompatibleEmbeddingProvider:
    return OpenAICompatibleEmbeddingProvider(url, "text-embedding-3-small", lambda: key, **kwargs)  # type: ignore[arg-type]


def test_embed_orders_by_index_and_normalises(fake_openai: FakeServer) -> None:
    provider = _provider(fake_openai.url, dimensions=16)
    assert isinstance(provider, EmbeddingProvider)
    assert provider.model_id == "openai:text-embedding-3-small"
    vectors = provider.embed(["first", "second", "third"])
    assert vectors.shape == (3, 16) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    expected = np.asarray(fake_vector("first", 16), dtype=np.float32)
    np.testing.assert_allclose(vectors[0], expected / np.linalg.norm(expected), atol=1e-6)
    _, path, body, headers = fake_openai.requests[-1]
    assert path == "/v1/embeddings"
    assert body == {
        "model": "text-embedding-3-small",
        "input": ["first", "second", "third"],
        "encoding_format": "float",
        "dimensions": 16,
    }
    assert headers["authorization"] == f"Bearer {KEY}"
    provider.close()


def test_known_model_dims_need_no_request(fake_openai: FakeServer) -> None:
    assert _provider(fake_openai.url).dims == 1536
    assert _provider(fake_openai.url, dimensions=1024).dims == 1024
    assert fake_openai.requests == []


def test_unknown_model_learns_dims(fake_openai: FakeServer) -> None:
    fake_openai.models.append("local-embedder")
    provider = OpenAICompatibleEmbeddingProvider(fake_openai.url, "local-embedder", lambda: KEY)
    assert provider.dims == 0
    assert provider.discover_dims() == 16
    assert provider.dims == 16


def test_batches(fake_openai: FakeServer) -> None:
    provider = _provider(fake_openai.url, dimensions=16, batch_size=2)
    vectors = provider.embed(["a", "b", "c", "d", "e"])
    assert vectors.shape == (5, 16)
    np.testing.assert_allclose(vectors[4], provider.embed(["e"])[0], atol=1e-6)


def test_no_key_is_no_api_key_without_a_request(fake_openai: FakeServer) -> None:
    provider = _provider(fake_openai.url, key=None)
    assert not provider.available()
    with pytest.raises(EmbeddingError) as info:
        provider.embed(["a"])
    assert info.value.code == "missing_api_key"
    assert fake_openai.requests == []


def test_wrong_key_is_auth_failed(fake_openai: FakeServer) -> None:
    provider = _provider(fake_openai.url, key="sk-wrong")
    assert not provider.available()
    with pytest.raises(EmbeddingError) as info:
        provider.embed(["a"])
    assert info.value.code == "provider_auth_failed"


def test_available_with_good_key(fake_openai: FakeServer) -> None:
    assert _provider(fake_openai.url).available()


def test_unknown_model_is_model_missing(fake_openai: FakeServer) -> None:
    provider = OpenAICompatibleEmbeddingProvider(fake_openai.url, "no-such-model", lambda: KEY)
    with pytest.raises(EmbeddingError) as info:
        provider.embed(["a"])
    assert info.value.code == "model_not_found"


@pytest.mark.parametrize(
    ("status", "payload", "code"),
    [
        (429, {"error": {"message": "Rate limit reached"}}, "provider_rate_limited"),
        (503, {"error": {"message": "overloaded"}}, "provider_error"),
        (200, b"<html>proxy login</html>", "bad_response"),
        (200, {"data": "nope"}, "bad_response"),
        (200, {"data": [{"index": 0, "embedding": [1.0, 2.0]}]}, "bad_response"),  # 1 vector for 2 texts
    ],
)
def test_error_mapping(fake_openai: FakeServer, status: int, payload: object, code: str) -> None:
    fake_openai.override = (status, payload)
    with pytest.raises(EmbeddingError) as info:
        _provider(fake_openai.url).embed(["a", "b"])
    assert info.value.code == code


def test_dead_server(dead_url: str) -> None:
    provider = _provider(dead_url + "/v1")
    started = time.perf_counter()
    assert provider.available() is False
    assert time.perf_counter() - started < 1.0
    with pytest.raises(EmbeddingError) as info:
        provider.embed(["a"])
    assert info.value.code == "provider_unreachable"


def test_key_from_keyring(fake_openai: FakeServer, memory_keyring: MemoryKeyring) -> None:
    secrets_store.set_api_key("openai", KEY)
    provider = OpenAICompatibleEmbeddingProvider(
        fake_openai.url,
        "text-embedding-3-small",
        lambda: secrets_store.get_api_key("openai"),
        dimensions=16,
    )
    assert provider.embed(["a"]).shape == (1, 16)
    assert memory_keyring.store == {("engram", "openai"): KEY}


def test_no_secure_store_surfaces_its_code(fake_openai: FakeServer, fail_keyring: None) -> None:
    provider = OpenAICompatibleEmbeddingProvider(
        fake_openai.url, "text-embedding-3-small", lambda: secrets_store.get_api_key("openai")
    )
    assert not provider.available()
    with pytest.raises(EmbeddingError) as info:
        provider.embed(["a"])
    assert info.value.code == "no_secure_store"
