"""Complete sessions through the real `ollama` client against a local fake Ollama server."""

from __future__ import annotations

from typing import Any

from desktop.agents.providers.ollama_provider import OllamaProvider
from desktop.agents.session import AgentSession
from desktop.agents.session_types import SessionConfig
from desktop.agents.tools.registry import ApprovalPolicy
from tests.agents.conftest import add, seed_sessions
from tests.agents.fake_ollama import MODEL, text_turn, tool_turn


def run(project: Any, server: Any, task: str = "Tidy up the code", group: str = "full",
        **cfg: Any) -> tuple[Any, list[Any]]:
    events: list[Any] = []
    with OllamaProvider(MODEL, host=server.host) as provider:
        config = SessionConfig(task=task, provider=provider, ab_group=group,
                               approval=cfg.pop("approval", ApprovalPolicy(allow_writes=True, allow_commands=True)),
                               **cfg)
        result = AgentSession(project, config, on_event=events.append).run()
    return result, events


def all_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content") or "") for m in messages)


def injections(events: list[Any], tier: str | None = None) -> list[Any]:
    return [e for e in events if e.kind == "injection" and (tier is None or e.data["tier"] == tier)]


def test_full_session_every_tier_fires(project: Any, fake_ollama: Any) -> None:
    pinned = add(project, "Never log card numbers, not even masked ones.", type="requirement", pinned=True)
    gotchas = [add(project, f"payments gotcha {i}: amounts are integer cents {i}", type="gotcha",
                   related_files=["core/payments.py"], confidence=0.9) for i in range(5)]
    known = add(project, "retry backoff lives in core/config.py under SETTINGS retries", type="pattern",
                confidence=0.9, scope="module", related_modules=["net"])
    seed_sessions(project, {"core/config.py": 4, "core/rare.py": 1}, total=4)

    def respond(body: dict[str, Any], n: int) -> Any:
        return [
            tool_turn(("Read", {"file_path": "core/payments.py"})),
            tool_turn(("record_memory", {"content": "charge() multiplies by 100: callers pass euros",
                                         "type": "gotcha", "files": ["core/payments.py"]})),
            tool_turn(("Grep", {"pattern": "retry backoff"})),
            text_turn(f"Done. Amounts are cents [Memory #{gotchas[0]}: amounts are integer cents]."),
        ][min(n, 3)]
    server = fake_ollama(respond)
    result, events = run(project, server)
    assert result.outcome == "success", result
    assert result.steps == 4
    first = all_text(server.messages(0))
    # T1: pinned memory in the system prompt; T2: the always-read file is prefetched, the rare one is not
    assert f"#{pinned}" in server.messages(0)[0]["content"]
    assert "SETTINGS = {'retries': 3}" in first and "core/rare.py" not in first
    # T3: gotchas appended to the Read result
    t3 = injections(events, "t3")
    assert len(t3) == 1 and len(t3[0].data["memory_ids"]) == 3
    tool_msg = next(m for m in server.messages(1) if m["role"] == "tool")["content"]
    assert "payments gotcha" in tool_msg
    # T4 trigger 1 before step 2: the two gotchas T3 did not show
    t4 = injections(events, "t4")
    triggers = [e.data["trigger"] for e in t4]
    assert triggers[0] == "gotcha_injection" and len(t4[0].data["memory_ids"]) == 2
    assert "scratchpad_reflection" in triggers and "search_short_circuit" in triggers
    assert "charge() multiplies by 100" in all_text(server.messages(2))
    assert f"#{known}" in all_text(server.messages(3))
    # never the same memory twice
    ids = [i for e in injections(events) for i in e.data["memory_ids"]]
    assert len(ids) == len(set(ids))
    # citations counted as used
    assert project.memories.get(gotchas[0]).access_count >= 1
    assert result.metrics["citations"] == [gotchas[0]]
    assert result.metrics["prefetched_files"] == 1
    # metrics stored via the writer
    row = project.db.reads.conn().execute(
        "SELECT ab_group, json_extract(metrics, '$.agent.injections_total') FROM session_metrics"
        " WHERE session_id = ?", (result.session_id,)).fetchall()
    assert row and row[0][0] == "full" and row[0][1] >= 4


def test_control_group_gets_no_memory(project: Any, fake_ollama: Any) -> None:
    add(project, "Pinned rule", type="requirement", pinned=True)
    add(project, "payments gotcha", type="gotcha", related_files=["core/payments.py"], confidence=0.9)
    seed_sessions(project, {"core/config.py": 4}, total=4)
    server = fake_ollama(lambda b, n: [tool_turn(("Read", {"file_path": "core/payments.py"})),
                                       text_turn("ok")][min(n, 1)])
    result, events = run(project, server, group="control")
    assert result.outcome == "success"
    assert injections(events) == []
    assert "Pinned rule" not in all_text(server.messages(0))
    assert "SETTINGS" not in all_text(server.messages(0))
    assert "search_memory" not in server.tools(0)
    assert "payments gotcha" not in all_text(server.messages(1))


def test_passive_group_only_session_start(project: Any, fake_ollama: Any) -> None:
    add(project, "Pinned rule", type="requirement", pinned=True)
    add(project, "payments gotcha", type="gotcha", related_files=["core/payments.py"], confidence=0.9)
    server = fake_ollama(lambda b, n: [tool_turn(("Read", {"file_path": "core/payments.py"})),
                                       text_turn("ok")][min(n, 1)])
    _result, events = run(project, server, group="passive")
    assert {e.data["tier"] for e in injections(events)} == {"t1"}
    assert "payments gotcha" not in all_text(server.messages(1))


def test_no_tier_fires_without_reason(project: Any, fake_ollama: Any) -> None:
    """Full group, but nothing relevant is known: no T2/T3/T4 injections."""
    add(project, "gotcha about another file", type="gotcha", related_files=["other.py"], confidence=0.9)
    seed_sessions(project, {"core/rare.py": 1}, total=4)
    server = fake_ollama(lambda b, n: [tool_turn(("Read", {"file_path": "README.md"})),
                                       tool_turn(("Grep", {"pattern": "zzqx"})), text_turn("ok")][min(n, 2)])
    result, events = run(project, server)
    assert result.outcome == "success"
    assert {e.data["tier"] for e in injections(events)} <= {"t1"}
    assert result.metrics["prefetched_files"] == 0


def test_conflicting_memories_flagged(project: Any, fake_ollama: Any) -> None:
    a = add(project, "Always use bcrypt for passwords in auth.py", type="decision", pinned=True,
            related_files=["auth.py"])
    b = add(project, "Never use bcrypt for passwords in auth.py; argon2 replaced it", type="decision",
            pinned=True, related_files=["auth.py"])
    server = fake_ollama(lambda b_, n: text_turn("ok"))
    _result, events = run(project, server)
    system = server.messages(0)[0]["content"]
    assert "CONFLICT" in system and f"#{a}" in system and f"#{b}" in system
    assert next(e for e in events if e.kind == "started").data["conflicts"]


def test_xml_format_for_claude_models(project: Any, fake_ollama: Any) -> None:
    add(project, "Pinned rule", type="requirement", pinned=True)
    server = fake_ollama(lambda b, n: text_turn("ok"))
    run(project, server, agent_format="xml")
    assert "<project_memory>" in server.messages(0)[0]["content"]
    server2 = fake_ollama(lambda b, n: text_turn("ok"))
    run(project, server2, agent_format="markdown")
    assert "## Project memory" in server2.messages(0)[0]["content"]
