"""Complete sessions through the real Anthropic provider against a local fake Messages API.

The fake speaks the real streaming protocol (named SSE events, ``tool_use``
blocks whose input arrives as ``input_json_delta`` pieces, ``message_stop``);
the key comes from the OS keyring (a RAM backend here) and every failure must
end the session cleanly with a stable code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from desktop.agents.errors import MissingApiKey, NoSecureStore
from desktop.agents.providers import make_provider
from desktop.agents.providers.anthropic_provider import AnthropicProvider
from desktop.agents.session_types import DEFAULT_SYSTEM_PROMPT
from tests.agents.conftest import add
from tests.agents.fake_anthropic import MODEL, VERSION, FakeAnthropic, anthropic_error, tool_id
from tests.agents.fake_sse import (
    BadJSON,
    Close,
    Die,
    Garbage,
    NonStreaming,
    Plan,
    Status,
    StreamError,
    Turn,
    fail_keyring,
    memory_keyring,
)
from tests.agents.provider_harness import Run, assert_ended_cleanly, outcome_row, run_session

KEY = "sk-ant-test-key"
Serve = Callable[..., FakeAnthropic]


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Start fake Anthropic servers for one test; all are stopped at the end."""
    servers: list[FakeAnthropic] = []

    def make(responder: Callable[[dict[str, Any], int], Plan], **kw: Any) -> FakeAnthropic:
        kw.setdefault("api_key", KEY)
        srv = FakeAnthropic(responder, lifetime=60, **kw).start()
        servers.append(srv)
        return srv
    yield make
    for s in servers:
        s.stop()


def provider_from_keyring(server: FakeAnthropic, key: str = KEY, model: str = MODEL) -> AnthropicProvider:
    """make_provider with the key read from a RAM keyring, as the app does."""
    with memory_keyring(anthropic=key):
        provider = make_provider("anthropic", model=model, base_url=server.url)
    assert isinstance(provider, AnthropicProvider)
    return provider


def read_then_cite(memory_id: int, first: Callable[[Turn], Plan] = lambda t: t,
                   second: Callable[[Turn], Plan] = lambda t: t) -> Callable[[dict[str, Any], int], Plan]:
    """Turn 1: some text and a Read; turn 2: the answer citing ``memory_id``."""
    def respond(body: dict[str, Any], n: int) -> Plan:
        if n == 0:
            return first(Turn("Let me read the payments module first.",
                              [("Read", {"file_path": "core/payments.py"})]))
        return second(Turn(f"charge() turns euros into cents [Memory #{memory_id}: amounts are integer cents]."))
    return respond


