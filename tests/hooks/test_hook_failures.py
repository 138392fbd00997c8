"""Whatever a hook is given, it exits 0 and prints nothing to the model unless it has memory to give."""

from __future__ import annotations

import json
import time
from pathlib import Path

import apsw
import pytest

from desktop.memory.projects import ProjectRegistry
from tests.hooks.conftest import run_hook


def _payload(cwd: Path, event: str = "UserPromptSubmit", **extra: object) -> dict[str, object]:
    return {"session_id": "s-1", "transcript_path": "", "cwd": str(cwd), "hook_event_name": event, **extra}


@pytest.mark.parametrize("stdin", ["", "   \n", "not json at all {", "[1, 2, 3]", '"a string"', "{}",
                                   '{"session_id": 5, "cwd": []}', "\x00\xff garbage"])
def test_bad_stdin_prints_nothing(hook_env: dict[str, str], stdin: str, memories: dict[str, int]) -> None:
    done = run_hook(hook_env, "prompt", stdin)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_unknown_event_and_agent(hook_env: dict[str, str], payments_dir: Path, memories: dict[str, int]) -> None:
    payload = _payload(payments_dir, prompt="refund webhook handler")
    for event, agent in (("PreCompactSomething", "claude-code"), ("prompt", "cursor"), ("", "claude-code")):
        done = run_hook(hook_env, event, payload, agent=agent)
        assert (done.returncode, done.stdout) == (0, ""), (event, agent)
    # a payload for another event than the one the command was installed for
    done = run_hook(hook_env, "session-start", payload)
    assert (done.returncode, done.stdout) == (0, "")


def test_cwd_that_is_no_project(hook_env: dict[str, str], tmp_path: Path, data_dir: Path,
                                memories: dict[str, int]) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for cwd in (elsewhere, tmp_path / "missing", Path("relative/path")):
        done = run_hook(hook_env, "session-start", _payload(cwd, "SessionStart", source="startup"))
        assert (done.returncode, done.stdout) == (0, ""), cwd
    # no database was created for the stranger folder
    assert not ProjectRegistry(data_dir).info(elsewhere).db_path.exists()


def test_prompt_with_memory_prints_the_agents_json(hook_env: dict[str, str], payments_dir: Path,
                                                   memories: dict[str, int]) -> None:
    done = run_hook(hook_env, "prompt", _payload(payments_dir, prompt="Is the refund webhook handler idempotent?"))
    assert done.returncode == 0 and done.stderr == ""
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    assert f'<memory id="{memories["prompt"]}"' in out["additionalContext"]
    # the same prompt again in the same session: already shown, nothing more
    again = run_hook(hook_env, "prompt", _payload(payments_dir, prompt="Is the refund webhook handler idempotent?"))
    assert (again.returncode, again.stdout) == (0, "")


def test_locked_database_gives_up_within_the_budget(hook_env: dict[str, str], payments_dir: Path, data_dir: Path,
                                                     memories: dict[str, int]) -> None:
    db_path = ProjectRegistry(data_dir).info(payments_dir).db_path
    holder = apsw.Connection(str(db_path))
    holder.setbusytimeout(10_000)  # the open project's upkeep (anchoring the gotcha) may be mid-write
    holder.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        done = run_hook(hook_env, "prompt", _payload(payments_dir, prompt="refund webhook handler idempotent"),
                        extra=["--budget", "1.5"])
        elapsed = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert (done.returncode, done.stdout) == (0, "")
    assert elapsed < 8, elapsed  # the budget, plus interpreter start on a loaded machine


def test_corrupt_database(hook_env: dict[str, str], payments_dir: Path, data_dir: Path,
                          memories: dict[str, int]) -> None:
    db_path = ProjectRegistry(data_dir).info(payments_dir).db_path
    for suffix in ("-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    db_path.write_bytes(b"this is not a database" * 500)
    for event, name in (("session-start", "SessionStart"), ("prompt", "UserPromptSubmit"),
                        ("after-tool", "PostToolUse"), ("session-end", "SessionEnd")):
        done = run_hook(hook_env, event, _payload(payments_dir, name, prompt="refund webhook", tool_name="Read",
                                                  tool_input={"file_path": str(payments_dir / "core/payments.py")}))
        assert (done.returncode, done.stdout) == (0, ""), event
    assert db_path.read_bytes().startswith(b"this is not a database")  # nothing was overwritten
    log = (data_dir / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert "failed" in log
