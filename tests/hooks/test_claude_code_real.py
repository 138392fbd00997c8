"""A real ``claude -p`` session (Claude Code 2.1, from npm) with Engram's hooks installed by
``engram hooks install``, against a scripted model on 127.0.0.1 speaking the Messages API.

The model reads core/payments.py, edits it, and answers citing two memories. What the
model server received shows what the hooks told the model, and when.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.agents.fake_sse import Turn
from tests.hooks.conftest import agent_cli, assert_session_recorded, db_rows
from tests.hooks.fake_model import ScriptedClaudeModel

RULE = "Never log card numbers in the refund handler."
PROMPT = f"The refund webhook handler needs work; start by looking at the charge code. {RULE}"


def _results(body: dict[str, Any]) -> int:
    return sum(1 for m in body["messages"] if isinstance(m.get("content"), list)
               for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")


def test_claude_code_session_gets_memory_from_hooks(payments_dir: Path, data_dir: Path, hook_env: dict[str, str],
                                                   memories: dict[str, int]) -> None:
    claude = agent_cli("claude")
    target = str(payments_dir / "core" / "payments.py")
    pinned, gotcha, relevant = memories["pinned"], memories["gotcha"], memories["prompt"]

    def script(body: dict[str, Any], n: int) -> Turn:
        done = _results(body)
        if done == 0:
            return Turn("Reading the charge code.", [("Read", {"file_path": target})])
        if done == 1:
            return Turn("Fixing it.", [("Edit", {"file_path": target, "old_string": "amount * 100",
                                                 "new_string": "round(amount * 100)"})])
        return Turn(f"Done: amounts stay integer cents [Memory #{pinned}: integer cents] and charge() takes "
                    f"euros [Memory #{gotcha}: euros].")

    installed = subprocess.run(["engram", "hooks", "install", "--agent", "claude-code", "--project",
                                str(payments_dir), "--data-dir", str(data_dir)], env=hook_env, capture_output=True,
                               text=True, timeout=60)
    assert installed.returncode == 0, installed.stderr
    settings = json.loads((payments_dir / ".claude" / "settings.local.json").read_text(encoding="utf-8"))
    assert set(settings["hooks"]) == {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
                                      "PostToolUseFailure", "Stop", "SessionEnd"}

    with ScriptedClaudeModel(script) as model:
        env = {**hook_env, "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-test"}
        run = subprocess.run([str(claude), "-p", PROMPT, "--model", model.model, "--permission-mode", "acceptEdits",
                              "--output-format", "json"], cwd=payments_dir, env=env, capture_output=True,
                             text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        result = json.loads(run.stdout)
        assert result["is_error"] is False, result
        requests = [model.all_text(i) for i in range(len(model.model_requests))]
    session_id = result["session_id"]

    first, after_read = requests[0], requests[1]
    assert "&lt;" not in "".join(requests) and "&gt;" not in "".join(requests)  # no HTML escape reaches the model
    # Session start: the pinned memory, with its id and the citation instruction.
    assert f'<memory id=\\"{pinned}\\" type=\\"decision\\"' in first
    assert "cite it inline as [Memory #" in first
    # Prompt submit: the memory relevant to the prompt; never the candidate.
    assert f'<memory id=\\"{relevant}\\"' in first
    assert f'id=\\"{memories["candidate"]}\\"' not in json.dumps(requests)
    # The file's gotcha is said when the agent is about to read the file (PreToolUse), and Claude
    # Code hands it to the model with that call's result.
    assert f"[Memory #{gotcha}]" not in first
    assert f"[Memory #{gotcha}]" in after_read and "customers pay 100x" in after_read
    assert "round(amount * 100)" in (payments_dir / "core" / "payments.py").read_text(encoding="utf-8")

    told = db_rows(data_dir, payments_dir, "SELECT event, memory_id, cited FROM external_injections "
                                           "WHERE session_id = ? ORDER BY id", (session_id,))
    assert (("session_start", pinned, 1) in told and ("prompt", relevant, 0) in told
            and ("before_tool", gotcha, 1) in told), told
    # The observer holds the session's events and learned from it (session end hands its work to a
    # process of its own: waited for here).
    assert_session_recorded(data_dir, payments_dir, session_id, "claude-code", RULE)
    seen = db_rows(data_dir, payments_dir, "SELECT count(*) FROM observer_seen_events WHERE session_id = ?",
                   (session_id,))[0][0]
    assert seen >= 4
    # Cited memories count as used (and helped); the one shown and ignored does not.
    uses = dict(db_rows(data_dir, payments_dir, "SELECT id, access_count FROM memories"))
    assert uses[pinned] == 1 and uses[gotcha] == 1 and uses[relevant] == 0
    helped = db_rows(data_dir, payments_dir, "SELECT memory_id FROM audit_log WHERE action = 'feedback'")
    assert {pinned, gotcha} <= {r[0] for r in helped}
