"""Fixtures for the embedding tests: the real local model, fake HTTP servers, a RAM keyring.

The fake servers speak the real wire formats (Ollama's ``/api/embed``,
``/api/tags``, ``/api/version``; OpenAI's ``/v1/embeddings`` and ``/v1/models``)
on 127.0.0.1, so the providers are exercised through the real ``ollama``
client and real httpx, with no network beyond loopback.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from desktop.memory.embedding.local import LocalMiniLMProvider
from tests.support.fake_embedding_api import FakeServer, ollama_route, openai_route, serve
from tests.support.keyrings import MemoryKeyring, installed_keyring
from tests.support.keyrings import fail_keyring as fail_keyring_installed
from tests.support.loopback import dead_url as loopback_dead_url


@pytest.fixture
def fake_ollama() -> Iterator[FakeServer]:
    """A fake Ollama with ``nomic-embed-text:latest`` pulled, returning 12-dim vectors."""
    yield from serve(ollama_route, dims=12, models=["nomic-embed-text:latest"], prefix="")


@pytest.fixture
def fake_openai() -> Iterator[FakeServer]:
    """A fake OpenAI-compatible API at ``<url>/v1`` serving ``text-embedding-3-small``."""
    yield from serve(openai_route, dims=16, models=["text-embedding-3-small"], prefix="/v1")


@pytest.fixture
def dead_url() -> str:
    """A loopback URL on which nothing listens (connection refused)."""
    return loopback_dead_url()


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    """Install a RAM keyring for one test, restoring the previous backend afterwards."""
    with installed_keyring(MemoryKeyring()) as backend:
        yield backend  # type: ignore[misc]


@pytest.fixture
def fail_keyring() -> Iterator[None]:
    """Install keyring's ``fail`` backend: the state of a machine with no secure store."""
    with fail_keyring_installed():
        yield


@pytest.fixture(scope="session")
def local_provider() -> LocalMiniLMProvider:
    """One loaded bundled model shared by the local tests (loading costs ~0.5 s)."""
    provider = LocalMiniLMProvider()
    provider.warm_up()
    return provider
