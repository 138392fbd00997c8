"""What Engram does at each lifecycle event of an external agent.

* session start: T1 (pinned and critical memories, global and module memories,
  where the last session stopped, recipes, conflicts) plus the gotchas of files
  with uncommitted changes and the prefetch plan, within a token budget; on
  ``compact``/``resume`` the memories the session had already been shown come back.
* prompt: memories relevant to the prompt above the trust threshold, or nothing.
* before a tool: the lessons whose trigger the call matches and the gotchas of the file it
  reads or edits, not yet shown (``moments``);
* after a tool: the call goes to the session's live observer (checkpointed); a failure gets
  the lesson that knows it at once (``moments``).
* stop: memories cited in the reply are recorded as used (and helped); memories
  shown and not cited stay "shown" in the ledger.
* session end: the session is finalised and promoted from its transcript.

Every read goes through :class:`StoreMemoryAccess` (the core retrieval/injection
door), so candidates and memories kept from injection never reach the agent.
"""

from __future__ import annotations

import logging
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.agents.hooks import ledger
from desktop.agents.hooks.protocol import (
    AFTER_TOOL,
    BEFORE_TOOL,
    DEFAULT_TOKEN_BUDGET,
    PROMPT,
    SESSION_END,
    SESSION_START,
    STOP,
    TOOL_FAILED,
    HookCall,
)
from desktop.agents.memory_access import StoreMemoryAccess
from desktop.memory.text.lazy_re import lazy
from desktop.memory.trust import injectable
from desktop.memory.types import Memory

# What only session start, prompt and stop use is imported there: a hook process answering a tool
# call inline (every call, issue 25) loads none of it.
if TYPE_CHECKING:
    from desktop.agents.injection.formatting import Section
    from desktop.memory.project import Project
    from desktop.memory.retrieval.service import SearchService

log = logging.getLogger("engram.hooks")

PROMPT_SHARE = 0.4          # a prompt's memories get at most this share of the session budget
FORMATS = {"claude-code": "xml", "codex": "plain", "gemini": "markdown"}
# Context the CLI itself prepends to the user's words (Gemini CLI's session context with the
# folder tree, reminders, earlier hook output): not what the user asked about.
_CONTEXT_BLOCKS = lazy(r"<(session_context|system-reminder|hook_context)>.*?</\1>", re.S)


class HookMemoryAccess(StoreMemoryAccess):
    """The core memory door without the background model load.

    A hook process lives for a fraction of a second: it uses the warm service's
    hybrid search when it runs inside ``engram serve`` (built there in the
    background) and FTS5 otherwise, and never starts loading a model it would not
    live to use.
    """

    def __init__(self, project: Project) -> None:
        """One instance per hook event: the prefetch ranking is computed once per event."""
        super().__init__(project)
        self._prefetch: dict[str, list[tuple[str, float]]] = {}

    def _search_service(self) -> SearchService | None:
        return self.project.search_if_built()

    def prefetch_candidates(self, task: str) -> list[tuple[str, float]]:
        """The core's ranking, remembered for this event: T1 (modules) and the work-in-progress
        section both ask, and each asking runs git three times."""
        if task not in self._prefetch:
            self._prefetch[task] = super().prefetch_candidates(task)
        return self._prefetch[task]


def trust_threshold(project: Project) -> float:
    """The injection threshold of the project's trust level (Cautious when unset)."""
    return project.preferences.injection_floor()


def relevant(prompt: str, m: Memory) -> bool:
    """True when the memory shares enough content words with the prompt to be about it."""
    from desktop.memory.text.tokens import query_terms

    asked = set(query_terms(prompt))
    if not asked:
        return False
    known = set(query_terms(f"{m.content} {' '.join(m.related_files)} {' '.join(m.tags)}"))
    shared = asked & known
    return len(shared) >= min(2, len(asked))


class Handlers:
    """The handlers for one open project (kept warm by the service, or built per hook)."""

    def __init__(self, project: Project, *, token_budget: int = DEFAULT_TOKEN_BUDGET) -> None:
        """``project``: the open project whose agents' events these handlers answer."""
        self.project = project
        self.token_budget = max(200, int(token_budget))
        self.root = Path(project.info.root)
        self._local = threading.local()

    @property
    def memory(self) -> HookMemoryAccess:
        """The memory door of the event being handled (the service handles events on several threads)."""
        memory: HookMemoryAccess | None = getattr(self._local, "memory", None)
        if memory is None:  # called outside handle() (tests, tools): a fresh door
            return HookMemoryAccess(self.project)
        return memory

    def handle(self, call: HookCall) -> str:
        """The context text for the model ('' for nothing)."""
        handler = {SESSION_START: self.session_start, PROMPT: self.prompt, BEFORE_TOOL: self.before_tool,
                   AFTER_TOOL: self.after_tool, TOOL_FAILED: self.tool_failed, STOP: self.stop,
                   SESSION_END: self.session_end}[call.event]
        self._local.memory = HookMemoryAccess(self.project)
        try:
            return handler(call)
        finally:
            self._local.memory = None

    # -- session start ---------------------------------------------------------------------
    def session_start(self, call: HookCall) -> str:
        """What holds before any task (``start``); after compact/resume, what the session had been shown.

        One block says each memory once: the memories shown again come first in it (formatting.render).
        """
        from desktop.agents.hooks.shell_folder import forget_folder
        from desktop.agents.hooks.start import start_context
        from desktop.agents.injection.formatting import Section, fit

        fmt = FORMATS[call.agent]
        if call.source != "compact":
            forget_folder(self.project.db, call.session_id)
        shown = ledger.shown_ids(self.project.db, call.session_id)
        first: list[Section] = []
        event = "session_start"
        if call.source in ("compact", "resume") and shown:
            event = call.source
            again = fit(self._injectable(ledger.shown_ids(self.project.db, call.session_id, injected_only=True)),
                        self.token_budget // 2)
            if again:
                title = "Memory you were shown before the context was compacted" if call.source == "compact" \
                    else "Memory you were shown earlier in this session"
                first.append(Section(title, again))
        text, ids = start_context(self.project, self.memory, self.root, fmt, self.token_budget,
                                  trust_threshold(self.project), {m.id for s in first for m in s.memories}, first)
        if not text:
            return ""
        self._shown(call, event, ids, call.source or "startup")
        return text

    # -- prompt ------------------------------------------------------------------------------
    def prompt(self, call: HookCall) -> str:
        """Memories relevant to the prompt above the trust threshold; nothing when none is."""
        from desktop.agents.injection.formatting import Section, fit, render
        from desktop.memory.observer.known_already import named_in
        from desktop.memory.observer.tool_names import is_local_command
        from desktop.memory.privacy.boundary import redact_then_cut
        from desktop.memory.triggers.untested import asked_anyway
        from desktop.memory.triggers.warn import found_unaided, is_lesson, read_from_environment

        text = _CONTEXT_BLOCKS.sub(" ", call.prompt).strip()
        if not text or is_local_command(text):
            return ""
        wrote = asked_anyway(self.project.db, call.session_id, text, self.project.memories)
        if wrote is not None:
            wrote.result(5)
        floor = trust_threshold(self.project)
        shown = set(ledger.shown_ids(self.project.db, call.session_id))
        # Not what the prompt itself says; a lesson waits for its own moment.
        found = [m for m in self.memory.search(text[:2000], limit=12)
                 if m.id not in shown and m.confidence >= floor and injectable(m) and relevant(text, m)
                 and not named_in(m.content, text) and not is_lesson(m) and not found_unaided(m)
                 and not read_from_environment(m)]
        mems = fit(found[:5], int(self.token_budget * PROMPT_SHARE))
        if not mems:
            return ""
        self._shown(call, "prompt", [m.id for m in mems], redact_then_cut(text, 200))
        return render([Section("Memory relevant to this request", mems)], FORMATS[call.agent],
                      heading="Engram memory")

    # -- around a tool ----------------------------------------------------------------------------
    def _moments(self) -> Any:
        from desktop.agents.hooks.moments import ToolMoments

        return ToolMoments(self.project, self.root, self.memory, trust_threshold(self.project))

    def before_tool(self, call: HookCall) -> str:
        """Lessons and file gotchas for the call about to run."""
        return str(self._moments().before(call))

    def after_tool(self, call: HookCall) -> str:
        """Observe the call live; a failure (Codex and Gemini report it here) gets its lesson."""
        from desktop.agents.hooks.live import observe_tool, output_of, tool_files

        tool, files = tool_files(call, self.root)
        try:
            observe_tool(self.project, call, tool, files)
        except Exception:  # learning is secondary: what the agent should hear must still reach it
            log.exception("live observation of %s failed", call.session_id)
        return str(self._moments().after(call, failed=output_of(call)[1]))

    def tool_failed(self, call: HookCall) -> str:
        """A failed call (Claude Code's own event): observe it, say the lesson that knows it."""
        from desktop.agents.hooks.live import observe_tool, tool_files

        tool, files = tool_files(call, self.root)
        try:
            observe_tool(self.project, call, tool, files)
        except Exception:
            log.exception("live observation of %s failed", call.session_id)
        return str(self._moments().after(call, failed=True))

    # -- stop / session end -----------------------------------------------------------------------
    def stop(self, call: HookCall) -> str:
        """Record citations in the turn's reply; Codex (no SessionEnd) also finalises here."""
        self._record_citations(call)
        if call.agent == "codex":
            self._finalise(call)
        return ""

    def session_end(self, call: HookCall) -> str:
        """Finalise and promote the session."""
        self._record_citations(call)
        self._finalise(call)
        return ""

    def _record_citations(self, call: HookCall) -> None:
        from desktop.memory.citations import cited_ids
        from desktop.memory.lifecycle.feedback import record_feedback
        from desktop.memory.lifecycle.shown import CITED_ONLY

        cited = cited_ids(call.last_message)
        if not cited:
            return
        db = self.project.db
        found = self.project.memories.get_many(cited)
        real = [i for i in cited if i in found]  # ids that exist, in the reply's order
        marked = set(ledger.mark_cited(db, call.session_id, real).result(10))
        known = set(ledger.shown_ids(db, call.session_id))
        unshown = [i for i in real if i not in known]
        if unshown:  # cited from CLAUDE.md, MCP or its own record: shown in the app, never counted as a use
            ledger.record_shown(db, call.session_id, call.agent, CITED_ONLY, unshown, "cited").result(10)
            ledger.mark_cited(db, call.session_id, unshown).result(10)
        fresh = sorted(marked | set(unshown))
        if fresh:  # the core counts only what the ledger says this session was shown
            record_feedback(db, cited=fresh, session_id=call.session_id, source=call.agent,
                            reason=f"cited in a {call.agent} session")

    def _finalise(self, call: HookCall) -> None:
        from desktop.agents.hooks.live import finalise
        from desktop.memory.triggers.warn import Outcomes

        Outcomes(self.project.db).close(call.session_id)
        finalise(self.project, call)

    # -- helpers ------------------------------------------------------------------------------------
    def _injectable(self, ids: list[int]) -> list[Memory]:
        """Memories by id that may still be injected (the core's rule: no candidates, no deprecated)."""
        found = self.project.memories.get_many(ids)
        return [found[i] for i in ids if i in found and injectable(found[i])]

    def _shown(self, call: HookCall, event: str, ids: list[int], detail: str) -> None:
        if ids:
            # Shown is not used: only a citation counts as a use (see _record_citations). Waited for
            # (a few ms): the next hook of the session, maybe on another service thread, must see it.
            ledger.record_shown(self.project.db, call.session_id, call.agent, event, ids, detail).result(5)
