"""The three hook dialects: event names, stdin payloads and how context goes back to the model.

Claude Code (``.claude/settings.json``), Codex (``.codex/hooks.json``, behind the
``codex_hooks`` feature) and Gemini CLI (``.gemini/settings.json``) all run a
command per lifecycle event, pass one JSON object on stdin (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name`` and the event's own fields)
and read ``{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}``
from stdout. Their event names and tool names differ; this module maps them to
seven canonical events and one :class:`HookCall`. Checked against Claude Code
2.1.197, Codex 0.169 and Gemini CLI 0.61 (their bundled hook schemas):

* before a tool runs, Claude Code and Codex pass ``additionalContext`` to the model; Gemini
  CLI's BeforeTool ignores it and can only refuse the call, so there a warning is a refusal
  (``decision: deny`` with the reason), which the handler gives only for a call that would
  fail exactly as before;
* a failed tool call is its own event in Claude Code (PostToolUseFailure, with ``error``);
  Codex and Gemini report it in the after-tool payload.
"""

from __future__ import annotations

from desktop.agents.hooks import lean_json

# Not ``typing.TYPE_CHECKING``: importing typing is ~15 ms of every hook process (see client.py);
# mypy reads a module-level TYPE_CHECKING as true all the same.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SESSION_START, PROMPT, AFTER_TOOL, STOP, SESSION_END = "session-start", "prompt", "after-tool", "stop", "session-end"
BEFORE_TOOL, TOOL_FAILED = "before-tool", "tool-failed"
CANONICAL_EVENTS = (SESSION_START, PROMPT, BEFORE_TOOL, AFTER_TOOL, TOOL_FAILED, STOP, SESSION_END)
AGENTS = ("claude-code", "codex", "gemini")
#: The agent name the observer's importers and tool tables use.
OBSERVER_AGENT = {"claude-code": "claude-code", "codex": "codex", "gemini": "gemini-cli"}

#: canonical event -> the agent's own event name (absent: the agent has no such event).
NATIVE_EVENTS: dict[str, dict[str, str]] = {
    "claude-code": {SESSION_START: "SessionStart", PROMPT: "UserPromptSubmit", BEFORE_TOOL: "PreToolUse",
                    AFTER_TOOL: "PostToolUse", TOOL_FAILED: "PostToolUseFailure", STOP: "Stop",
                    SESSION_END: "SessionEnd"},
    # Codex's Stop (end of a turn) also finalises: `codex exec` ends without a SessionEnd.
    "codex": {SESSION_START: "SessionStart", PROMPT: "UserPromptSubmit", BEFORE_TOOL: "PreToolUse",
              AFTER_TOOL: "PostToolUse", STOP: "Stop"},
    "gemini": {SESSION_START: "SessionStart", PROMPT: "BeforeAgent", BEFORE_TOOL: "BeforeTool",
               AFTER_TOOL: "AfterTool", STOP: "AfterAgent", SESSION_END: "SessionEnd"},
}
#: Events whose output reaches the model (the others only record).
CONTEXT_EVENTS = (SESSION_START, PROMPT, BEFORE_TOOL, AFTER_TOOL, TOOL_FAILED)
#: Events about one tool call (the installer gives them a matcher for every tool).
TOOL_EVENTS = (BEFORE_TOOL, AFTER_TOOL, TOOL_FAILED)
DEFAULT_TOKEN_BUDGET = 1500  # session-start context, unless settings say "hooks": {"token_budget": N}
#: Seconds each event may take before the hook gives up silently (the agents' own
#: timeouts are longer: 60 s for Claude Code and Gemini CLI, 600 s for Codex).
BUDGETS = {SESSION_START: 5.0, PROMPT: 3.0, BEFORE_TOOL: 2.0, AFTER_TOOL: 3.0, TOOL_FAILED: 3.0,
           STOP: 15.0, SESSION_END: 40.0}
MAX_STDIN = 4 * 1024 * 1024  # a tool_response can be a whole file; more than this is not a payload


class BadPayload(ValueError):
    """The stdin was not a hook payload this handler can use (logged, never shown)."""


def canonical_event(name: str) -> str:
    """``session-start`` etc. from either the canonical or any agent's own event name."""
    key = name.strip()
    if key in CANONICAL_EVENTS:
        return key
    for table in NATIVE_EVENTS.values():
        for canon, native in table.items():
            if native == key:
                return canon
    raise BadPayload(f"unknown hook event {name!r}")


