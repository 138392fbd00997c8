"""Fixtures of the attack tests: the hook tests' real ``engram hook`` processes and project."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.hooks.conftest import data_dir, engram_bin, hook_env, payments_dir, run_hook  # noqa: F401
from tests.hooks.conftest import memories as payment_memories  # noqa: F401

#: runner.DETACHED_ENV, spelled out so these tests also run against code from before it (git stash checks).
DETACHED_ENV = "ENGRAM_HOOK_DETACHED"
NATIVE = {"stop": "Stop", "prompt": "UserPromptSubmit", "session-start": "SessionStart", "session-end": "SessionEnd",
          "after-tool": "PostToolUse"}


def fire(env: dict[str, str], event: str, root: Path, session: str, **fields: Any) -> str:
    """Fire one hook as Claude Code does; it must stay silent on stderr and exit 0.

    A session end does its work in the hook's own process (the hand-off process's mode), so
    what it learned is in the database when this returns.
    """
    if event == "session-end":
        env = {**env, DETACHED_ENV: "1"}
    done = run_hook(env, event, {"session_id": session, "cwd": str(root), "hook_event_name": NATIVE[event], **fields})
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout
