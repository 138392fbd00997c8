"""Rerank and HyDE through a fake Ollama (real client, real HTTP) and a dead port."""

from __future__ import annotations

import json
import re

from retrieval_helpers import add, pipeline

from desktop.memory.retrieval.llm_stages import OllamaHyde, OllamaReranker
from desktop.memory.retrieval.slo import SloMonitor


def test_reranker_reorders_the_top(project_db, tiny, fake_ollama):
    ids = add(project_db, "upload retries use exponential backoff", "upload size limit is 10 MB",
              "upload progress bar flickers")

    def reply(body):
        # Put the passage mentioning "limit" first, like a real model would for this query.
        prompt = body["messages"][0]["content"]
        nums = [int(n) for n, text in re.findall(r"\[(\d+)\] ([^\n]*)", prompt) if "limit" in text]
        return json.dumps(nums)

    fake_ollama.chat_reply = reply
    pipe, _ = pipeline(project_db, tiny, reranker=OllamaReranker(fake_ollama.url, "qwen3:0.6b"))
    resp = pipe.search("upload", limit=3, explain=True)
    assert resp.ids[0] == ids[1] and "rerank" not in resp.skipped
    assert resp.results[0].explanation.boosts["rerank_position"] == 1.0
    assert any(path == "/api/chat" for path, _b in fake_ollama.requests)
    pipe.close()


def test_hyde_runs_when_few_results_score_well(project_db, tiny, fake_ollama):
    ids = add(project_db, "argon2 hashes the stored passwords", "the dashboard loads in 2 seconds")
    fake_ollama.generate_reply = "We hash stored passwords with argon2."
    pipe, _ = pipeline(project_db, tiny, hyde=OllamaHyde(fake_ollama.url, "qwen3:0.6b"))
    resp = pipe.search("credential storage scheme", limit=2, explain=True)
    assert any(path == "/api/generate" for path, _b in fake_ollama.requests)
    assert resp.ids[0] == ids[0] and "hyde" in resp.results[0].explanation.paths
    # Proactive searches never call the LLM.
    before = len(fake_ollama.requests)
    pipe.search("credential storage scheme", mode="proactive")
    assert len(fake_ollama.requests) == before
    pipe.close()


def test_dead_ollama_leaves_search_working(project_db, tiny, dead_url):
    ids = add(project_db, "retry the webhook three times", "webhook secrets rotate monthly")
    pipe, _ = pipeline(project_db, tiny, reranker=OllamaReranker(dead_url, "m", timeout=0.5),
                       hyde=OllamaHyde(dead_url, "m", timeout=0.5))
    resp = pipe.search("webhook retry", limit=2)
    assert resp.ids[0] == ids[0]
    assert "rerank" in resp.skipped and "hyde" in resp.skipped
    pipe.close()


def test_slow_ollama_times_out_and_is_skipped(project_db, tiny, fake_ollama):
    add(project_db, "retry the webhook three times", "webhook secrets rotate monthly")
    fake_ollama.delay_s = 2.0
    pipe, _ = pipeline(project_db, tiny, reranker=OllamaReranker(fake_ollama.url, "qwen3:0.6b", timeout=0.3))
    resp = pipe.search("webhook retry", limit=2)
    assert len(resp.results) == 2 and "rerank" in resp.skipped
    pipe.close()


def test_degraded_pipeline_skips_llm_stages(project_db, tiny, fake_ollama):
    add(project_db, "a b c", "d e f")
    slo = SloMonitor(budget_ms=0.0001, min_samples=1)
    slo.record(10.0)
    pipe, _ = pipeline(project_db, tiny, reranker=OllamaReranker(fake_ollama.url, "qwen3:0.6b"), slo=slo)
    resp = pipe.search("a")
    assert resp.degraded and not any(p == "/api/chat" for p, _b in fake_ollama.requests)
    pipe.close()


def test_dense_path_skipped_when_embedding_provider_fails(project_db, tiny):
    ids = add(project_db, "keyword only match here")
    pipe, _ = pipeline(project_db, tiny)
    tiny.fail = True
    resp = pipe.search("keyword match")
    assert resp.ids == [ids[0]] and "dense" in resp.skipped
    pipe.close()
