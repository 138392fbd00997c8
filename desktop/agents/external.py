"""External agents: run Claude Code or Codex on a task and stream their events into the observer.

``claude -p --output-format stream-json --verbose`` and ``codex exec --json``
print one JSON record per line. Each line goes through the existing importers'
record parsers as it arrives, so the observer (and the GUI, through the event
callback) sees the session live. Memory reaches them through the managed block
in CLAUDE.md / AGENTS.md and through Engram's MCP server, passed on the command line.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.agents.errors import ExternalAgentFailed, ExternalAgentMissing
from desktop.agents.managed_block import update_agent_file
from desktop.agents.mcp_server import launch_command
from desktop.agents.memory_access import StoreMemoryAccess, TimedMemoryAccess
from desktop.agents.session_types import ERROR, FINISHED, SessionEvent, SessionResult
from desktop.memory.observer.events import SessionEnd
from desktop.memory.observer.observer import Observer
from desktop.memory.observer.records import ImportResult, Line

log = logging.getLogger("engram.agents")

EXECUTABLES = {"claude-code": "claude", "codex": "codex"}
AgentEventSink = Callable[[Any], None]


def available() -> dict[str, str | None]:
    """Which external agents are installed (name -> path or None)."""
    return {agent: shutil.which(exe) for agent, exe in EXECUTABLES.items()}


def build_command(agent: str, exe: str, task: str, project_dir: Path, *, mcp: bool = True) -> list[str]:
    """The command line for one headless run, with Engram's MCP server attached."""
    command, args = launch_command(project_dir)
    if agent == "claude-code":
        cmd = [exe, "-p", task, "--output-format", "stream-json", "--verbose"]
        if mcp:
            cmd += ["--mcp-config", json.dumps({"mcpServers": {"engram": {"command": command, "args": args}}})]
        return cmd
    cmd = [exe, "exec", "--json"]
    if mcp:
        cmd += ["-c", f"mcp_servers.engram.command={json.dumps(command)}",
                "-c", f"mcp_servers.engram.args={json.dumps(args)}"]
    return [*cmd, task]


class _Parser:
    """Feeds lines to the right importer and returns the events each line produced."""

    def __init__(self, agent: str, cwd: str) -> None:
        self.out = ImportResult()
        self.number = 0
        self.taken = 0
        if agent == "claude-code":
            from desktop.memory.observer.claude_code import _ClaudeImporter

            self.importer: Any = _ClaudeImporter(self.out, None, headless=True, clock=time.time())
            self.feed = lambda rec, n: self.importer.record(Line(n, rec, None))
        else:
            from desktop.memory.observer.codex import _CodexImporter

            self.importer = _CodexImporter(self.out, f"codex-{uuid.uuid4().hex[:8]}", cwd, time.time())
            self.feed = self.importer.exec_record

    def line(self, raw: str) -> list[Any]:
        """Parse one output line; malformed lines are counted and skipped."""
        self.number += 1
        text = raw.strip()
        if not text:
            return []
        try:
            rec = json.loads(text)
        except ValueError:
            self.out.skipped["invalid_json"] += 1
            return []
        if not isinstance(rec, dict):
            return []
        reason = self.feed(rec, self.number)
        if reason:
            self.out.skipped[reason] += 1
        return self.drain()

    def finish(self) -> list[Any]:
        """End the session(s) the importer tracked."""
        self.importer.finish()
        return self.drain()

    def drain(self) -> list[Any]:
        """Events produced since the last drain."""
        fresh = self.out.events[self.taken:]
        self.taken = len(self.out.events)
        return fresh


