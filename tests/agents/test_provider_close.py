"""Providers close their HTTP connections: as context managers, and when the service that owns them ends.

After a real request to each local fake server, leaving the ``with`` block closes the
provider's httpx client, and collecting it raises no ResourceWarning (the suite turns
warnings into errors, with no exception for unclosed sockets).
"""

from __future__ import annotations

import gc
import warnings
from typing import Any

from desktop.agents.messages import ChatMessage
from desktop.agents.model_factory import ChatReranker
from desktop.agents.providers.anthropic_provider import AnthropicProvider
from desktop.agents.providers.ollama_provider import OllamaProvider
from desktop.agents.providers.openai_compat import OpenAICompatProvider
from tests.agents.fake_anthropic import MODEL as ANTHROPIC_MODEL
from tests.agents.fake_anthropic import FakeAnthropic
from tests.agents.fake_ollama import MODEL as OLLAMA_MODEL
from tests.agents.fake_ollama import text_turn
from tests.agents.fake_openai import MODEL as OPENAI_MODEL
from tests.agents.fake_openai import FakeOpenAI
from tests.agents.fake_sse import Turn

KEY = "sk-test-key"


def _http_client(provider: Any) -> Any:
    inner = provider._client
    return getattr(inner, "_client", inner)  # ollama.Client wraps an httpx.Client


def _closes_cleanly(provider: Any) -> None:
    with provider as p:
        assert p is provider
        turn = p.chat([ChatMessage("user", "hello")], [])
        assert turn.text.strip()
        assert not _http_client(p).is_closed
    assert _http_client(provider).is_closed
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        del p, provider
        gc.collect()


def test_openai_compatible_provider_closes() -> None:
    srv = FakeOpenAI(lambda b, n: Turn("hi there"), lifetime=30, api_key=KEY).start()
    try:
        _closes_cleanly(OpenAICompatProvider(OPENAI_MODEL, base_url=srv.base_url, api_key=KEY, timeout=10))
    finally:
        srv.stop()


def test_anthropic_provider_closes() -> None:
    srv = FakeAnthropic(lambda b, n: Turn("hi there"), lifetime=30, api_key=KEY).start()
    try:
        _closes_cleanly(AnthropicProvider(ANTHROPIC_MODEL, api_key=KEY, base_url=srv.url, timeout=10))
    finally:
        srv.stop()


def test_ollama_provider_closes(fake_ollama: Any) -> None:
    srv = fake_ollama(lambda b, n: text_turn("hi there"))
    _closes_cleanly(OllamaProvider(OLLAMA_MODEL, host=srv.host, timeout=10))


def test_search_service_closes_its_chat_reranker(project: Any) -> None:
    provider = OpenAICompatProvider(OPENAI_MODEL, base_url="http://127.0.0.1:9", api_key=KEY, timeout=1)
    project.build_search(reranker=ChatReranker(provider), start_indexer=False)
    assert not provider._client.is_closed
    project.close()  # closes its search service, and the search service its reranker
    assert provider._client.is_closed
