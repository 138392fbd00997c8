"""A real ``gemini -p`` session (Gemini CLI 0.61, from npm) with Engram's hooks, against a scripted
model on 127.0.0.1 speaking the Gemini API (``GOOGLE_GEMINI_BASE_URL``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.hooks.conftest import agent_cli, assert_session_recorded, db_rows
from tests.hooks.fake_gemini import FakeGemini, GeminiTurn

RULE = "Never log card numbers in the refund handler."
PROMPT = f"The refund webhook handler needs work; start by looking at the charge code. {RULE}"


def test_gemini_cli_session_gets_memory_from_hooks(payments_dir: Path, data_dir: Path, hook_env: dict[str, str],
                                                  memories: dict[str, int]) -> None:
    gemini = agent_cli("gemini")
    target = str(payments_dir / "core" / "payments.py")
    pinned, gotcha, relevant = memories["pinned"], memories["gotcha"], memories["prompt"]

    def script(body: dict[str, Any], n: int) -> GeminiTurn:
        answered = any("functionResponse" in p for c in body.get("contents") or [] for p in c.get("parts") or [])
        if not answered:
            return GeminiTurn(call=("read_file", {"file_path": target}))
        return GeminiTurn(f"charge() takes euros [Memory #{gotcha}: euros], amounts are cents "
                          f"[Memory #{pinned}: cents].")

    installed = subprocess.run(["engram", "hooks", "install", "--agent", "gemini", "--project", str(payments_dir),
                                "--data-dir", str(data_dir)], env=hook_env, capture_output=True, text=True,
                               timeout=60)
    assert installed.returncode == 0, installed.stderr
    settings = Path(hook_env["HOME"]) / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}), encoding="utf-8")

    with FakeGemini(script) as model:
        env = {**hook_env, "GEMINI_API_KEY": "test-key", "GOOGLE_GEMINI_BASE_URL": model.url,
               "GEMINI_CLI_TRUST_WORKSPACE": "true"}
        run = subprocess.run([str(gemini), "-p", PROMPT, "-m", "gemini-2.5-flash", "--output-format", "json"],
                             cwd=payments_dir, env=env, capture_output=True, text=True, timeout=150,
                             stdin=subprocess.DEVNULL)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        requests = [model.text_of(i) for i in range(len(model.model_requests))]
    assert len(requests) >= 2, requests
    first, after_read = requests[0], requests[-1]
    assert "&lt;" not in "".join(requests) and "&gt;" not in "".join(requests)  # no HTML escape reaches the model
    assert f"[#{pinned}]" in first and "cite it inline as [Memory #" in first  # session start (Markdown)
    assert f"[#{relevant}]" in first  # before the agent: the prompt's memory
    assert f"[#{memories['candidate']}]" not in json.dumps(requests)
    # Gemini CLI's BeforeTool cannot add context: the file's gotcha comes after read_file.
    assert f"[Memory #{gotcha}]" not in first and f"[Memory #{gotcha}]" in after_read
    sessions = db_rows(data_dir, payments_dir, "SELECT DISTINCT session_id FROM external_injections "
                                               "WHERE agent = 'gemini'")
    assert len(sessions) == 1
    told = db_rows(data_dir, payments_dir, "SELECT event, memory_id, cited FROM external_injections "
                                           "WHERE session_id = ?", (sessions[0][0],))
    assert ("after_tool", gotcha, 1) in told and ("session_start", pinned, 1) in told, told
    uses = dict(db_rows(data_dir, payments_dir, "SELECT id, access_count FROM memories"))
    assert uses[gotcha] == 1 and uses[relevant] == 0
    assert_session_recorded(data_dir, payments_dir, sessions[0][0], "gemini-cli", RULE)
