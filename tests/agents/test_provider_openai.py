"""Complete sessions through the real OpenAI-compatible provider against a local fake server.

The fake speaks the real chat-completions protocol (SSE chunks, tool-call
fragments keyed by index, ``[DONE]``); the key comes from the OS keyring (a RAM
backend here) and every failure must end the session cleanly with a stable code.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from desktop.agents.errors import MissingApiKey, NoSecureStore
from desktop.agents.providers import make_provider
from desktop.agents.providers.openai_compat import OpenAICompatProvider
from desktop.agents.session_types import DEFAULT_SYSTEM_PROMPT
from tests.agents.conftest import add
from tests.agents.fake_openai import MODEL, FakeOpenAI, call_id, openai_error
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

KEY = "sk-test-key"
PAYMENTS = "def charge(amount):\n    return amount * 100\n"
Serve = Callable[..., FakeOpenAI]


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Start fake OpenAI servers for one test; all are stopped at the end."""
    servers: list[FakeOpenAI] = []

    def make(responder: Callable[[dict[str, Any], int], Plan], **kw: Any) -> FakeOpenAI:
        kw.setdefault("api_key", KEY)
        srv = FakeOpenAI(responder, lifetime=60, **kw).start()
        servers.append(srv)
        return srv
    yield make
    for s in servers:
        s.stop()


def provider_from_keyring(server: FakeOpenAI, key: str = KEY) -> OpenAICompatProvider:
    """make_provider with the key read from a RAM keyring, as the app does."""
    with memory_keyring(openai=key):
        provider = make_provider("openai", model=MODEL, base_url=server.base_url)
    assert isinstance(provider, OpenAICompatProvider)
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


def assert_tool_result_sent(server: FakeOpenAI) -> None:
    """Request 2 carries the assistant tool call and the matching role=tool result."""
    msgs = server.messages(1)
    assert [m["role"] for m in msgs[:2]] == ["system", "user"]
    assert msgs[0]["content"].startswith(DEFAULT_SYSTEM_PROMPT[:40])
    assistant = next(m for m in msgs if m["role"] == "assistant")
    assert assistant["content"] == "Let me read the payments module first."
    (tc,) = assistant["tool_calls"]
    assert tc["id"] == call_id(1, 0) and tc["type"] == "function"
    assert tc["function"]["name"] == "Read"
    assert json.loads(tc["function"]["arguments"]) == {"file_path": "core/payments.py"}
    tool = msgs[msgs.index(assistant) + 1]
    assert tool["role"] == "tool" and tool["tool_call_id"] == call_id(1, 0)
    assert "return amount * 100" in tool["content"]


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
    run = run_session(project, provider_from_keyring(server))
    assert_success(project, run, mid, before)
    assert_tool_result_sent(server)
    first = server.model_requests[0]
    assert first.headers["authorization"] == f"Bearer {KEY}"
    assert first.body["stream"] is True and first.body["model"] == MODEL
    assert {"Read", "Grep", "search_memory"} <= set(server.tools(0))
    # the text reached the session in pieces, as it was streamed
    deltas = [e.data["delta"] for e in run.kinds("text")]
    assert len(deltas) > 5
    assert run.streamed_text == "Let me read the payments module first." + run.result.final_text
    # the gotcha reached the model (session-start or tool-result injection)
    assert "amounts are integer cents" in "\n".join(str(m.get("content")) for m in server.messages(1))


