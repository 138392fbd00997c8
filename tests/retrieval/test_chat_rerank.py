"""The reranker on the user's configured chat model (OpenAI-compatible here), against a fake
server speaking the real chat-completions protocol on 127.0.0.1 with scripted rankings."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from retrieval_helpers import add, pipeline

from desktop.agents.model_factory import AgentModels, ChatReranker
from desktop.agents.providers import make_provider
from desktop.memory.retrieval.llm_stages import parse_order
from desktop.settings import Settings
from tests.agents.fake_openai import MODEL, FakeOpenAI
from tests.agents.fake_sse import Status, Turn
from tests.support.keyrings import fail_keyring

KEY = "sk-test-key"


@pytest.fixture
def scripted() -> Iterator[FakeOpenAI]:
    """A fake OpenAI server whose model puts the passages mentioning "limit" first."""
    def respond(body: dict[str, Any], n: int) -> Any:
        prompt = body["messages"][-1]["content"]
        if "FAIL" in prompt:
            return Status(500, {"error": {"message": "overloaded", "type": "server_error"}})
        hits = [int(num) for num, text in re.findall(r"\[(\d+)\] ([^\n]*)", prompt) if "limit" in text]
        return Turn(str(hits))

    srv = FakeOpenAI(respond, lifetime=60, api_key=KEY).start()
    yield srv
    srv.stop()


def test_chat_reranker_reorders_the_top_through_the_real_protocol(project_db, tiny, scripted):
    ids = add(project_db, "upload retries use exponential backoff", "upload size limit is 10 MB",
              "upload progress bar flickers")
    provider = make_provider("openai", model=MODEL, base_url=scripted.base_url, api_key=KEY, timeout=5.0)
    pipe, _ = pipeline(project_db, tiny, reranker=ChatReranker(provider))
    resp = pipe.search("upload", limit=3, explain=True)
    assert resp.ids[0] == ids[1] and "rerank" not in resp.skipped
    assert resp.results[0].explanation.boosts["rerank_position"] == 1.0
    assert "rerank" in resp.timings
    failing = pipe.search("upload FAIL", limit=3)  # a server error skips the stage, never the search
    assert "rerank" in failing.skipped and len(failing.ids) >= 1
    pipe.close()


def test_parse_order_accepts_json_or_prose_and_refuses_nothing():
    assert parse_order("[3, 1]", 3) == [2, 0]
    assert parse_order("Passage 2 is best, then 9 and 1", 3) == [1, 0]  # out-of-range numbers dropped
    with pytest.raises(Exception, match="no passage numbers"):
        parse_order("none of them", 3)


def test_settings_choose_the_reranker(scripted):
    def stages(provider: str, **extra: Any) -> Any:
        settings = Settings(data_dir=Path("/nonexistent"), llm_provider=provider, llm_model=MODEL, extra=extra,
                            ollama_host="http://127.0.0.1:9", openai_base_url=scripted.base_url)
        return AgentModels(settings).search_stages()

    rerank, hyde = stages("openai", rerank=True)
    assert isinstance(rerank, ChatReranker) and hyde is None
    rerank.close()  # its provider's HTTP client
    assert stages("openai") == (None, None)  # rerank is opt-in
    with fail_keyring():  # no key store: search opens without the stage
        assert stages("anthropic", rerank=True) == (None, None)
