"""A real ``codex exec`` session (Codex 0.169, from npm) with Engram's hooks (``.codex/hooks.json``
behind the ``codex_hooks`` feature), against a scripted model on 127.0.0.1 speaking the Responses API."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.hooks.conftest import agent_cli, assert_session_recorded, db_rows
from tests.hooks.fake_responses import CodexTurn, FakeResponses

RULE = "Never log card numbers in the refund handler."
PROMPT = f"The refund webhook handler needs work; start by looking at the charge code. {RULE}"


def test_codex_session_gets_memory_from_hooks(payments_dir: Path, data_dir: Path, hook_env: dict[str, str],
                                             memories: dict[str, int]) -> None:
    codex = agent_cli("codex")
    pinned, gotcha, relevant = memories["pinned"], memories["gotcha"], memories["prompt"]

    def script(body: dict[str, Any], n: int) -> CodexTurn:
        done = any(i.get("type") == "function_call_output" for i in body.get("input") or [])
        if not done:
            return CodexTurn(call=("exec_command", {"cmd": "cat core/payments.py"}))
        return CodexTurn(f"charge() takes euros #{gotcha} [Memory #{gotcha}: euros], cents [Memory #{pinned}: c].")

    installed = subprocess.run(["engram", "hooks", "install", "--agent", "codex", "--project", str(payments_dir),
                                "--data-dir", str(data_dir)], env=hook_env, capture_output=True, text=True,
                               timeout=60)
    assert installed.returncode == 0, installed.stderr
    codex_home = Path(hook_env["HOME"]) / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    # Codex reads a project's .codex/ only for a trusted project.
    (codex_home / "config.toml").write_text(f'[projects."{payments_dir}"]\ntrust_level = "trusted"\n',
                                            encoding="utf-8")
    with FakeResponses(script) as model:
        provider = f'{{name="fake", base_url="{model.url}/v1", wire_api="responses"}}'
        env = {**hook_env, "CODEX_HOME": str(codex_home)}
        run = subprocess.run([str(codex), "exec", "--skip-git-repo-check", "--json", "-c", "model_provider=fake",
                              "-c", f"model_providers.fake={provider}", "-m", "fake-model",
                              "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust", PROMPT],
                             cwd=payments_dir, env=env, capture_output=True, text=True, timeout=150,
                             stdin=subprocess.DEVNULL)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        requests = [model.text_of(i) for i in range(len(model.model_requests))]
    assert len(requests) >= 2, run.stdout[-2000:]
    first, after_read = requests[0], requests[-1]
    assert "&lt;" not in "".join(requests) and "&gt;" not in "".join(requests)  # no HTML escape reaches the model
    assert f"#{pinned} [DECISION]" in first and "cite it inline as [Memory #" in first  # session start (plain)
    assert f"#{relevant} [GOTCHA]" in first  # the prompt's memory
    assert f"#{memories['candidate']} [" not in json.dumps(requests)
    # The file's gotcha is said before `cat` reads it (PreToolUse), and reaches the model with its result.
    assert f"[Memory #{gotcha}]" not in first and f"[Memory #{gotcha}]" in after_read
    sessions = db_rows(data_dir, payments_dir, "SELECT DISTINCT session_id FROM external_injections "
                                               "WHERE agent = 'codex'")
    assert len(sessions) == 1
    told = db_rows(data_dir, payments_dir, "SELECT event, memory_id, cited FROM external_injections "
                                           "WHERE session_id = ?", (sessions[0][0],))
    assert ("before_tool", gotcha, 1) in told and ("session_start", pinned, 1) in told, told
    uses = dict(db_rows(data_dir, payments_dir, "SELECT id, access_count FROM memories"))
    assert uses[gotcha] == 1 and uses[relevant] == 0
    assert_session_recorded(data_dir, payments_dir, sessions[0][0], "codex", RULE)
