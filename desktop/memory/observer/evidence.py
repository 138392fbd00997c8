"""A finished session's evidence: what a memory may be built from, and checked against.

The model-based synthesis (``model_synthesis``) must never be handed raw
transcripts: they are long, and they mix the user's words with tool output and
the agent's musings. This module keeps a small typed record of what the session
*showed* — the user's own messages, the shell commands with their outcome, the
errors, the files edited and read — collected on the observer's hot path in
constant time per event (every list is capped) and carried in the scratchpad, so
a checkpointed session restores it too.

The same record is the ground truth a synthesised memory is checked against:
every file, command and value it names must occur here (:meth:`SessionEvidence.corpus`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Final

from desktop.memory.observer.events import AgentEvent, ToolCall, ToolResult, UserMessage
from desktop.memory.observer.tool_names import is_local_command
from desktop.memory.observer.utterances import EXPANSION, is_harness_text
from desktop.memory.privacy.secrets import redact

MAX_USER_MESSAGES: Final = 20
MAX_COMMANDS: Final = 30
#: Past a cap, the first few entries stay (the task as set) and the rest slide, so the latest
#: corrections and the commands that finally worked are kept.
KEEP_FIRST: Final = 5
MAX_ERRORS: Final = 10
MAX_FILES: Final = 40
USER_CHARS: Final = 400
COMMAND_CHARS: Final = 300
OUTPUT_CHARS: Final = 240
#: Prefixes of user-role records that the user did not type (harness-injected text).
_NOT_TYPED: Final = ("<command-message>", "<local-command", "<system-reminder>", "Caveat:",
                     "This session is being continued", "[Request interrupted")


@dataclass
class CommandRun:
    """One shell command the agent ran and how it ended."""

    command: str
    ok: bool
    output: str = ""
    """The tail of its output (where verdicts and errors are)."""


@dataclass
class ErrorSeen:
    """One distinct error of the session and the files edited before it went away."""

    tool: str
    message: str
    fixed_by: list[str] = field(default_factory=list)


@dataclass
class SessionEvidence:
    """What one session showed, capped: the only input a synthesis model sees."""

    session_id: str
    agent: str = "unknown"
    cwd: str = ""
    user_messages: list[str] = field(default_factory=list)
    commands: list[CommandRun] = field(default_factory=list)
    errors: list[ErrorSeen] = field(default_factory=list)
    edits: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def is_empty(self) -> bool:
        """True when there is nothing a memory could be learned from."""
        return not (self.user_messages or self.commands or self.errors or self.edits)

    def corpus(self) -> str:
        """Every string a synthesised memory may quote, one per line (for grounding checks)."""
        parts = [*self.user_messages, *(c.command for c in self.commands), *(c.output for c in self.commands),
                 *(e.message for e in self.errors), *self.edits, *self.files]
        return "\n".join(parts)

    def known_files(self) -> set[str]:
        """Files the session read, edited or fixed something in."""
        return {*self.files, *self.edits, *(f for e in self.errors for f in e.fixed_by)}

    def merged_with(self, later: SessionEvidence) -> SessionEvidence:
        """This evidence followed by ``later`` of the same session (a transcript that grew), capped."""
        users = list(self.user_messages)
        for m in later.user_messages:
            _append_capped(users, m, MAX_USER_MESSAGES)
        runs = list(self.commands)
        for c in later.commands:
            _append_capped(runs, c, MAX_COMMANDS)
        known = {e.message for e in self.errors}
        errors = (self.errors + [e for e in later.errors if e.message not in known])[:MAX_ERRORS]
        return SessionEvidence(self.session_id, self.agent, self.cwd or later.cwd, users, runs, errors,
                               list(dict.fromkeys(self.edits + later.edits))[:MAX_FILES],
                               list(dict.fromkeys(self.files + later.files))[:MAX_FILES])

    def redacted(self) -> SessionEvidence:
        """A copy with secrets replaced by ``[REDACTED:kind]`` (what is stored and sent to a model)."""
        def r(text: str) -> str:
            return redact(text)[0]
        return SessionEvidence(self.session_id, self.agent, self.cwd, [r(m) for m in self.user_messages],
                               [CommandRun(r(c.command), c.ok, r(c.output)) for c in self.commands],
                               [ErrorSeen(e.tool, r(e.message), list(e.fixed_by)) for e in self.errors],
                               list(self.edits), list(self.files))

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (stored per session, sent to the model)."""
        return asdict(self)

    def to_json(self) -> str:
        """Compact JSON of :meth:`to_dict`."""
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SessionEvidence:
        """Inverse of :meth:`to_dict` (unknown keys are ignored, so richer producers can add fields)."""
        return cls(str(d.get("session_id", "")), str(d.get("agent", "unknown")), str(d.get("cwd", "")),
                   [str(m) for m in d.get("user_messages", [])],
                   [CommandRun(str(c["command"]), bool(c["ok"]), str(c.get("output", "")))
                    for c in d.get("commands", [])],
                   [ErrorSeen(str(e["tool"]), str(e["message"]), [str(f) for f in e.get("fixed_by", [])])
                    for e in d.get("errors", [])],
                   [str(f) for f in d.get("edits", [])], [str(f) for f in d.get("files", [])])


