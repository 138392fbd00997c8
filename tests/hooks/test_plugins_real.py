"""Engram as each agent's own plugin (issue 28, item 1), installed with the real CLIs, offline, then a real
session against the local fake model servers: the session is told memories by the plugin's hooks, and
the model can call Engram's MCP server, whose answer is plain text with citable ids.

* Claude Code 2.1: ``claude plugin marketplace add <folder>`` + ``claude plugin install engram@engram``
  on the folder ``engram setup --bundle`` writes (what a user adding the marketplace by hand runs);
* Gemini CLI 0.61 and Codex 0.169: ``engram setup --agent ...`` (which runs ``gemini extensions install``,
  ``codex plugin marketplace add`` + ``codex plugin add`` + ``codex mcp add``);
* all three at once: ``engram setup`` then ``engram setup --remove`` leave each agent as it was.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.agents.fake_sse import Turn
from tests.hooks.conftest import CLI_CACHE, agent_cli, assert_session_recorded, db_rows
from tests.hooks.fake_gemini import FakeGemini, GeminiTurn
from tests.hooks.fake_model import ScriptedClaudeModel
from tests.hooks.fake_responses import CodexTurn, FakeResponses

RULE = "Never log card numbers in the refund handler."
SEARCH = "mcp__plugin_engram_engram__search_memory"  # Claude Code's name for a plugin's MCP tool
PROMPT = f"The refund webhook handler needs work; start by looking at the charge code. {RULE}"


@pytest.fixture
def plugin_env(hook_env: dict[str, str]) -> dict[str, str]:
    """The hook environment with the pinned agent CLIs on PATH (``engram setup`` looks for them there)."""
    for name in ("claude", "codex", "gemini"):
        agent_cli(name)
    codex_home = Path(hook_env["HOME"]) / ".codex"
    codex_home.mkdir(exist_ok=True)
    return {**hook_env, "PATH": f"{hook_env['PATH']}{os.pathsep}{CLI_CACHE / 'node_modules' / '.bin'}",
            "CODEX_HOME": str(codex_home)}


def _run(env: dict[str, str], *argv: str, cwd: Path | None = None, timeout: float = 240) -> str:
    done = subprocess.run(list(argv), env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, cwd=cwd or env["HOME"])
    assert done.returncode == 0, f"{argv}: {done.stdout[-1500:]}{done.stderr[-1500:]}"
    return done.stdout + done.stderr  # some CLIs list on stderr


def _mcp_text(blocks: Any) -> str:
    return json.dumps(blocks, ensure_ascii=False)


def test_claude_code_plugin_from_a_local_marketplace(payments_dir: Path, data_dir: Path, plugin_env: dict[str, str],
                                                    memories: dict[str, int], tmp_path: Path) -> None:
    claude = str(agent_cli("claude"))
    folder = tmp_path / "marketplace"
    _run(plugin_env, "engram", "setup", "--bundle", str(folder))
    _run(plugin_env, claude, "plugin", "marketplace", "add", str(folder))
    _run(plugin_env, claude, "plugin", "install", "engram@engram")
    listed = json.loads(subprocess.run([claude, "plugin", "list", "--json"], env=plugin_env, capture_output=True,
                                       text=True, timeout=60, check=True).stdout)
    assert [p["id"] for p in listed if p["enabled"]] == ["engram@engram"]
    target = str(payments_dir / "core" / "payments.py")
    pinned, gotcha, relevant = memories["pinned"], memories["gotcha"], memories["prompt"]
    searched: dict[str, str] = {}

    def script(body: dict[str, Any], n: int) -> Turn:
        results = [b for m in body["messages"] if isinstance(m.get("content"), list) for b in m["content"]
                   if isinstance(b, dict) and b.get("type") == "tool_result"]
        if not results:
            return Turn("Checking memory.", [(SEARCH, {"query": "refund webhook handler"})])
        if len(results) == 1:
            searched["text"] = _mcp_text(results[0].get("content"))
            return Turn("Reading the charge code.", [("Read", {"file_path": target})])
        return Turn(f"charge() takes euros [Memory #{gotcha}: euros], cents [Memory #{pinned}: cents].")

    with ScriptedClaudeModel(script) as model:
        env = {**plugin_env, "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-test"}
        run = subprocess.run([claude, "-p", PROMPT, "--model", model.model, "--output-format", "json",
                              "--allowedTools", f"{SEARCH},Read"], cwd=payments_dir, env=env, capture_output=True,
                             text=True, timeout=180, stdin=subprocess.DEVNULL)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        result = json.loads(run.stdout)
        requests = [model.all_text(i) for i in range(len(model.model_requests))]
        tools = model.tools(0)
    assert SEARCH in tools and "mcp__plugin_engram_engram__record_memory" in tools  # connected by the first turn
    first = requests[0]
    assert f'<memory id=\\"{pinned}\\"' in first and f'<memory id=\\"{relevant}\\"' in first  # start + prompt
    assert f"[Memory #{gotcha}]" in requests[-1] and "&lt;" not in "".join(requests)  # with the Read
    # the MCP answer: plain text, each memory with its citation
    assert f"[Memory #{relevant}]" in searched["text"] and '\\"result\\"' not in searched["text"]
    assert_session_recorded(data_dir, payments_dir, result["session_id"], "claude-code", RULE)


def test_gemini_cli_extension_installed_by_setup(payments_dir: Path, data_dir: Path, plugin_env: dict[str, str],
                                                 memories: dict[str, int]) -> None:
    gemini = str(agent_cli("gemini"))
    out = _run(plugin_env, "engram", "setup", "--agent", "gemini", cwd=payments_dir)
    assert "Gemini CLI: Engram installed as a plugin" in out
    assert "engram" in _run(plugin_env, gemini, "extensions", "list")
    settings = Path(plugin_env["HOME"]) / ".gemini" / "settings.json"
    data = json.loads(settings.read_text(encoding="utf-8")) if settings.exists() else {}
    settings.write_text(json.dumps({**data, "security": {"auth": {"selectedType": "gemini-api-key"}}}),
                        encoding="utf-8")
    target = str(payments_dir / "core" / "payments.py")
    pinned, gotcha, relevant = memories["pinned"], memories["gotcha"], memories["prompt"]
    seen: dict[str, Any] = {}

    def script(body: dict[str, Any], n: int) -> GeminiTurn:
        responses = [p["functionResponse"] for c in body.get("contents") or [] for p in c.get("parts") or []
                     if "functionResponse" in p]
        names = [d["name"] for t in body.get("tools") or [] for d in t.get("functionDeclarations") or []]
        seen.setdefault("tools", names)
        search = next((name for name in names if name.endswith("search_memory")), "search_memory")
        if not responses:
            return GeminiTurn(call=(search, {"query": "refund webhook handler"}))
        if len(responses) == 1:
            seen["search"] = json.dumps(responses[0], ensure_ascii=False)
            return GeminiTurn(call=("read_file", {"file_path": target}))
        return GeminiTurn(f"charge() takes euros [Memory #{gotcha}: euros], cents [Memory #{pinned}: cents].")

    with FakeGemini(script) as model:
        env = {**plugin_env, "GEMINI_API_KEY": "test-key", "GOOGLE_GEMINI_BASE_URL": model.url,
               "GEMINI_CLI_TRUST_WORKSPACE": "true"}
        run = subprocess.run([gemini, "-p", PROMPT, "-m", "gemini-2.5-flash", "--output-format", "json",
                              "--approval-mode", "yolo"], cwd=payments_dir, env=env, capture_output=True,
                             text=True, timeout=180, stdin=subprocess.DEVNULL)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        requests = [model.text_of(i) for i in range(len(model.model_requests))]
    assert any(name.endswith("search_memory") for name in seen["tools"]), seen["tools"]
    assert f"[#{pinned}]" in requests[0] and f"[#{relevant}]" in requests[0]
    assert f"[Memory #{gotcha}]" in requests[-1] and "&lt;" not in "".join(requests)
    assert f"[Memory #{relevant}]" in seen["search"]
    sessions = db_rows(data_dir, payments_dir, "SELECT DISTINCT session_id FROM external_injections WHERE agent = "
                                               "'gemini'")
    assert len(sessions) == 1
    assert_session_recorded(data_dir, payments_dir, sessions[0][0], "gemini-cli", RULE)


def test_codex_plugin_and_mcp_installed_by_setup(payments_dir: Path, data_dir: Path, plugin_env: dict[str, str],
                                                memories: dict[str, int]) -> None:
    codex = str(agent_cli("codex"))
    out = _run(plugin_env, "engram", "setup", "--agent", "codex", cwd=payments_dir)
    assert "Codex: Engram installed as a plugin" in out
    config = Path(plugin_env["CODEX_HOME"]) / "config.toml"
    text = config.read_text(encoding="utf-8")
    assert '[plugins."engram@engram"]' in text and "[mcp_servers.engram]" in text and "codex_hooks" not in text
    config.write_text(text + f'\n[projects."{payments_dir}"]\ntrust_level = "trusted"\n', encoding="utf-8")
    pinned, gotcha, relevant = memories["pinned"], memories["gotcha"], memories["prompt"]
    seen: dict[str, Any] = {}

    def script(body: dict[str, Any], n: int) -> CodexTurn:
        outputs = [i for i in body.get("input") or [] if i.get("type") == "function_call_output"]
        # Codex offers an MCP server's tools in one namespace tool named mcp__<server>
        names = [f"{t['name']}__{sub['name']}" if t.get("type") == "namespace" else t.get("name") or ""
                 for t in body.get("tools") or [] for sub in (t.get("tools") or [t])]
        seen.setdefault("tools", names)

        if not outputs:
            return CodexTurn(call=("search_memory", {"query": "refund webhook handler"}), namespace="mcp__engram")
        if len(outputs) == 1:
            seen["search"] = json.dumps(outputs[0], ensure_ascii=False)
            return CodexTurn(call=("exec_command", {"cmd": "cat core/payments.py"}))
        return CodexTurn(f"charge() takes euros [Memory #{gotcha}: euros], cents [Memory #{pinned}: c].")

    with FakeResponses(script) as model:
        provider = f'{{name="fake", base_url="{model.url}/v1", wire_api="responses"}}'
        run = subprocess.run([codex, "exec", "--skip-git-repo-check", "--json", "-c", "model_provider=fake",
                              "-c", f"model_providers.fake={provider}", "-m", "fake-model",
                              "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust",
                              PROMPT], cwd=payments_dir, env=plugin_env, capture_output=True, text=True,
                             timeout=180, stdin=subprocess.DEVNULL)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        requests = [model.text_of(i) for i in range(len(model.model_requests))]
    assert any("search_memory" in name for name in seen["tools"]), seen["tools"]
    assert f"#{pinned} [DECISION]" in requests[0] and f"#{relevant} [GOTCHA]" in requests[0]
    assert f"[Memory #{gotcha}]" in requests[-1]
    assert f"[Memory #{relevant}]" in seen["search"]
    sessions = db_rows(data_dir, payments_dir, "SELECT DISTINCT session_id FROM external_injections WHERE agent = "
                                               "'codex'")
    assert len(sessions) == 1
    assert_session_recorded(data_dir, payments_dir, sessions[0][0], "codex", RULE)


def test_setup_installs_into_every_agent_found_and_remove_takes_it_all_out(
        payments_dir: Path, plugin_env: dict[str, str], data_dir: Path) -> None:
    home = Path(plugin_env["HOME"])
    before = {p.relative_to(home) for p in home.rglob("*") if p.is_file()}
    started = time.monotonic()
    out = _run(plugin_env, "engram", "setup", cwd=payments_dir)
    took = time.monotonic() - started
    for name in ("Claude Code", "Codex", "Gemini CLI"):
        assert f"{name}: Engram installed as a plugin" in out, out
    assert f"{payments_dir} is an Engram project" in out
    assert db_rows(data_dir, payments_dir, "SELECT count(*) FROM memories")  # the project exists
    doctor = subprocess.run(["engram", "doctor", "--json"], env=plugin_env, cwd=payments_dir, capture_output=True,
                            text=True, timeout=120)
    report = json.loads(doctor.stdout)
    codes = {(c["name"], c["code"]) for c in report["integration"]}
    assert doctor.returncode == 0 and report["ok"], report["integration"]
    for agent in ("claude-code", "codex", "gemini"):
        assert (f"{agent}.hooks", "plugin") in codes and (f"{agent}.mcp", "mcp_entry") in codes, codes
    again = _run(plugin_env, "engram", "setup", cwd=payments_dir)  # twice: same result, nothing doubled
    assert again.count("installed as a plugin") == 3
    assert '"engram@engram"' in _run(plugin_env, str(agent_cli("claude")), "plugin", "list", "--json")
    removed = _run(plugin_env, "engram", "setup", "--remove", cwd=payments_dir)
    for name in ("Claude Code", "Codex", "Gemini CLI"):
        assert f"{name}: Engram removed" in removed, removed
    assert '"engram@engram"' not in _run(plugin_env, str(agent_cli("claude")), "plugin", "list", "--json")
    assert "engram" not in _run(plugin_env, str(agent_cli("gemini")), "extensions", "list")
    config = (Path(plugin_env["CODEX_HOME"]) / "config.toml").read_text(encoding="utf-8")
    assert "engram" not in config, config
    assert "nothing of Engram's to remove" in _run(plugin_env, "engram", "setup", "--remove", cwd=payments_dir)
    assert took < 240
    assert before <= {p.relative_to(home) for p in home.rglob("*") if p.is_file()}


def test_without_engram_on_path_setup_uses_each_agents_user_settings(
        payments_dir: Path, plugin_env: dict[str, str], tmp_path: Path) -> None:
    """The desktop app (no ``engram`` command on PATH) or a data folder named on the command line: hooks
    and MCP entries in the agents' user settings, by this installation's absolute path; all reversible."""
    home = Path(plugin_env["HOME"])
    other = tmp_path / "elsewhere-data"
    out = _run(plugin_env, "engram", "setup", "--data-dir", str(other), cwd=payments_dir)
    assert out.count("installed through its user settings (hooks and MCP)") == 3, out
    for path in (home / ".claude" / "settings.json", Path(plugin_env["CODEX_HOME"]) / "hooks.json",
                 home / ".gemini" / "settings.json"):
        text = path.read_text(encoding="utf-8")
        assert f"--data-dir {other}" in text and " hook session-start --agent " in text
    assert json.loads((home / ".claude.json").read_text(encoding="utf-8"))["mcpServers"]["engram"]["args"][-3:] \
        == ["mcp", "--data-dir", str(other)]
    assert json.loads((home / ".gemini" / "settings.json").read_text(encoding="utf-8"))["mcpServers"]["engram"]
    assert "[mcp_servers.engram]" in (Path(plugin_env["CODEX_HOME"]) / "config.toml").read_text(encoding="utf-8")
    removed = _run(plugin_env, "engram", "setup", "--remove", cwd=payments_dir)
    assert removed.count("removed (mcp+hooks)") == 3, removed
    assert "engram" not in json.dumps(json.loads((home / ".claude.json").read_text(encoding="utf-8")).get(
        "mcpServers", {}))
    assert not (home / ".gemini" / "settings.json").exists() and not (Path(plugin_env["CODEX_HOME"]) /
                                                                      "hooks.json").exists()
