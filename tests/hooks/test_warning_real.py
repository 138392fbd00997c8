"""Issue 25 with the real agent CLIs: a command that failed in an earlier session (and the
command that worked instead) is learned from that session through Engram's hooks, and the next
session hears the lesson before it runs the failing command again.

Two real sessions per CLI (``claude -p``, ``codex exec``, ``gemini -p``) against scripted model
servers on 127.0.0.1: the first runs ``git show HEAD --no-stat`` (git refuses the flag) and then
``git show HEAD --stat``; the second tries ``--no-stat`` again. What the model server received
after that call shows what the model was told. Claude Code and Codex add the warning as context
before the call; Gemini CLI can only refuse a call before it runs, so there the known failure is
refused with the warning as its reason. With Claude Code, a tool-argument lesson too: an MCP tool
(``fake_mcp_tracker``, a stdio server the CLI starts) refused an argument's value in one session, and
the next hears what went through before the same call.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.agents.fake_sse import Turn
from tests.hooks.conftest import agent_cli, db_rows
from tests.hooks.fake_gemini import FakeGemini, GeminiTurn
from tests.hooks.fake_model import ScriptedClaudeModel
from tests.hooks.fake_responses import CodexTurn, FakeResponses

BAD, GOOD = "git show HEAD --no-stat", "git show HEAD --stat"
PROMPT = "Show me what the last commit changed."


def _install(agent: str, payments_dir: Path, data_dir: Path, env: dict[str, str]) -> None:
    done = subprocess.run(["engram", "hooks", "install", "--agent", agent, "--project", str(payments_dir),
                           "--data-dir", str(data_dir)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def _lesson(data_dir: Path, payments_dir: Path, signal: str = "command_fix") -> int:
    # the session end hands its work to a process of its own (runner.detach): wait for it
    deadline = time.monotonic() + 90
    while True:
        rows = db_rows(data_dir, payments_dir, "SELECT id FROM memories WHERE deprecated = 0 AND candidate = 0 "
                                               f"AND json_extract(metadata, '$.signal') = '{signal}'")
        if rows or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert len(rows) == 1, db_rows(data_dir, payments_dir, "SELECT type, content, candidate FROM memories")
    return int(rows[0][0])


def _claude_turns(commands: list[str]) -> Callable[[dict[str, Any], int], Turn]:
    def script(body: dict[str, Any], n: int) -> Turn:
        done = sum(1 for m in body["messages"] if isinstance(m.get("content"), list)
                   for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
        if done < len(commands):
            return Turn("Looking.", [("Bash", {"command": commands[done], "description": "show the commit"})])
        return Turn("That is what the last commit changed.")
    return script


def test_claude_code_hears_the_lesson_before_the_failing_command(payments_dir: Path, data_dir: Path,
                                                                 hook_env: dict[str, str]) -> None:
    claude = agent_cli("claude")
    _install("claude-code", payments_dir, data_dir, hook_env)

    def session(commands: list[str]) -> list[str]:
        with ScriptedClaudeModel(_claude_turns(commands)) as model:
            env = {**hook_env, "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-test"}
            run = subprocess.run([str(claude), "-p", PROMPT, "--model", model.model, "--allowedTools",
                                  "Bash", "--output-format", "json"], cwd=payments_dir, env=env,
                                 capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
            assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
            return [model.all_text(i) for i in range(len(model.model_requests))]

    session([BAD, GOOD])
    lesson = _lesson(data_dir, payments_dir)
    second = session([BAD])
    assert f"[Memory #{lesson}]" not in second[0]  # nothing said before there was a reason
    assert f"[Memory #{lesson}]" in second[1] and "--no-stat" in second[1]


def test_codex_hears_the_lesson_before_the_failing_command(payments_dir: Path, data_dir: Path,
                                                           hook_env: dict[str, str]) -> None:
    codex = agent_cli("codex")
    _install("codex", payments_dir, data_dir, hook_env)
    codex_home = Path(hook_env["HOME"]) / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(f'[projects."{payments_dir}"]\ntrust_level = "trusted"\n',
                                            encoding="utf-8")

    def session(commands: list[str]) -> list[str]:
        def script(body: dict[str, Any], n: int) -> CodexTurn:
            done = sum(1 for i in body.get("input") or [] if i.get("type") == "function_call_output")
            if done < len(commands):
                return CodexTurn(call=("exec_command", {"cmd": commands[done]}))
            return CodexTurn("That is what the last commit changed.")

        with FakeResponses(script) as model:
            provider = f'{{name="fake", base_url="{model.url}/v1", wire_api="responses"}}'
            env = {**hook_env, "CODEX_HOME": str(codex_home)}
            run = subprocess.run([str(codex), "exec", "--skip-git-repo-check", "--json", "-c", "model_provider=fake",
                                  "-c", f"model_providers.fake={provider}", "-m", "fake-model",
                                  "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust",
                                  PROMPT], cwd=payments_dir, env=env, capture_output=True, text=True, timeout=150,
                                 stdin=subprocess.DEVNULL)
            assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
            return [model.text_of(i) for i in range(len(model.model_requests))]

    session([BAD, GOOD])
    lesson = _lesson(data_dir, payments_dir)
    second = session([BAD])
    assert f"[Memory #{lesson}]" not in second[0]
    assert f"[Memory #{lesson}]" in second[-1] and "--no-stat" in second[-1]


def test_gemini_refuses_the_known_failure_with_the_lesson(payments_dir: Path, data_dir: Path,
                                                          hook_env: dict[str, str]) -> None:
    gemini = agent_cli("gemini")
    _install("gemini", payments_dir, data_dir, hook_env)
    settings = Path(hook_env["HOME"]) / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}), encoding="utf-8")

    def session(commands: list[str]) -> list[str]:
        def script(body: dict[str, Any], n: int) -> GeminiTurn:
            done = sum(1 for c in body.get("contents") or [] for p in c.get("parts") or [] if "functionResponse" in p)
            if done < len(commands):
                return GeminiTurn(call=("run_shell_command", {"command": commands[done]}))
            return GeminiTurn("That is what the last commit changed.")

        with FakeGemini(script) as model:
            env = {**hook_env, "GEMINI_API_KEY": "test-key", "GOOGLE_GEMINI_BASE_URL": model.url,
                   "GEMINI_CLI_TRUST_WORKSPACE": "true"}
            run = subprocess.run([str(gemini), "-p", PROMPT, "-m", "gemini-2.5-flash", "--output-format", "json",
                                  "--yolo"], cwd=payments_dir, env=env, capture_output=True, text=True, timeout=150,
                                 stdin=subprocess.DEVNULL)
            assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
            return [model.text_of(i) for i in range(len(model.model_requests))]

    session([BAD, GOOD])
    lesson = _lesson(data_dir, payments_dir)
    second = session([BAD])
    assert "Tool execution blocked" in second[-1] and f"[Memory #{lesson}]" in second[-1]


TICKET = "mcp__tracker__create_ticket"


def test_claude_code_hears_a_tool_argument_lesson_before_the_mcp_call(payments_dir: Path, data_dir: Path,
                                                                     hook_env: dict[str, str]) -> None:
    """An MCP tool (a stdio server Claude Code starts) refused queue "Ops" and took "Platform" in one
    session; in the next, before the same call with "Ops", the model hears what went through."""
    claude = agent_cli("claude")
    _install("claude-code", payments_dir, data_dir, hook_env)
    server = {"command": sys.executable, "args": [str(Path(__file__).with_name("fake_mcp_tracker.py"))]}
    config = json.dumps({"mcpServers": {"tracker": server}})

    def session(queues: list[str]) -> list[str]:
        def script(body: dict[str, Any], n: int) -> Turn:
            done = sum(1 for m in body["messages"] if isinstance(m.get("content"), list)
                       for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
            if done < len(queues):
                return Turn("Filing it.", [(TICKET, {"title": "Export fails on empty workspaces",
                                                     "queue": queues[done]})])
            return Turn("Filed.")

        with ScriptedClaudeModel(script) as model:
            env = {**hook_env, "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-test"}
            run = subprocess.run([str(claude), "-p", "File a ticket for the export bug.", "--model", model.model,
                                  "--allowedTools", TICKET, "--mcp-config", config, "--output-format", "json"],
                                 cwd=payments_dir, env=env, capture_output=True, text=True, timeout=120,
                                 stdin=subprocess.DEVNULL)
            assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
            return [model.all_text(i) for i in range(len(model.model_requests))]

    first = session(["Ops", "Platform"])
    assert "Argument Validation Error" in first[1]  # the real server refused it, through the real CLI
    lesson = _lesson(data_dir, payments_dir, "tool_args")
    second = session(["Ops"])
    assert f"[Memory #{lesson}]" not in second[0]
    assert f"[Memory #{lesson}]" in second[1] and 'queue \\"Platform\\"' in second[1]
