"""A provider that is down, dies mid-stream or answers garbage ends the session cleanly."""

from __future__ import annotations

from typing import Any

from desktop.agents.providers.ollama_provider import OllamaProvider
from desktop.agents.session import AgentSession
from desktop.agents.session_types import SessionConfig
from desktop.agents.tools.registry import ApprovalPolicy
from tests.agents.fake_ollama import MODEL, text_turn, tool_turn
from tests.support.loopback import dead_url


def _session(project: Any, host: str, model: str = MODEL) -> tuple[Any, list[Any]]:
    events: list[Any] = []
    with OllamaProvider(model, host=host, timeout=10) as provider:  # its sockets close with the session
        cfg = SessionConfig(task="Look around", provider=provider, ab_group="full",
                            approval=ApprovalPolicy(allow_writes=True))
        result = AgentSession(project, cfg, on_event=events.append).run()
    return result, events


def _outcome_row(project: Any, sid: str) -> Any:
    rows = project.db.reads.conn().execute("SELECT outcome FROM session_metrics WHERE session_id = ?",
                                           (sid,)).fetchall()
    return rows[0][0] if rows else None


def test_provider_dies_mid_session(project: Any, fake_ollama: Any) -> None:
    server = fake_ollama(lambda b, n: tool_turn(("Read", {"file_path": "core/payments.py"})) if n == 0 else "die")
    result, events = _session(project, server.host)
    assert result.outcome == "failure"
    assert result.error_code == "provider_stream_broken"
    assert result.steps == 2
    assert next(e for e in events if e.kind == "error").data["code"] == "provider_stream_broken"
    assert events[-1].kind == "finished"
    # observations kept: the session was promoted and its metrics stored with outcome failure
    assert _outcome_row(project, result.session_id) == "failure"
    seen = project.db.reads.conn().execute("SELECT count(*) FROM observer_seen_events WHERE session_id = ?",
                                           (result.session_id,)).fetchall()[0][0]
    files = project.db.reads.conn().execute("SELECT file_path FROM observer_file_nodes").fetchall()
    assert seen > 0 or ("core/payments.py",) in files


def test_provider_down(project: Any) -> None:
    result, _ = _session(project, dead_url())
    assert result.outcome == "failure" and result.error_code == "provider_unreachable"
    assert _outcome_row(project, result.session_id) == "failure"


def test_provider_answers_garbage(project: Any, fake_ollama: Any) -> None:
    server = fake_ollama(lambda b, n: "garbage")
    result, _ = _session(project, server.host)
    assert result.error_code == "provider_bad_response"


def test_unknown_model(project: Any, fake_ollama: Any) -> None:
    server = fake_ollama(lambda b, n: text_turn("hi"))
    result, _ = _session(project, server.host, model="nope")
    assert result.error_code == "model_not_found"


def test_cancel_stops_session(project: Any, fake_ollama: Any) -> None:
    import time

    server = fake_ollama(lambda b, n: tool_turn(("Bash", {"command": "sleep 30"})))
    with OllamaProvider(MODEL, host=server.host) as provider:
        cfg = SessionConfig(task="wait", provider=provider, ab_group="control",
                            approval=ApprovalPolicy(allow_commands=True))
        session = AgentSession(project, cfg)
        session.start()
        deadline = time.time() + 10
        while time.time() < deadline and not any(True for _ in list(session.events.queue) if _.kind == "tool_call"):
            time.sleep(0.05)
        session.cancel()
        result = session.wait(15)
    assert result is not None and result.outcome == "abandoned"
