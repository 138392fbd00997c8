"""Running one hook: read stdin, ask the warm service or answer inline, never break the agent.

``run`` is what ``engram hook EVENT`` calls. The work happens on a worker thread
under a hard time budget; whatever goes wrong (bad stdin, unknown event, a folder
that is no Engram project, a locked or corrupt database, a bug, the budget running
out) is logged to ``hooks.log`` in the data folder and the hook prints nothing
and exits 0. Only a complete answer within the budget is printed.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.agents.hooks.client import NO_SERVICE_ENV
from desktop.agents.hooks.protocol import (
    BUDGETS,
    SESSION_END,
    SESSION_START,
    STOP,
    BadPayload,
    HookCall,
    parse,
    render_output,
)

if TYPE_CHECKING:
    from desktop.settings import Settings

log = logging.getLogger("engram.hooks")

DETACHED_ENV = "ENGRAM_HOOK_DETACHED"  # set in the process a session-end hook hands its work to


def setup_logging(data_dir: Path) -> None:
    """Hooks log to ``<data>/logs/hooks.log`` only: stdout belongs to the agent, stderr to its UI.

    The log is the core's private log (privacy/logfiles.py): redacted, 0600, scrubbed by deletes,
    and a write that fails (a full disk) is dropped instead of printed.
    """
    from desktop.memory.privacy.logfiles import private_log_handler

    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    logging.raiseExceptions = False  # nothing of logging's own trouble may reach stderr
    root.addHandler(private_log_handler(data_dir, "hooks.log"))
    root.setLevel(logging.INFO)


def hooks_token_budget(settings: Settings) -> int:
    """``hooks.token_budget`` of the user's settings (default 1,500)."""
    from desktop.agents.hooks.protocol import DEFAULT_TOKEN_BUDGET

    try:
        value = (settings.extra.get("hooks") or {}).get("token_budget")
        return int(value) if value else DEFAULT_TOKEN_BUDGET
    except Exception:  # a broken settings file must not break the agent
        return DEFAULT_TOKEN_BUDGET


def find_project_root(data_dir: Path, cwd: str) -> Path | None:
    """The folder (cwd or a parent) that has an Engram database in ``data_dir``; None otherwise."""
    from desktop.memory.projects import ProjectRegistry

    start = Path(cwd)
    if not start.is_absolute() or not start.is_dir():
        return None
    registry = ProjectRegistry(data_dir)
    for folder in [start.resolve(), *start.resolve().parents]:
        if registry.info(folder).db_path.exists():
            return folder
    return None


def answer_inline(call: HookCall, data_dir: Path, token_budget: int | None) -> str:
    """Open the project, run the handler, close (queued writes are flushed). ``token_budget``
    None: the settings' budget."""
    from desktop.agents.hooks.handlers import Handlers
    from desktop.composition import Engram

    root = find_project_root(data_dir, call.cwd)
    if root is None:
        log.info("%s: %s is not an Engram project; nothing to do", call.event, call.cwd)
        return ""
    # A hook opens the database on every agent event: no whole-file integrity check (a damaged
    # page fails the read that touches it, which is logged like any failure), and the memory
    # upkeep (conflicts, anchors) only for the events that add memories.
    app = Engram.for_data_dir(data_dir)  # the user's settings, read once for this hook
    project = app.open_project(root, remember=False, check=False, maintain=call.event in (STOP, SESSION_END))
    try:
        return Handlers(project, token_budget=token_budget or hooks_token_budget(app.settings)).handle(call)
    finally:
        project.close()


def answer(call: HookCall, data_dir: Path, token_budget: int | None, deadline: float) -> str:
    """Through the warm service when it answers, else inline (starting the service for next time)."""
    if not os.environ.get(NO_SERVICE_ENV):
        from desktop.agents.hooks import client, service

        reply = client.ask(data_dir, call, token_budget, timeout=max(0.05, deadline - time.monotonic()))
        if reply is not None:
            return reply
        service.start_in_background(data_dir)
    return answer_inline(call, data_dir, token_budget)


def detach(call: HookCall, stdin: bytes, data_dir: Path) -> bool:
    """Session end: hand the work (import and promotion, seconds) to a process of its own and return.

    Nobody reads a session-end answer, and the agent may not wait: Claude Code gives a
    plugin's SessionEnd hooks 1.5 s before it exits. The detached process outlives the
    agent; False when it could not be started (the hook then does the work itself).
    """
    import subprocess

    from desktop.agents.launch import engram_argv, spawn_environment

    if find_project_root(data_dir, call.cwd) is None:
        return True  # no Engram project here: nothing to finalise, nothing to start
    from desktop.agents.hooks.finalising import hold

    held = hold(data_dir)  # the next session start waits while the child holds it (finalising.py)
    try:
        home = Path(data_dir).resolve()
        child = subprocess.Popen([*engram_argv(), "hook", call.event, "--agent", call.agent, "--data-dir", str(home)],
                                 cwd=str(home), env={**spawn_environment(), DETACHED_ENV: "1"},
                                 stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 start_new_session=True, close_fds=True,
                                 pass_fds=(held,) if held is not None else ())
        assert child.stdin is not None
        child.stdin.write(stdin)
        child.stdin.close()
    except (OSError, ValueError) as exc:
        log.warning("could not hand %s of %s to its own process: %s", call.event, call.session_id, exc)
        return False
    finally:
        if held is not None:
            os.close(held)
    log.info("hook %s/%s session=%s: handed to process %d", call.agent, call.event, call.session_id, child.pid)
    return True


def run(agent: str, event: str, stdin: bytes, data_dir: Path, *, token_budget: int | None = None,
        budget_s: float | None = None) -> str:
    """The text to print for one hook ('' for nothing); never raises, never exceeds the budget.

    ``token_budget`` None: the settings' ``hooks.token_budget``, read by whoever answers (the
    service, or this process inline), so the client does not load the settings."""
    started = time.monotonic()
    try:
        call = parse(agent, event, stdin)
    except BadPayload as exc:
        log.warning("hook %s/%s ignored: %s", agent, event, exc)
        return ""
    if call.event == SESSION_END and not os.environ.get(DETACHED_ENV) and detach(call, stdin, data_dir):
        return ""
    limit = budget_s if budget_s is not None else BUDGETS.get(call.event, 3.0)
    deadline = started + limit
    if call.event == SESSION_START:  # what the last session showed should be learned by now
        from desktop.agents.hooks.finalising import WAIT_FOR_LEARNING_S, wait_for_pending

        wait_for_pending(data_dir, min(WAIT_FOR_LEARNING_S, limit / 2))
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["text"] = answer(call, data_dir, token_budget, deadline)
        except Exception as exc:  # a memory system must never break the user's agent
            log.exception("hook %s/%s failed: %s", agent, call.event, exc)
    worker = threading.Thread(target=work, name="engram-hook", daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    if worker.is_alive():
        log.warning("hook %s/%s gave up after %.1f s (budget)", agent, call.event, limit)
        box["timeout"] = True
        return ""
    text = str(box.get("text") or "")
    log.info("hook %s/%s session=%s: %d chars in %.0f ms", agent, call.event, call.session_id, len(text),
             (time.monotonic() - started) * 1000)
    return render_output(call, text)