def test_parallel_tool_calls_are_assembled_by_index(project: Any, serve: Serve) -> None:
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
    assistant = next(m for m in msgs if m["role"] == "assistant")
    assert [tc["id"] for tc in assistant["tool_calls"]] == [call_id(1, 0), call_id(1, 1)]
    assert [json.loads(tc["function"]["arguments"]) for tc in assistant["tool_calls"]] == [
        {"file_path": "core/config.py"}, {"pattern": "def charge", "path": "core"}]
    results = [m for m in msgs if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == [call_id(1, 0), call_id(1, 1)]
    assert "SETTINGS" in results[0]["content"] and "payments.py" in results[1]["content"]
    assert run.result.metrics["citations"] == [mid]


def test_server_that_ignores_stream_still_works(project: Any, serve: Serve) -> None:
    """Some OpenAI-compatible servers answer one chat.completion object even when asked to stream."""
    mid = add(project, "amounts are integer cents", type="gotcha")
    before = project.memories.get(mid).access_count
    server = serve(read_then_cite(mid, NonStreaming, NonStreaming))
    run = run_session(project, provider_from_keyring(server))
    assert_success(project, run, mid, before)
    assert_tool_result_sent(server)
    assert "charge() turns euros into cents" in run.streamed_text


def test_list_models(serve: Serve) -> None:
    server = serve(lambda b, n: Turn("unused"))
    provider = provider_from_keyring(server)
    try:
        assert provider.list_models() == [MODEL]
    finally:
        provider.close()
    assert server.requests[-1].path == "/v1/models"
    assert server.requests[-1].headers["authorization"] == f"Bearer {KEY}"


def test_wrong_key_is_refused(project: Any, serve: Serve) -> None:
    server = serve(lambda b, n: Turn("never"))
    run = run_session(project, provider_from_keyring(server, key="sk-wrong"))
    assert_ended_cleanly(project, run, "provider_auth_failed")
    assert server.model_requests == []


def test_rate_limited(project: Any, serve: Serve) -> None:
    server = serve(lambda b, n: Status(429, openai_error("Rate limit reached for requests", "requests",
                                                         "rate_limit_exceeded"), {"Retry-After": "20"}))
    run = run_session(project, provider_from_keyring(server))
    assert_ended_cleanly(project, run, "provider_rate_limited")
    assert "20" in (run.result.error_message or "")


def test_server_error_status(project: Any, serve: Serve) -> None:
    server = serve(lambda b, n: Status(503, openai_error("The engine is currently overloaded", "server_error")))
    run = run_session(project, provider_from_keyring(server))
    assert_ended_cleanly(project, run, "provider_http_error")


def test_unknown_model(project: Any, serve: Serve) -> None:
    server = serve(lambda b, n: Turn("never"))
    with memory_keyring(openai=KEY):
        provider = make_provider("openai", model="gpt-nope", base_url=server.base_url)
    run = run_session(project, provider)
    assert_ended_cleanly(project, run, "model_not_found")


@pytest.mark.parametrize("cut", [Die, Close], ids=["cut-inside-chunk", "closed-before-done"])
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


def test_cut_while_tool_arguments_stream(project: Any, serve: Serve) -> None:
    """Half a tool call is not a tool call: nothing runs."""
    server = serve(lambda b, n: Die(Turn("", [("Write", {"file_path": "core/new.py", "content": "x = 1\n" * 40})])))
    run = run_session(project, provider_from_keyring(server))
    assert_ended_cleanly(project, run, "provider_stream_broken")
    assert run.kinds("tool_call") == []


@pytest.mark.parametrize("plan", [Garbage(), BadJSON(), StreamError()], ids=["html", "bad-json", "error-event"])
def test_garbage_is_a_bad_response(project: Any, serve: Serve, plan: Plan) -> None:
    server = serve(lambda b, n: plan)
    run = run_session(project, provider_from_keyring(server))
    assert_ended_cleanly(project, run, "provider_bad_response")


def test_tool_arguments_that_are_not_json(project: Any, serve: Serve) -> None:
    server = serve(lambda b, n: Turn("", [("Read", '{"file_path": "READ')]))
    run = run_session(project, provider_from_keyring(server))
    assert_ended_cleanly(project, run, "provider_bad_response")
    assert run.kinds("tool_call") == []


# -- keys and the OS key store -------------------------------------------------------------------


def test_no_secure_store_for_api_openai_com() -> None:
    with fail_keyring(), pytest.raises(NoSecureStore) as info:
        make_provider("openai", model=MODEL)
    assert info.value.code == "no_secure_store"
    assert "secure" in str(info.value).lower()


def test_missing_key_for_api_openai_com() -> None:
    with memory_keyring(), pytest.raises(MissingApiKey) as info:
        make_provider("openai", model=MODEL)
    assert info.value.code == "missing_api_key" and "Settings" in str(info.value)


def test_no_secure_store_with_a_server_that_needs_a_key(project: Any, serve: Serve) -> None:
    """A local endpoint may need no key; when it does, the session says why none was sent."""
    server = serve(lambda b, n: Turn("never"))
    with fail_keyring():
        provider = make_provider("openai", model=MODEL, base_url=server.base_url)
    run = run_session(project, provider)
    assert_ended_cleanly(project, run, "no_secure_store")
    assert "authorization" not in server.requests[0].headers
    assert "secure" in (run.result.error_message or "").lower()


def test_missing_key_with_a_server_that_needs_one(project: Any, serve: Serve) -> None:
    server = serve(lambda b, n: Turn("never"))
    with memory_keyring():
        provider = make_provider("openai", model=MODEL, base_url=server.base_url)
    run = run_session(project, provider)
    assert_ended_cleanly(project, run, "missing_api_key")


def test_local_server_without_key(project: Any, serve: Serve) -> None:
    """LM Studio / vLLM need no key: with none stored the session runs without Authorization."""
    mid = add(project, "amounts are integer cents", type="gotcha")
    before = project.memories.get(mid).access_count
    server = serve(read_then_cite(mid), api_key=None)
    with fail_keyring():
        provider = make_provider("openai", model=MODEL, base_url=server.base_url)
    run = run_session(project, provider)
    assert_success(project, run, mid, before)
    assert all("authorization" not in r.headers for r in server.requests)
