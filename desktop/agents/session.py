"""AgentSession: Engram's own agent loop, one session per thread, memory-augmented.

The loop: session-start injection (T1 system prompt, T2 prefetched files), then
per step a hook point (the T4 decider and any user hooks), one streamed model
turn, its tool calls (confined, approved, T3-augmented), and observer events.
A provider error ends the session cleanly: the observer still gets SessionEnd
(outcome failure), promotion runs, metrics are saved, and the result carries
the error's stable code.

Threading: ``start()`` runs ``run()`` on a new ``threading.Thread``; the GUI may
instead call ``run()`` inside its own QThread. ``stop()`` ends after the current
step; ``cancel()`` also aborts the model stream and any running command.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from desktop.agents.errors import AgentError
from desktop.agents.hooks.ledger import ENGRAM_AGENT
from desktop.agents.injection.budget import PromptBudget
from desktop.agents.injection.decider import Injection, RecentCall, StepInjectionDecider
from desktop.agents.injection.outcomes import AgentWarnings
from desktop.agents.injection.session_start import StartContext, build_start_context
from desktop.agents.memory_access import StoreMemoryAccess, TimedMemoryAccess
from desktop.agents.messages import AssistantTurn, ChatMessage
from desktop.agents.metrics import TIERS, SessionMetrics, ab_group, save_metrics
from desktop.agents.session_types import (
    ASSISTANT,
    DEFAULT_SYSTEM_PROMPT,
    ERROR,
    FINISHED,
    INJECTION,
    STARTED,
    STEP,
    TEXT,
    TOOL_CALL,
    TOOL_RESULT,
    SessionConfig,
    SessionEvent,
    SessionResult,
)
from desktop.agents.tools.confine import ProjectRoot
from desktop.agents.tools.memory_tools import SessionNotes
from desktop.agents.tools.registry import ToolRegistry, summarize
from desktop.memory.citations import cited_ids
from desktop.memory.observer import events as ev
from desktop.memory.observer.tool_names import canonical_tool, normalize_args
from desktop.memory.triggers.untested import failed_unseen

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.agents")

EventSink = Callable[[SessionEvent], None]


class AgentSession:
    """One run of Engram's agent on one task in one project."""

    def __init__(self, project: Project, config: SessionConfig, *, on_event: EventSink | None = None,
                 memory: Any | None = None, observer: Any | None = None) -> None:
        """``project`` is the open Project; ``memory`` a MemoryAccess (default: the store's, 3 s timeout);
        ``observer`` an Observer to feed (default: a live one from the project's ingestor)."""
        self.project = project
        self.config = config
        self.session_id = config.session_id or f"engram-{uuid.uuid4().hex[:12]}"
        self.on_event = on_event
        self.events: queue.Queue[SessionEvent] = queue.Queue()
        self.root = ProjectRoot(project.info.root)
        self.memory = memory or TimedMemoryAccess(StoreMemoryAccess(project), timeout=config.memory_timeout)
        self.group = config.ab_group or ab_group(self.session_id, project.db.project_id)
        self.tiers = TIERS[self.group]
        self.fmt = config.agent_format or config.provider.agent_format
        self.notes = SessionNotes()
        self.cancel_event = threading.Event()
        self.stop_event = threading.Event()
        self.tools = ToolRegistry(self.root, self.memory, policy=config.approval, session_id=self.session_id,
                                  notes=self.notes, bash_timeout=config.bash_timeout, cancel=self.cancel_event,
                                  memory_tools=bool(self.tiers))
        self.decider = StepInjectionDecider(self.memory, self.fmt, notes=self.notes, phase=config.phase)
        self.budget = PromptBudget(config.provider.context_window)
        self.metrics = SessionMetrics(self.group)
        self.observer = observer
        self._ingestor: Any | None = None
        self._obs_lock = threading.Lock()
        self.messages: list[ChatMessage] = []
        self.result: SessionResult | None = None
        self._thread: threading.Thread | None = None
        self._done = threading.Event()
        self._used_tokens = 0
        self._shown: set[int] = set()  # every memory injected by any tier, for feedback at the end
        self.warnings = AgentWarnings(project, self.session_id, ENGRAM_AGENT)
        self._start_ctx = StartContext()

    # -- control ------------------------------------------------------------------------
    def start(self) -> threading.Thread:
        """Run the session on a new daemon thread; returns the thread."""
        self._thread = threading.Thread(target=self.run, name=f"engram-session-{self.session_id}", daemon=True)
        self._thread.start()
        return self._thread

    def stop(self) -> None:
        """Finish the current step, then end (outcome abandoned)."""
        self.stop_event.set()

    def cancel(self) -> None:
        """End now: abort the model stream and any running command."""
        self.stop_event.set()
        self.cancel_event.set()

    def wait(self, timeout: float | None = None) -> SessionResult | None:
        """Block until the session ended (None on timeout)."""
        self._done.wait(timeout)
        return self.result

    # -- events -------------------------------------------------------------------------
    def _emit(self, kind: str, step: int, **data: Any) -> None:
        event = SessionEvent(self.session_id, kind, step, data)
        self.events.put(event)
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:  # a broken view must not kill the session
                log.exception("session event callback failed")

    def _observe(self, event: Any) -> None:
        if self.observer is None:
            return
        with self._obs_lock:  # observe() is not re-entrant; sessions may feed from helper threads
            self.observer.observe(event)

    # -- run ------------------------------------------------------------------------------
    def run(self) -> SessionResult:
        """Run the whole session in the calling thread; never raises for known failures."""
        cfg = self.config
        outcome, code, message, final_text, step = "failure", None, None, "", 0
        limit = cfg.max_steps
        try:
            self._open_observer()
            now = time.time()
            self._observe(ev.SessionStart(self.session_id, "engram", str(self.root.real), None, cfg.session_type,
                                          now, cfg.parent_session_id))
            self._observe(ev.UserMessage(self.session_id, 0, cfg.task, now))
            limit = self._step_limit()
            self._prepare()
            self._emit(STARTED, 0, session_id=self.session_id, ab_group=self.group, step_limit=limit,
                       t1_memory_ids=self._start_ctx.memory_ids, t1_tokens=self._start_ctx.tokens_t1,
                       prefetched=self._start_ctx.prefetch.paths, conflicts=self._start_ctx.conflicts)
            outcome = "failure"
            while step < limit:
                if self.stop_event.is_set():
                    outcome = "abandoned"
                    break
                step += 1
                self._before_step(step)

                def on_text(delta: str, s: int = step) -> None:  # `s` binds this turn's step now
                    self._emit(TEXT, s, delta=delta)

                turn = cfg.provider.chat(self.messages, self.tools.specs(), on_text=on_text,
                                         cancel=self.cancel_event)
                if self.cancel_event.is_set():
                    outcome = "abandoned"
                    break
                final_text = self._after_turn(step, turn)
                if not turn.tool_calls:
                    self._observe(ev.StepComplete(self.session_id, step, time.time()))
                    self._emit(STEP, step)
                    outcome = "success"
                    break
                for call in turn.tool_calls:
                    self._run_tool(step, call)
                    if self.cancel_event.is_set():
                        break
                self._observe(ev.StepComplete(self.session_id, step, time.time()))
                self._emit(STEP, step)
            else:
                code, message = "step_limit", f"The session reached its step limit ({limit})."
        except AgentError as exc:
            code, message = exc.code, str(exc)
            log.warning("session %s ended: %s (%s)", self.session_id, exc.code, exc)
            self._emit(ERROR, step, code=exc.code, message=str(exc), detail=exc.detail)
        except Exception as exc:  # a bug: still end cleanly and keep what was observed
            code, message = "internal_error", f"{type(exc).__name__}: {exc}"
            log.exception("session %s crashed", self.session_id)
            self._emit(ERROR, step, code=code, message=message, detail=None)
        return self._finish(outcome, step, limit, final_text, code, message)

    def _open_observer(self) -> None:
        if self.observer is not None or not self.config.learn:
            return
        self._ingestor = self.project.observer
        self.observer = self._ingestor.live(self.session_id)

    def _step_limit(self) -> int:
        """The base limit, raised by task calibration (at most 2x, never past the absolute cap)."""
        factor = 1.0
        if self.tiers:
            factor = min(2.0, max(1.0, float(self.memory.calibration_factor(self.config.task))))
        return min(self.config.max_absolute_steps, round(self.config.max_steps * factor))

    def _prepare(self) -> None:
        cfg = self.config
        system = cfg.system_prompt or DEFAULT_SYSTEM_PROMPT
        user = cfg.task
        if "t1" in self.tiers:
            alloc = self.budget.allocate(0)
            self._start_ctx = build_start_context(self.memory, cfg.task, self.root, self.fmt, alloc,
                                                  prefetch="t2" in self.tiers, phase=cfg.phase,
                                                  min_confidence=cfg.min_confidence)
            ctx = self._start_ctx
            self.decider.state.injected.update(ctx.memory_ids)
            if ctx.system_text:
                system = f"{system}\n\n{ctx.system_text}"
                self._record_injection(Injection("t1", "session_start", ctx.system_text, ctx.memory_ids,
                                                 ctx.tokens_t1), 0)
            if ctx.prefetch.text:
                user = f"{cfg.task}\n\n{ctx.prefetch.text}"
                self.metrics.prefetched = ctx.prefetch.paths
                self.metrics.prefetch_tokens = ctx.prefetch.tokens
                self._record_injection(Injection("t2", "prefetch", ctx.prefetch.text, [], ctx.prefetch.tokens), 0)
        self.messages = [ChatMessage("system", system), ChatMessage("user", user)]
        self._used_tokens = (len(system) + len(user)) // 4

    def _record_injection(self, inj: Injection, step: int) -> None:
        self._shown.update(inj.memory_ids)
        if inj.memory_ids:  # the injection ledger is what makes a later citation count as a use
            from desktop.agents.hooks.ledger import ENGRAM_AGENT, record_shown

            record_shown(self.project.db, self.session_id, ENGRAM_AGENT, inj.trigger, inj.memory_ids, inj.tier)
        self.metrics.on_injection(inj.tier, inj.tokens)
        self._emit(INJECTION, step, tier=inj.tier, trigger=inj.trigger, memory_ids=inj.memory_ids,
                   tokens=inj.tokens, content=inj.content)

    def _before_step(self, step: int) -> None:
        """The hook point before every step: T4, then user hooks."""
        if "t4" in self.tiers and step > 1:
            inj = self.decider.decide(step, self.budget.allocate(self._used_tokens))
            if inj is not None:
                self.messages.append(ChatMessage("system", inj.content))
                self._used_tokens += inj.tokens
                self._record_injection(inj, step)
        for hook in self.config.step_hooks:
            try:
                extra = hook(self, step, self.messages)
            except Exception:
                log.exception("step hook failed")
                continue
            if extra:
                self.messages.extend(extra)

    def _after_turn(self, step: int, turn: AssistantTurn) -> str:
        now = time.time()
        if turn.thinking:
            self._observe(ev.Reasoning(self.session_id, step, turn.thinking, now, "thinking"))
        if turn.text:
            self._observe(ev.Reasoning(self.session_id, step, turn.text, now, "text"))
        cited = cited_ids(turn.text)
        if cited:
            self.metrics.cited.update(cited)
        self.messages.append(ChatMessage("assistant", turn.text, list(turn.tool_calls)))
        self.metrics.on_turn(turn.input_tokens, turn.output_tokens)
        self._used_tokens += turn.output_tokens or len(turn.text) // 4
        if turn.input_tokens:
            self._used_tokens = max(self._used_tokens, turn.input_tokens)
        self._emit(ASSISTANT, step, text=turn.text, citations=cited,
                   tool_calls=[{"id": c.id, "name": c.name, "arguments": c.arguments} for c in turn.tool_calls])
        return turn.text

    def _run_tool(self, step: int, call: Any) -> None:
        args = dict(call.arguments or {})
        tool = canonical_tool("engram", call.name)
        files = self.tools.relative_files(call.name, args)
        started = time.time()
        self._observe(ev.ToolCall(self.session_id, step, call.id, tool, call.name,
                                  ev.cap_args(normalize_args(tool, args) | ({"file_path": files[0]} if files else {})),
                                  tuple(files), started))
        self._emit(TOOL_CALL, step, call_id=call.id, tool=call.name, arguments=args,
                   summary=summarize(call.name, args))
        outcome = self.tools.execute(call.name, args, step)
        files = outcome.files or files
        self.metrics.on_tool(step, call.name, files, self.decider.state.dead_end_files)
        self.decider.note_call(RecentCall(step, call.name, args, files))
        output = outcome.output
        added: list[Injection] = []
        if "t3" in self.tiers:
            # Lessons the call's shape triggers (issue 25), then the gotchas of the file it touched.
            failed = outcome.is_error or failed_unseen(args.get("command"), outcome.output)
            shaped = normalize_args(tool, args)
            self.warnings.after_call(call.id, tool, shaped, files, outcome.output, failed=failed, raw_tool=call.name)
            warned = self.decider.warn(tool, shaped, files, output=outcome.output, failed=failed, raw_tool=call.name)
            if warned is not None:
                self.warnings.warned(call.id, warned.memory_ids, summarize(call.name, args))
            augmented = None if outcome.is_error else \
                self.decider.augment(call.name, files, self.budget.allocate(self._used_tokens))
            added = [inj for inj in (warned, augmented) if inj is not None]
            for inj in added:
                output = f"{output}\n\n{inj.content}"
                self._record_injection(inj, step)
        self._observe(ev.ToolResult(self.session_id, step, call.id, tool, ev.cap_text(outcome.output),
                                    outcome.is_error, int((time.time() - started) * 1000), time.time()))
        self.messages.append(ChatMessage("tool", output, tool_call_id=call.id, name=call.name))
        self._used_tokens += len(output) // 4
        self._emit(TOOL_RESULT, step, call_id=call.id, tool=call.name, output=output, is_error=outcome.is_error,
                   augmented=[i for inj in added for i in inj.memory_ids], found=outcome.memory_ids)

    def _finish(self, outcome: str, step: int, limit: int, final_text: str, code: str | None,
                message: str | None) -> SessionResult:
        self.metrics.denied = self.tools.denied
        self.metrics.memory_timeouts = getattr(self.memory, "timeouts", 0)
        state = self.decider.state
        from desktop.agents.metrics import p95

        # A group the run chose (the tour, `engram run --group`) is no random assignment: such a
        # session is left out of any with/without comparison (agents/effect.py).
        metrics = self.metrics.as_dict({"steps": step, "step_limit": limit, "error_code": code,
                                        "ab_random": self.config.ab_group is None,
                                        "notes_recorded": len(self.notes.all()),
                                        "decide_p95_ms": round(p95(state.decide_ms), 3),
                                        "augment_p95_ms": round(p95(state.augment_ms), 3)})
        result = SessionResult(self.session_id, outcome, step, final_text, code, message, self.group, limit,
                               metrics)
        try:
            self._observe(ev.SessionEnd(self.session_id, outcome, time.time()))
            if self._ingestor is not None and self.config.promote and self.observer is not None:
                promo = self._ingestor.finish(self.observer, outcome)
                result.promoted = {"added": len(getattr(promo, "added", []) or []),
                                   "reinforced": len(getattr(promo, "reinforced", []) or [])}
            save_metrics(self.project.db, self.session_id, "engram", self.group, metrics,
                         outcome=outcome).result(30)
            self._record_feedback(outcome)
            self.warnings.close()
        except Exception:  # keep the result even when learning failed
            log.exception("finishing session %s failed", self.session_id)
        self.result = result
        closer = getattr(self.memory, "close", None)
        if callable(closer) and isinstance(self.memory, TimedMemoryAccess):
            closer()
        self._emit(FINISHED, step, **result.as_dict())
        self._done.set()
        return result

    def _record_feedback(self, outcome: str) -> None:
        """Every memory injected this session: cited or ignored (judged only when the session finished).

        Waited for (bounded): once the session has ended, its feedback is in the database.
        """
        from desktop.memory.lifecycle.feedback import record_feedback

        shown = self._shown | set(self.metrics.cited)
        if shown:
            record_feedback(self.project.db, shown, cited=self.metrics.cited, judged=outcome == "success",
                            session_id=self.session_id, source="engram-agent").result(30)
