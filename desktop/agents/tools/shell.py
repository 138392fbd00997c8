"""The Bash tool: commands run in the project folder with a timeout and an output cap."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any

from desktop.agents.tools.confine import ProjectRoot
from desktop.agents.tools.files import ToolOutcome
from desktop.memory.observer.events import cap_text

DEFAULT_TIMEOUT_S = 120.0
MAX_TIMEOUT_S = 600.0
OUTPUT_CAP = 30_000


def _kill_tree(proc: subprocess.Popen[bytes]) -> None:
    """Kill the command and everything it started (its own process group)."""
    try:
        if sys.platform == "win32":
            proc.kill()
        else:
            os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def run_bash(root: ProjectRoot, args: dict[str, Any], *, cancel: Any | None = None,
             default_timeout: float = DEFAULT_TIMEOUT_S) -> ToolOutcome:
    """Run ``command`` with a shell in the project root; stdout+stderr, exit code, capped."""
    command = str(args.get("command") or "").strip()
    if not command:
        return ToolOutcome("No command given.", True)
    timeout = min(MAX_TIMEOUT_S, float(args.get("timeout") or default_timeout))
    started = time.monotonic()
    # A new session/process group so a timeout kills children (e.g. a test server) too.
    kwargs: dict[str, Any] = {"start_new_session": True} if sys.platform != "win32" else {}
    proc = subprocess.Popen(command, shell=True, cwd=root.real, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, **kwargs)
    timed_out = cancelled = False
    while True:
        try:
            out, _ = proc.communicate(timeout=0.2)
            break
        except subprocess.TimeoutExpired:
            if cancel is not None and cancel.is_set():
                cancelled = True
            elif time.monotonic() - started > timeout:
                timed_out = True
            else:
                continue
            _kill_tree(proc)
            out, _ = proc.communicate()
            break
    text = cap_text(out.decode("utf-8", "replace"), OUTPUT_CAP)
    if timed_out:
        return ToolOutcome(f"{text}\n[command timed out after {timeout:.0f} s and was killed]", True)
    if cancelled:
        return ToolOutcome(f"{text}\n[command cancelled]", True)
    code = proc.returncode
    return ToolOutcome(f"{text}\n[exit code {code}]" if code else (text or "(no output)"), code != 0)
