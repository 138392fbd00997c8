"""The observer, live, from hook calls: one checkpointed scratchpad per external session.

A hook process lives for one event, so the session's observer state lives in its
scratchpad checkpoint (``scratchpad_checkpoints``): each after-tool hook restores
it, observes the tool call and its result, and checkpoints it again. At session
end the transcript, when the agent wrote one, is imported and promoted (the
importer sees everything, including the replies); otherwise the live scratchpad
itself is finalised and promoted. Either way the promotion drops the checkpoint.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.agents.hooks.protocol import OBSERVER_AGENT, HookCall
from desktop.memory.observer.events import cap_text

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.hooks")
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)\s*$", re.M)


def tool_files(call: HookCall, root: Path) -> tuple[str, list[str]]:
    """(canonical tool, project-relative files it touched) of an after-tool call."""
    from desktop.memory.observer.tool_names import (
        BASH,
        canonical_tool,
        classify_shell,
        edit_or_write,
        file_paths_of,
        normalize_args,
        patch_files,
    )

    agent = OBSERVER_AGENT[call.agent]
    tool = canonical_tool(agent, call.tool_name)
    args = dict(call.tool_input)
    patch = next((v for k, v in args.items() if k in ("input", "patch") and isinstance(v, str)), "")
    if tool == BASH and "*** Begin Patch" in str(args.get("command", "")):
        patch = str(args.get("command"))
    if patch and "*** Begin Patch" in patch:
        touched = patch_files(patch)
        tool = edit_or_write(k for k, _ in touched)
        args["paths"] = [p for _, p in touched]
        if touched:
            args.setdefault("file_path", touched[0][1])
    elif tool == BASH:
        tool, args = classify_shell(args)
    args = normalize_args(tool, args)
    cwd = call.cwd or str(root)
    files = [str(Path(f)) if Path(f).is_absolute() else f
             for f in file_paths_of(tool, args, str(root), workdir=cwd)]
    return tool, [f for f in files if not Path(f).is_absolute()]


def output_of(call: HookCall) -> tuple[str, bool]:
    """The call's result as text, and whether it failed (a failed-tool event always did)."""
    from desktop.agents.hooks.protocol import TOOL_FAILED

    text, error = _output_text(call.tool_response)
    if not error and isinstance(call.tool_response, dict):
        code = call.tool_response.get("exit_code", call.tool_response.get("exitCode"))
        error = isinstance(code, int) and code != 0
    if not error:  # Gemini CLI's shell tool reports a failure only in its text ("Exit Code: 128")
        found = _EXIT_CODE.search(text[-2000:])
        error = found is not None and found.group(1) != "0"
    return text, error or call.event == TOOL_FAILED


def _output_text(response: Any) -> tuple[str, bool]:
    """The tool result as text, and whether it reports an error."""
    if isinstance(response, str):
        return response, False
    if isinstance(response, dict):
        error = bool(response.get("is_error") or response.get("error") or response.get("success") is False)
        for key in ("output", "stdout", "content", "llmContent", "returnDisplay"):
            value = response.get(key)
            if isinstance(value, str):
                return value, error
        inner = response.get("file")
        if isinstance(inner, dict) and isinstance(inner.get("content"), str):
            return str(inner["content"]), error
        return cap_text(json.dumps(response, ensure_ascii=False, default=str)), error
    return cap_text(json.dumps(response, ensure_ascii=False, default=str)) if response is not None else "", False


_session_locks: dict[tuple[str, str], threading.Lock] = {}
_locks_guard = threading.Lock()
#: In the warm service: each running session's observer, kept in memory between its tool events
#: (restoring and compressing the whole scratchpad on every call cost 50-200 ms), with the step
#: last checkpointed. None in a hook process of its own, which checkpoints every call.
_warm: dict[tuple[str, str], tuple[Any, int, Project]] | None = None
SAVE_EVERY = 10
MAX_WARM = 64


def keep_observers_warm() -> None:
    """Keep live observers in memory (the warm service calls this once)."""
    global _warm
    if _warm is None:
        _warm = {}


def _key(project: Project, session_id: str) -> tuple[str, str]:
    """A session is known by its project's database and its id: two projects (or two test
    databases) may see the same session id, and neither may restore the other's observer."""
    return (str(project.info.db_path), session_id)


def _session_lock(key: tuple[str, str]) -> threading.Lock:
    """One lock per session: parallel tool calls of a session (the warm service answers them on
    several threads) must not restore the same checkpoint and overwrite each other's call."""
    with _locks_guard:
        if len(_session_locks) > 256:
            _session_locks.clear()
        return _session_locks.setdefault(key, threading.Lock())


