"""The observer, live, from hook calls.

In the warm service each running session's observer stays in memory between its tool events
and is checkpointed (``scratchpad_checkpoints``) every few calls. A hook answered in a process of
its own writes the call down in the session's journal (``observer/journal``) instead: restoring
the observer there cost the agent 100-200 ms a call. The observer catches up on the journal when
it next runs: the service's first event of the session, or the session's end. At session end the
transcript, when the agent wrote one, is imported and promoted (the importer sees everything,
including the replies); otherwise the live observer is finalised and promoted. Either way the
promotion drops the checkpoint and the journal.
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
from desktop.memory.observer.capping import cap_text
from desktop.memory.observer.journal import JournalCall, append, catch_up, drop, observe_call
from desktop.memory.text.lazy_re import lazy

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.hooks")
_EXIT_CODE = lazy(r"^Exit Code: (-?\d+)\s*$", re.M)


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
    """Hand this call and its result to the session's observer: in the warm service, the observer
    it keeps; in a hook process of its own, the session's journal (``observer/journal``), which
    the observer catches up on later, so the agent does not wait for the detectors to load."""
    args = dict(call.tool_input)
    if files:
        args.setdefault("file_path", files[0])
    output, error = output_of(call)
    entry = JournalCall(tool, call.tool_name, args, list(files), cap_text(output), error,
                        str(call.raw.get("tool_use_id") or call.raw.get("call_id") or ""), time.time())
    if _warm is None:
        append(project.db, call.session_id, OBSERVER_AGENT[call.agent], str(project.info.root), entry)
        return
    with _session_lock(_key(project, call.session_id)):
        _observe_warm(project, call, entry, _warm)


def _observe_warm(project: Project, call: HookCall, entry: JournalCall,
                  warm: dict[tuple[str, str], tuple[Any, int, Project]]) -> None:
    from desktop.memory.observer.events import SessionStart
    from desktop.memory.observer.ingest import CheckpointStore
    from desktop.memory.observer.observer import Observer

    store = CheckpointStore(project.db)
    key = _key(project, call.session_id)
    held = warm.get(key)
    if held is None:  # the session's first event here: first what hooks before the service wrote down
        pad = store.load(call.session_id)
        obs, last = catch_up(project.db, call.session_id, pad)
        if obs is None:
            obs = Observer(call.session_id)
            obs.observe(SessionStart(call.session_id, OBSERVER_AGENT[call.agent], str(project.info.root), None,
                                     "main", entry.at))
        if last:
            store.save(call.session_id, obs.checkpoint(), wait=True)
            drop(project.db, call.session_id, up_to=last)
        saved = obs.sp.step if pad is not None or last else -SAVE_EVERY
    else:
        obs, saved = held[0], held[1]
    observe_call(obs, call.session_id, entry)
    if obs.sp.step - saved >= SAVE_EVERY:  # a crash of the service loses at most the last few calls
        store.save(call.session_id, obs.checkpoint(), wait=False)
        saved = obs.sp.step
    warm[key] = (obs, saved, project)
    if len(warm) > MAX_WARM:  # the oldest session is checkpointed (in its own project) and let go
        oldest = next(iter(warm))
        old_obs, _, old_project = warm.pop(oldest)
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
    """Promote the session: from its transcript when there is one, else from the live observer.
    Then the sessions that never ended (an agent killed mid-session) left a checkpoint or a journal
    hours ago are learned from too: a user of the hooks alone may never open the app, which
    otherwise recovers them."""
    from desktop.memory.project_services import recover_crashed_sessions

    try:
        _finalise(project, call)
    finally:
        recover_crashed_sessions(project)


def _finalise(project: Project, call: HookCall) -> None:
    from desktop.memory.observer.ingest import CheckpointStore

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
    obs, _ = catch_up(project.db, call.session_id, pad)
    if obs is not None:  # the promotion drops the checkpoint and the journal in its own write
        result = ingestor.finish(obs, "unknown")
        log.info("session %s finalised from live events: %d added", call.session_id, len(result.added))


def _drop_checkpoint(project: Project, session_id: str) -> None:
    from desktop.memory.store.writer import FnOp, Tx

    def write(tx: Tx) -> None:
        tx.execute("DELETE FROM scratchpad_checkpoints WHERE session_id = ?", (session_id,))
        tx.execute("DELETE FROM hook_journal WHERE session_id = ?", (session_id,))
    project.db.writer.submit(FnOp("drop_hook_checkpoint", write))