def assert_tool_result_sent(server: FakeAnthropic) -> None:
    """Request 2: system top-level; user, assistant [text, tool_use], user [tool_result]."""
    body = server.model_requests[1].body
    assert isinstance(body["system"], str) and body["system"].startswith(DEFAULT_SYSTEM_PROMPT[:40])
    msgs = body["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    text, use = msgs[1]["content"]
    assert text == {"type": "text", "text": "Let me read the payments module first."}
    assert use == {"type": "tool_use", "id": tool_id(1, 0), "name": "Read", "input": {"file_path": "core/payments.py"}}
    (result,) = msgs[2]["content"]
    assert result["type"] == "tool_result" and result["tool_use_id"] == tool_id(1, 0)
    assert "return amount * 100" in result["content"]


def assert_success(project: Any, run: Run, memory_id: int, before: int) -> None:
    """The tool ran, the answer is final, the citation counted."""
    assert run.result.outcome == "success", (run.result.error_code, run.result.error_message)
    assert run.result.steps == 2
    assert run.result.final_text.startswith("charge() turns euros into cents")
    (res,) = run.kinds("tool_result")
    assert res.data["tool"] == "Read" and not res.data["is_error"] and "return amount * 100" in res.data["output"]
    assert run.result.metrics["citations"] == [memory_id]
    assert project.memories.get(memory_id).access_count >= before + 1
    assert outcome_row(project, run.result.session_id) == "success"


def test_full_streamed_session_key_from_keyring(project: Any, serve: Serve) -> None:
    mid = add(project, "amounts are integer cents in core/payments.py", type="gotcha",
              related_files=["core/payments.py"], confidence=0.9)
    before = project.memories.get(mid).access_count
    server = serve(read_then_cite(mid))
    provider = provider_from_keyring(server)
    assert provider.agent_format == "xml"
    run = run_session(project, provider)
    assert_success(project, run, mid, before)
    assert_tool_result_sent(server)
    first = server.model_requests[0]
    assert first.headers["x-api-key"] == KEY and first.headers["anthropic-version"] == VERSION
    assert "authorization" not in first.headers
    assert first.body["stream"] is True and first.body["model"] == MODEL and first.body["max_tokens"] > 0
    assert {"Read", "Grep", "search_memory"} <= set(server.tools(0))
    assert all("input_schema" in t for t in first.body["tools"])
    assert len(run.kinds("text")) > 5
    assert run.streamed_text == "Let me read the payments module first." + run.result.final_text
    sent = str(server.model_requests[1].body)
    assert "amounts are integer cents" in sent


def test_parallel_tool_uses_answered_in_one_user_turn(project: Any, serve: Serve) -> None:
    mid = add(project, "SETTINGS retries are read once at import", type="pattern")

    def respond(body: dict[str, Any], n: int) -> Plan:
        if n == 0:
            return Turn("", [("Read", {"file_path": "core/config.py"}),
                             ("Grep", {"pattern": "def charge", "path": "core"})])
        return Turn(f"Retries are 3 [Memory #{mid}: read once].")
    server = serve(respond)
    run = run_session(project, provider_from_keyring(server), group="control")
    assert run.result.outcome == "success", run.result.error_message
    assert [e.data["tool"] for e in run.kinds("tool_result")] == ["Read", "Grep"]
    msgs = server.messages(1)
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert [b["id"] for b in msgs[1]["content"]] == [tool_id(1, 0), tool_id(1, 1)]
    assert [b["input"] for b in msgs[1]["content"]] == [{"file_path": "core/config.py"},
                                                         {"pattern": "def charge", "path": "core"}]
    results = msgs[2]["content"]
    assert [b["tool_use_id"] for b in results] == [tool_id(1, 0), tool_id(1, 1)]
    assert "SETTINGS" in results[0]["content"] and "payments.py" in results[1]["content"]
    assert run.result.metrics["citations"] == [mid]


def test_tool_without_arguments(project: Any, serve: Serve) -> None:
    """A tool_use whose input streams as nothing but the empty partial_json is an empty object."""
    server = serve(lambda b, n: Turn("", [("Glob", {})]) if n == 0 else Turn("Listed."))
    run = run_session(project, provider_from_keyring(server), group="control")
    assert run.result.outcome == "success", run.result.error_message
    assert run.kinds("tool_call")[0].data["arguments"] == {}
    assert server.messages(1)[1]["content"][0]["input"] == {}


def test_server_that_ignores_stream_still_works(project: Any, serve: Serve) -> None:
    mid = add(project, "amounts are integer cents", type="gotcha")
    before = project.memories.get(mid).access_count
    server = serve(read_then_cite(mid, NonStreaming, NonStreaming))
    run = run_session(project, provider_from_keyring(server))
    assert_success(project, run, mid, before)
    assert_tool_result_sent(server)


def test_list_models(serve: Serve) -> None:
    server = serve(lambda b, n: Turn("unused"))
    provider = provider_from_keyring(server)
    try:
        assert provider.list_models() == [MODEL]
    finally:
        provider.close()
    assert server.requests[-1].path.startswith("/v1/models")
    assert server.requests[-1].headers["x-api-key"] == KEY


def test_wrong_key_is_refused(project: Any, serve: Serve) -> None:
    server = serve(lambda b, n: Turn("never"))
    run = run_session(project, provider_from_keyring(server, key="sk-ant-wrong"))
    assert_ended_cleanly(project, run, "provider_auth_failed")
    assert server.model_requests == []


def test_rate_limited(project: Any, serve: Serve) -> None:
    server = serve(lambda b, n: Status(429, anthropic_error("rate_limit_error", "Number of requests has exceeded"
                                                            " your per-minute rate limit"), {"retry-after": "7"}))
    run = run_session(project, provider_from_keyring(server))
    assert_ended_cleanly(project, run, "provider_rate_limited")
    assert "7" in (run.result.error_message or "")


def test_overloaded_status(project: Any, serve: Serve) -> None:
    server = serve(lambda b, n: Status(529, anthropic_error("overloaded_error", "Overloaded")))
    run = run_session(project, provider_from_keyring(server))
    assert_ended_cleanly(project, run, "provider_http_error")


def test_unknown_model(project: Any, serve: Serve) -> None:
    server = serve(lambda b, n: Turn("never"))
    run = run_session(project, provider_from_keyring(server, model="claude-nope"))
    assert_ended_cleanly(project, run, "model_not_found")


@pytest.mark.parametrize("cut", [Die, Close], ids=["cut-inside-chunk", "closed-before-message-stop"])
def test_connection_cut_mid_stream_keeps_observations(project: Any, serve: Serve, cut: Any) -> None:
    mid = add(project, "amounts are integer cents", type="gotcha")
    server = serve(read_then_cite(mid, second=cut))
    run = run_session(project, provider_from_keyring(server))
    assert_ended_cleanly(project, run, "provider_stream_broken")
    assert run.result.steps == 2
    assert [e.data["tool"] for e in run.kinds("tool_result")] == ["Read"]
    files = project.db.reads.conn().execute("SELECT file_path FROM observer_file_nodes").fetchall()
    seen = project.db.reads.conn().execute("SELECT count(*) FROM observer_seen_events WHERE session_id = ?",
                                           (run.result.session_id,)).fetchall()[0][0]
    assert seen > 0 or ("core/payments.py",) in files


def test_cut_while_tool_input_streams(project: Any, serve: Serve) -> None:
    """Half a tool_use is not a tool call: nothing runs."""
    server = serve(lambda b, n: Close(Turn("", [("Write", {"file_path": "core/new.py", "content": "x = 1\n" * 40})])))
    run = run_session(project, provider_from_keyring(server))
    assert_ended_cleanly(project, run, "provider_stream_broken")
    assert run.kinds("tool_call") == []


@pytest.mark.parametrize("plan", [Garbage(), BadJSON(), StreamError()], ids=["html", "bad-json", "error-event"])
def test_garbage_is_a_bad_response(project: Any, serve: Serve, plan: Plan) -> None:
    server = serve(lambda b, n: plan)
    run = run_session(project, provider_from_keyring(server))
    assert_ended_cleanly(project, run, "provider_bad_response")


def test_tool_input_that_is_not_json(project: Any, serve: Serve) -> None:
    server = serve(lambda b, n: Turn("", [("Read", '{"file_path": "READ')]))
    run = run_session(project, provider_from_keyring(server))
    assert_ended_cleanly(project, run, "provider_bad_response")
    assert run.kinds("tool_call") == []


# -- keys and the OS key store -------------------------------------------------------------------


def test_no_secure_store(serve: Serve) -> None:
    """With no OS key store the provider is not built: a clear no_secure_store error, no request sent."""
    server = serve(lambda b, n: Turn("never"))
    with fail_keyring(), pytest.raises(NoSecureStore) as info:
        make_provider("anthropic", model=MODEL, base_url=server.url)
    assert info.value.code == "no_secure_store"
    assert "secure" in str(info.value).lower()
    assert server.requests == []


def test_missing_key(serve: Serve) -> None:
    server = serve(lambda b, n: Turn("never"))
    with memory_keyring(openai="sk-other"), pytest.raises(MissingApiKey) as info:
        make_provider("anthropic", model=MODEL, base_url=server.url)
    assert info.value.code == "missing_api_key" and "anthropic" in str(info.value)
    assert server.requests == []