class ExternalAgentRun:
    """One headless run of Claude Code or Codex in the project, observed live."""

    def __init__(self, project: Any, agent: str, task: str, *, on_event: Callable[[SessionEvent], None] | None = None,
                 on_agent_event: AgentEventSink | None = None, timeout: float = 3600.0, learn: bool = True,
                 managed_block: bool = True, mcp: bool = True) -> None:
        """``agent`` is "claude-code" or "codex"; ``on_agent_event`` receives each parsed AgentEvent."""
        if agent not in EXECUTABLES:
            raise ExternalAgentMissing(f"Unknown external agent {agent!r}.")
        self.project, self.agent, self.task = project, agent, task
        self.on_event, self.on_agent_event = on_event, on_agent_event
        self.timeout, self.learn, self.managed_block, self.mcp = timeout, learn, managed_block, mcp
        self.events: list[Any] = []
        self.observers: dict[str, Observer] = {}
        self._proc: subprocess.Popen[str] | None = None
        self._cancel = threading.Event()

    def cancel(self) -> None:
        """Terminate the external agent."""
        self._cancel.set()
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()

    def _emit(self, kind: str, **data: Any) -> None:
        if self.on_event is not None:
            self.on_event(SessionEvent(data.get("session_id", ""), kind, 0, data))

    def _observe(self, events: list[Any]) -> None:
        for e in events:
            self.events.append(e)
            obs = self.observers.get(e.session_id)
            if obs is None:
                obs = self.observers[e.session_id] = Observer(e.session_id)
            obs.observe(e)
            if self.on_agent_event is not None:
                self.on_agent_event(e)

    def run(self) -> SessionResult:
        """Launch, stream, observe, promote; raises ExternalAgentMissing when not installed."""
        exe = shutil.which(EXECUTABLES[self.agent])
        if exe is None:
            raise ExternalAgentMissing(f"{EXECUTABLES[self.agent]} is not installed (not on PATH).")
        root = Path(self.project.info.root)
        memory = TimedMemoryAccess(StoreMemoryAccess(self.project))
        try:
            if self.managed_block:
                update_agent_file(memory, root, self.agent, self.task)
        finally:
            memory.close()
        parser = _Parser(self.agent, str(root))
        cmd = build_command(self.agent, exe, self.task, root, mcp=self.mcp)
        code: str | None = None
        message: str | None = None
        self._proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                      encoding="utf-8", errors="replace", stdin=subprocess.DEVNULL)
        timer = threading.Timer(self.timeout, self.cancel)
        timer.start()
        try:
            assert self._proc.stdout is not None
            for raw in self._proc.stdout:
                self._observe(parser.line(raw))
            rc = self._proc.wait()
            stderr = self._proc.stderr.read() if self._proc.stderr else ""
        finally:
            timer.cancel()
            for stream in (self._proc.stdout, self._proc.stderr):  # no pipe outlives the run
                if stream is not None:
                    stream.close()
        self._observe(parser.finish())
        if self._cancel.is_set():
            code, message = "cancelled", "The external agent was stopped."
        elif rc != 0:
            code, message = ExternalAgentFailed.code, f"{EXECUTABLES[self.agent]} exited with {rc}: {stderr[-300:]}"
            self._emit(ERROR, code=code, message=message)
        ends = [e for e in self.events if isinstance(e, SessionEnd)]
        outcome = "abandoned" if self._cancel.is_set() else ("failure" if rc != 0 else
                                                             (ends[-1].outcome if ends else "unknown"))
        sid = next(iter(self.observers), "")
        result = SessionResult(sid, outcome, max((o.sp.step for o in self.observers.values()), default=0),
                               error_code=code, error_message=message, ab_group="external",
                               metrics={"events": len(self.events), "skipped": dict(parser.out.skipped)})
        if self.learn and self.observers:
            self._promote(outcome)
        self._emit(FINISHED, **result.as_dict())
        return result

    def _promote(self, outcome: str) -> None:
        """Promote each observed session; event keys are recorded so a later transcript import skips them."""
        from desktop.composition import observer_for

        ingestor = observer_for(self.project)
        for sid, obs in self.observers.items():
            keys = [e.event_key for e in self.events if e.session_id == sid and e.event_key]
            try:
                ingestor.learn_digest(obs.finalize(None if obs.ended else outcome), event_keys=keys)
            except Exception:
                log.exception("promoting external session %s failed", sid)
