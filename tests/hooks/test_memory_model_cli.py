"""Issue 26: memory synthesis through the agent CLI the user is logged into (``claude -p``, ``codex exec``,
``gemini -p``), each the real pinned CLI against a scripted model on 127.0.0.1; and the hooks door
reading the same settings (a session that ends through the hooks is synthesised by the chosen CLI)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from desktop.agents.cli_model import AgentCLIModel
from desktop.agents.json_model import ConfiguredModel
from desktop.memory.observer.evidence import CommandRun, SessionEvidence
from desktop.memory.observer.model_synthesis import REPLY_SCHEMA, SYSTEM, ModelSynthesizer
from desktop.memory.observer.observer import SessionDigest
from desktop.memory.store.database import Database
from desktop.settings import Settings
from tests.agents.fake_sse import Turn
from tests.hooks.conftest import agent_cli, db_rows
from tests.hooks.fake_gemini import FakeGemini, GeminiTurn
from tests.hooks.fake_model import ScriptedClaudeModel
from tests.hooks.fake_responses import CodexTurn, FakeResponses

MEMORY = {"type": "workflow_recipe", "content": "Run the tests with `mise run test` from the project root.",
          "files": [], "commands": ["mise run test"], "values": []}
REPLY = json.dumps({"memories": [MEMORY]})


def _digest() -> SessionDigest:
    evidence = SessionEvidence("s-model", "claude-code", "/proj", ["Please make the tests pass."],
                               [CommandRun("mise run test", True, "ok  42 passed")], [], ["src/a.go"], ["src/a.go"])
    return SessionDigest("s-model", "claude-code", "interactive", "success", "/proj", 1.0, 2.0, "", 3, 9,
                         evidence=evidence)


def _env(hook_env: dict[str, str], **extra: str) -> dict[str, str]:
    return {**{k: v for k, v in hook_env.items() if k != "ENGRAM_DATA_DIR"}, **extra}


def _synthesize(db: Database, model: AgentCLIModel) -> list[Any]:
    synth = ModelSynthesizer(db, model)
    reports = synth.after_session(_digest(), finished=True)
    return [(r.status, r.error) for r in reports]


def _stored(db: Database) -> list[tuple[str, int, int]]:
    return db.reads.conn().execute("SELECT content, candidate, needs_review FROM memories").fetchall()


def test_claude_code_writes_memories_headless_strict_json(db: Database, hook_env: dict[str, str]) -> None:
    seen: list[dict[str, Any]] = []

    def script(body: dict[str, Any], n: int) -> Turn:
        seen.append(body)
        return Turn("", [("StructuredOutput", json.loads(REPLY))])

    with ScriptedClaudeModel(script) as fake:
        env = _env(hook_env, ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="sk-test")
        model = AgentCLIModel("claude-cli", agent_cli("claude"), model=fake.model, schema=REPLY_SCHEMA,
                              token_cap=2000, env=env)
        assert _synthesize(db, model) == [("written", "")]
    # headless, no tools but the structured reply, our system prompt, the evidence as the prompt
    assert [t["name"] for t in seen[0].get("tools") or []] == ["StructuredOutput"]
    assert SYSTEM[:60] in json.dumps(seen[0].get("system"))
    assert "mise run test" in json.dumps(seen[0]["messages"])
    # a model's memory is a candidate waiting for review, never injected on its own word
    assert _stored(db) == [(MEMORY["content"], 1, 1)]
    assert model.last_usage["usage"]["input_tokens"] > 0


def test_codex_writes_memories_headless(db: Database, hook_env: dict[str, str], tmp_path: Path) -> None:
    bodies: list[dict[str, Any]] = []

    def script(body: dict[str, Any], n: int) -> CodexTurn:
        bodies.append(body)
        return CodexTurn(REPLY)

    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    with FakeResponses(script) as fake:
        provider = f'{{name="fake", base_url="{fake.url}/v1", wire_api="responses"}}'
        model = AgentCLIModel("codex-cli", agent_cli("codex"), model="fake-model", schema=REPLY_SCHEMA,
                              env=_env(hook_env, CODEX_HOME=str(codex_home), OPENAI_API_KEY="sk-test"),
                              extra_args=["-c", "model_provider=fake", "-c", f"model_providers.fake={provider}"])
        assert _synthesize(db, model) == [("written", "")]
    text = json.dumps(bodies[0])
    assert "mise run test" in text and "memories a developer of this project" in text
    assert bodies[0].get("text", {}).get("format", {}).get("type") == "json_schema"  # the schema reached it
    assert _stored(db) == [(MEMORY["content"], 1, 1)]


def test_gemini_cli_writes_memories_headless(db: Database, hook_env: dict[str, str]) -> None:
    settings = Path(hook_env["HOME"]) / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}), encoding="utf-8")

    def script(body: dict[str, Any], n: int) -> GeminiTurn:
        return GeminiTurn(REPLY)

    with FakeGemini(script) as fake:
        env = _env(hook_env, GEMINI_API_KEY="test-key", GOOGLE_GEMINI_BASE_URL=fake.url)
        model = AgentCLIModel("gemini-cli", agent_cli("gemini"), model="gemini-2.5-flash", env=env)
        assert _synthesize(db, model) == [("written", "")]
        prompts = [fake.text_of(i) for i in range(len(fake.model_requests))]
    assert any("mise run test" in p and "memories a developer of this project" in p for p in prompts)
    assert _stored(db) == [(MEMORY["content"], 1, 1)]


def test_a_reply_that_invents_a_command_is_dropped(db: Database, hook_env: dict[str, str]) -> None:
    invented = {**MEMORY, "content": "Deploy with `make ship-it` on Fridays.", "commands": ["make ship-it"]}

    def script(body: dict[str, Any], n: int) -> Turn:
        return Turn("", [("StructuredOutput", {"memories": [invented]})])

    with ScriptedClaudeModel(script) as fake:
        env = _env(hook_env, ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="sk-test")
        model = AgentCLIModel("claude-cli", agent_cli("claude"), model=fake.model, schema=REPLY_SCHEMA, env=env)
        synth = ModelSynthesizer(db, model)
        (report,) = synth.after_session(_digest(), finished=True)
    assert report.status == "none" and report.dropped[0][1] == "command not in evidence: make ship-it"
    assert _stored(db) == []


def test_token_cap_bounds_what_is_sent() -> None:
    model = AgentCLIModel("claude-cli", "/bin/false", token_cap=1000)
    assert len(model.capped("x" * 100_000)) < 4100 and model.capped("short") == "short"


def test_a_cli_that_fails_learns_nothing_and_says_why(db: Database, tmp_path: Path) -> None:
    broken = tmp_path / "claude"
    broken.write_text("#!/bin/sh\necho 'not logged in' >&2\nexit 3\n", encoding="utf-8")
    broken.chmod(0o755)
    reports = _synthesize(db, AgentCLIModel("claude-cli", broken, schema=REPLY_SCHEMA))
    assert reports == [("failed", "AgentCLIError")] and _stored(db) == []


def test_the_choice_made_in_settings_reaches_a_running_door(tmp_path: Path) -> None:
    """The app saves settings.json; a long-running door (the hook service) follows it at the next session."""
    data = tmp_path / "data"
    data.mkdir()
    door = Settings.load(data)
    built: list[str] = []

    def factory(s: Any) -> Any:
        built.append(s.memory_model)
        return None if s.memory_model in ("auto", "none") else object()

    model = ConfiguredModel(door, factory)
    assert not model.available()
    app = Settings.load(data)
    app.memory_model = "claude-cli"
    app.save()
    os.utime(data / "settings.json", (1e9, 1e9))  # a different mtime than any earlier read
    assert model.available() and built == ["auto", "claude-cli"]


def test_session_ended_through_the_hooks_is_synthesised_by_the_chosen_cli(
        payments_dir: Path, data_dir: Path, hook_env: dict[str, str], memories: dict[str, int]) -> None:
    """The hooks read the same settings as the app: ``memory_model = claude-cli`` chosen there makes the
    session-end hook run ``claude -p`` on the finished session's evidence."""
    claude = agent_cli("claude")
    settings = Settings.load(data_dir)
    settings.memory_model = "claude-cli"
    settings.extra["agent_cli_paths"] = {"claude-cli": str(claude)}
    settings.save()
    installed = subprocess.run(["engram", "hooks", "install", "--agent", "claude-code", "--project",
                                str(payments_dir), "--data-dir", str(data_dir)], env=hook_env, capture_output=True,
                               text=True, timeout=60)
    assert installed.returncode == 0, installed.stderr
    synthesis: list[dict[str, Any]] = []

    def script(body: dict[str, Any], n: int) -> Turn:
        if any(t.get("name") == "StructuredOutput" for t in body.get("tools") or []):  # the synthesis call
            synthesis.append(body)
            memory = {**MEMORY, "content": "Run `python -m pytest -q` to check the payments code.",
                      "commands": ["python -m pytest -q"]}
            return Turn("", [("StructuredOutput", {"memories": [memory]})])
        done = sum(1 for m in body["messages"] if isinstance(m.get("content"), list)
                   for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
        if done == 0:
            return Turn("Running the tests.", [("Bash", {"command": "python -m pytest -q"})])
        return Turn("The tests ran.")

    with ScriptedClaudeModel(script) as fake:
        env = {**hook_env, "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": "sk-test"}
        run = subprocess.run([str(claude), "-p", "Check the payments tests.", "--model", fake.model,
                              "--allowedTools", "Bash(python -m pytest -q)", "--output-format", "json"],
                             cwd=payments_dir, env=env, capture_output=True, text=True, timeout=180,
                             stdin=subprocess.DEVNULL)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        deadline = time.monotonic() + 90  # the session end is finished by a detached process
        while not synthesis and time.monotonic() < deadline:
            time.sleep(0.3)
    assert synthesis, "the session-end hook did not call the chosen CLI"
    assert "python -m pytest -q" in json.dumps(synthesis[0]["messages"])
    sql = "SELECT content, candidate FROM memories WHERE tags LIKE '%model_synthesis%'"
    deadline = time.monotonic() + 30
    while not (rows := db_rows(data_dir, payments_dir, sql)) and time.monotonic() < deadline:
        time.sleep(0.3)
    assert rows == [("Run `python -m pytest -q` to check the payments code.", 1)]