def observe_tool(project: Project, call: HookCall, tool: str, files: list[str]) -> None:
    """Restore the session's scratchpad, observe this call and its result, checkpoint it."""
    with _session_lock(_key(project, call.session_id)):
        _observe_tool(project, call, tool, files)


def _observe_tool(project: Project, call: HookCall, tool: str, files: list[str]) -> None:
    from desktop.memory.observer.events import SessionStart, StepComplete, ToolCall, ToolResult
    from desktop.memory.observer.ingest import CheckpointStore
    from desktop.memory.observer.observer import Observer

    store = CheckpointStore(project.db)
    key = _key(project, call.session_id)
    held = _warm.get(key) if _warm is not None else None
    pad = None if held is not None else store.load(call.session_id)
    obs = held[0] if held is not None else Observer(call.session_id, scratchpad=pad)
    saved = held[1] if held is not None else (obs.sp.step if pad is not None else -SAVE_EVERY)
    now = time.time()
    if held is None and pad is None:
        obs.observe(SessionStart(call.session_id, OBSERVER_AGENT[call.agent], str(project.info.root), None, "main",
                                 now))
    step = obs.sp.step + 1
    call_id = str(call.raw.get("tool_use_id") or call.raw.get("call_id") or f"hook-{step}")
    args = dict(call.tool_input)
    if files:
        args.setdefault("file_path", files[0])
    output, error = output_of(call)
    obs.observe(ToolCall(call.session_id, step, call_id, tool, call.tool_name, args, tuple(files), now))
    obs.observe(ToolResult(call.session_id, step, call_id, tool, cap_text(output), error, None, now))
    obs.observe(StepComplete(call.session_id, step, now))
    if _warm is None:
        # Waited for: the session's next tool event (another process) restores this checkpoint.
        store.save(call.session_id, obs.checkpoint(), wait=True)
        return
    if step - saved >= SAVE_EVERY:  # a crash of the service loses at most the last few calls
        store.save(call.session_id, obs.checkpoint(), wait=False)
        saved = step
    _warm[key] = (obs, saved, project)
    if len(_warm) > MAX_WARM:  # the oldest session is checkpointed (in its own project) and let go
        oldest = next(iter(_warm))
        old_obs, _, old_project = _warm.pop(oldest)
        try:
            CheckpointStore(old_project.db).save(oldest[1], old_obs.checkpoint(), wait=False)
        except Exception:  # its project was closed meanwhile: the session end reads its transcript
            log.warning("could not checkpoint session %s of a closed project", oldest[1])


def _release(project: Project, session_id: str) -> None:
    """The session is ending: checkpoint its warm observer (if this process holds one) and drop it."""
    from desktop.memory.observer.ingest import CheckpointStore

    if _warm is None:
        return
    with _session_lock(_key(project, session_id)):
        held = _warm.pop(_key(project, session_id), None)
        if held is not None:
            CheckpointStore(project.db).save(session_id, held[0].checkpoint(), wait=True)


def finalise(project: Project, call: HookCall) -> None:
    """Promote the session: from its transcript when there is one, else from the live scratchpad."""
    from desktop.memory.observer.ingest import CheckpointStore
    from desktop.memory.observer.observer import Observer

    _release(project, call.session_id)
    ingestor = project.observer
    path = Path(call.transcript_path) if call.transcript_path else None
    if path is not None and path.is_file():
        report = ingestor.ingest_file(path, finished=True)
        log.info("session %s finalised from its transcript: %s", call.session_id, report.status)
        # "empty": the importer found nothing it can read (a format it does not know yet); the live
        # scratchpad, when there is one, still holds the session.
        if report.status in ("imported", "unchanged", "duplicate"):
            # The transcript covered the session: the live scratchpad's work is done.
            _drop_checkpoint(project, call.session_id)
            return
    pad = CheckpointStore(project.db).load(call.session_id)
    if pad is not None:
        result = ingestor.finish(Observer(call.session_id, scratchpad=pad), "unknown")
        log.info("session %s finalised from live events: %d added", call.session_id, len(result.added))


def _drop_checkpoint(project: Project, session_id: str) -> None:
    from desktop.memory.store.writer import FnOp, Tx

    def write(tx: Tx) -> None:
        tx.execute("DELETE FROM scratchpad_checkpoints WHERE session_id = ?", (session_id,))
    project.db.writer.submit(FnOp("drop_hook_checkpoint", write))