def typed_by_user(text: str) -> bool:
    """False for harness-injected user-role text and built-in commands the model never sees."""
    t = text.strip()
    return bool(t) and not t.startswith(_NOT_TYPED) and not is_local_command(t)


def _users_words(event: UserMessage) -> str | None:
    """The text of a message the user typed, or None when the harness wrote it (``utterances``:
    a slash command's expansion, a skill's preamble, a hook's echo)."""
    if event.origin == EXPANSION or not typed_by_user(event.text) or is_harness_text(event.text):
        return None
    return event.text.strip()


def collect(state: dict[str, Any], event: AgentEvent) -> None:
    """Fold one event into the scratchpad's evidence ``state`` (constant time, capped lists).

    ``state`` is a plain JSON-able dict so the scratchpad checkpoints it as is:
    ``user`` (texts), ``pending`` (call id -> command), ``commands`` ([command, ok, output]).
    """
    if isinstance(event, UserMessage):
        words = _users_words(event)  # a model is given what the user typed, never the harness's text
        if words:
            _append_capped(state.setdefault("user", []), words[:USER_CHARS], MAX_USER_MESSAGES)
    elif isinstance(event, ToolCall):
        command = event.args.get("command")
        if isinstance(command, str) and command.strip():
            pending = state.setdefault("pending", {})
            if len(pending) < 50:  # results that never come must not grow it without bound
                pending[event.call_id] = " ".join(command.split())[:COMMAND_CHARS]
    elif isinstance(event, ToolResult):
        command = state.get("pending", {}).pop(event.call_id, None)
        if command is not None:
            _append_capped(state.setdefault("commands", []),
                           [command, not event.is_error, event.output.strip()[-OUTPUT_CHARS:]], MAX_COMMANDS)


def _append_capped(items: list[Any], item: Any, cap: int) -> None:
    """Append; when full, drop the oldest entry after the first KEEP_FIRST (constant work: cap is small)."""
    if len(items) >= cap:
        del items[KEEP_FIRST]
    items.append(item)


def build_evidence(state: dict[str, Any], *, session_id: str, agent: str, cwd: str,
                   files: dict[str, dict[str, Any]], errors: list[dict[str, Any]]) -> SessionEvidence:
    """The session's evidence from the collected ``state`` and the digest's files and errors."""
    ranked = sorted(files.items(), key=lambda kv: kv[1].get("first_step", 0))
    edits = [p for p, st in ranked if st.get("edits") or st.get("created")][:MAX_FILES]
    seen = [p for p, _ in ranked][:MAX_FILES]
    errs = [ErrorSeen(str(e.get("tool", "")), str(e.get("message", ""))[:OUTPUT_CHARS],
                      [str(f) for f in e.get("fix_files", [])][:5])
            for e in sorted(errors, key=lambda e: -int(e.get("count", 1)))[:MAX_ERRORS]]
    runs = [CommandRun(str(c), bool(ok), str(out)) for c, ok, out in state.get("commands", [])]
    return SessionEvidence(session_id, agent, cwd, list(state.get("user", [])), runs, errs, edits, seen)