class HookCall:
    """One hook invocation, agent-neutral (a plain class with slots: neither a dataclass nor a
    NamedTuple, whose modules cost a hook client that lives well under 100 ms more than they give)."""

    __slots__ = (
        "agent",
        "cwd",
        "event",
        "last_message",
        "prompt",
        "raw",
        "session_id",
        "source",
        "tool_input",
        "tool_name",
        "tool_response",
        "tool_use_id",
        "transcript_path",
    )

    def __init__(self, *, agent: str, event: str, session_id: str, cwd: str, tool_input: dict[str, Any],
                 raw: dict[str, Any], transcript_path: str = "", source: str = "", prompt: str = "",
                 tool_name: str = "", tool_response: Any = None, last_message: str = "",
                 tool_use_id: str = "") -> None:
        """``source``: a session start's startup | resume | clear | compact; ``last_message``: the
        agent's final reply of the turn (stop)."""
        self.agent = agent
        self.event = event
        self.session_id = session_id
        self.cwd = cwd
        self.tool_input = tool_input
        self.raw = raw
        self.transcript_path = transcript_path
        self.source = source
        self.prompt = prompt
        self.tool_name = tool_name
        self.tool_response = tool_response
        self.last_message = last_message
        self.tool_use_id = tool_use_id

    def __repr__(self) -> str:
        return f"HookCall({self.agent}/{self.event} session={self.session_id!r})"

    def as_json(self) -> dict[str, Any]:
        """The form sent to the warm service."""
        return {"agent": self.agent, "event": self.event, "payload": self.raw}


def parse(agent: str, event: str, data: bytes | str) -> HookCall:
    """Validate and normalise one payload; raises BadPayload on anything unusable."""
    if agent not in AGENTS:
        raise BadPayload(f"unknown agent {agent!r}")
    canon = canonical_event(event)
    if isinstance(data, bytes):
        if len(data) > MAX_STDIN:
            raise BadPayload("payload too large")
        data = data.decode("utf-8", "replace")
    if not data.strip():
        raise BadPayload("empty stdin")
    try:
        raw = lean_json.loads(data)
    except ValueError as exc:
        raise BadPayload(f"stdin is not JSON ({str(exc).partition(':')[0]})") from None
    return from_dict(agent, canon, raw)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def from_dict(agent: str, event: str, raw: Any) -> HookCall:
    """A HookCall from an already decoded payload (also used by the warm service)."""
    if agent not in AGENTS:
        raise BadPayload(f"unknown agent {agent!r}")
    if not isinstance(raw, dict):
        raise BadPayload("payload is not a JSON object")
    sid, cwd = _text(raw.get("session_id")), _text(raw.get("cwd"))
    if not sid or not cwd:
        raise BadPayload("payload lacks session_id or cwd")
    named = _text(raw.get("hook_event_name"))
    if named and canonical_event_or_none(named) not in (None, event):
        raise BadPayload(f"payload is for {named}, not {event}")
    tool_input = raw.get("tool_input")
    last = _text(raw.get("last_assistant_message")) or _text(raw.get("prompt_response"))
    response = raw.get("tool_response")
    if event == TOOL_FAILED and response is None:  # Claude Code's failure payload carries "error"
        response = {"error": _text(raw.get("error")) or "failed", "is_error": True,
                    "output": _text(raw.get("error"))}
    return HookCall(agent=agent, event=event, session_id=sid[:200], cwd=cwd,
                    transcript_path=_text(raw.get("transcript_path")),
                    source=_text(raw.get("source")) or _text(raw.get("trigger")),
                    prompt=_text(raw.get("prompt")), tool_name=_text(raw.get("tool_name")),
                    tool_input=tool_input if isinstance(tool_input, dict) else {},
                    tool_response=response, last_message=last, raw=raw,
                    tool_use_id=_text(raw.get("tool_use_id")) or _text(raw.get("call_id")))


def canonical_event_or_none(name: str) -> str | None:
    """Like canonical_event, None for an unknown name."""
    try:
        return canonical_event(name)
    except BadPayload:
        return None


def render_output(call: HookCall, text: str) -> str:
    """What to print on stdout: the JSON every agent reads, or nothing.

    Gemini CLI's BeforeTool cannot add context, only refuse: text there is a refusal's reason.
    """
    if not text or call.event not in CONTEXT_EVENTS:
        return ""
    if call.agent == "gemini" and call.event == BEFORE_TOOL:
        return lean_json.dumps({"decision": "deny", "reason": text}, ensure_ascii=False)
    native = NATIVE_EVENTS[call.agent].get(call.event, "")
    return lean_json.dumps({"hookSpecificOutput": {"hookEventName": native, "additionalContext": text}},
                      ensure_ascii=False)
