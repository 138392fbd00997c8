"""A tool call refused for its arguments, and what the retry that went through changed (issue 25).

Tools other than the shell (an MCP server's: a tracker's, a database's) check their arguments, and
so does the user, who declines a call that leaves something out ("which component?"). The agent then
retries with other arguments and goes on; the next session makes the same first call. What the retry
changed is the lesson, learned from one session, since the evidence is not the agent's: the tool's
own refusal, or the words the user typed when declining the call.

* A call of a tool no agent table names (``tool_names.OTHER``) that failed, or that the user declined
  with words, is kept with the values that set something (``Ops``, ``high``: a title or a body is the
  request, not a setting).
* A later call of the same tool that succeeded, for the same request (a long value both share, or
  the tool's next call when the failed one had none), is compared with it: the values it changed
  and the arguments it added. An identifier's change (an issue key, a UUID) is that request's, so
  it is not a lesson.
* The lesson fires before a call of that tool given a refused value, or lacking an added argument
  (a ``tool`` trigger, ``triggers.model``).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Final

from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.signal_kinds import TOOL_ARGS
from desktop.memory.observer.signals import Signal, excerpt
from desktop.memory.observer.tool_names import OTHER, known_raw_tool
from desktop.memory.observer.utterances import declined_call, rejection_feedback
from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.triggers.model import TOOL, Trigger, param_value

_STATE: Final = "tool_args"
#: The session's calls that went through, as ``[tool, *arguments]`` (``contradictions.tool_contradicted``).
WENT_THROUGH: Final = "tools_ok"
MAX_WENT_THROUGH: Final = 40
MAX_PENDING: Final = 4
MAX_ARGS: Final = 12
#: Longest value a lesson names (``queue "Ops"``); longer ones, or sentences, are the request's text.
SETTING_CHARS: Final = 40
#: A value this long, shared by the failed call and the retry, shows they are the same request.
REQUEST_CHARS: Final = 16
#: An identifier of one request's object (``ENT-53``, a UUID, a hash, a number): not a lesson.
_IDENTIFIER: Final = re.compile(r"^(?:[A-Z][A-Z0-9]*-\d+|[0-9a-f]{8}-[0-9a-f-]{27,}|[0-9a-f]{7,}|\d{3,}|#\d+)$",
                                re.I)
#: The harness's wrapping of a tool's error (``<tool_use_error>…</tool_use_error>``).
_TAGS: Final = re.compile(r"</?tool_use_error>")


def on_call(raw_tool: str, tool: str, args: dict[str, Any], pend: dict[str, Any]) -> None:
    """Keep a non-shell tool call's arguments with its pending result."""
    if tool != OTHER or not raw_tool or known_raw_tool(raw_tool):
        return  # a generic name (Codex's ``mcp_tool_call``) does not say which tool it was
    short: dict[str, str] = {}
    long: list[str] = []
    given: list[str] = []
    for name, value in list(args.items())[:MAX_ARGS * 2]:  # one bounded pass: a call may carry thousands
        if value in (None, "", [], {}):
            continue
        given.append(name)
        shown = param_value(value)
        if shown is not None and _setting(shown) and len(short) < MAX_ARGS:
            short[name] = redact_then_cut(shown, 80)
        if isinstance(value, str) and len(value) >= REQUEST_CHARS:
            long.append(hashlib.blake2b(value.strip().encode(), digest_size=8).hexdigest())
    pend["tool_args"] = {"raw": raw_tool[:120], "short": short, "given": given, "request": long[:6]}


def _setting(value: str) -> bool:
    """A value that sets something (``Ops``, ``high``, ``3``), not a sentence of the request (a title)."""
    return len(value) <= SETTING_CHARS and value.count(" ") <= 2


def on_result(sp: Scratchpad, pend: dict[str, Any], output: str, is_error: bool, step: int, event: str) -> None:
    """A refused or declined call is kept; a retry that went through becomes the lesson."""
    call = pend.get("tool_args")
    if not isinstance(call, dict):
        return
    pending: list[dict[str, Any]] = sp.ev.setdefault(_STATE, [])
    if is_error:
        declined = declined_call(output)
        said = rejection_feedback(output) if declined else None
        if declined and said is None:
            return  # declined without a word: why is not known
        first = next((ln.strip() for ln in _TAGS.sub("", output).splitlines() if ln.strip()), "")
        reason = redact_then_cut(said, 160) if said else redact_then_cut(first, 120)
        if reason and len(pending) < MAX_PENDING:
            pending.append({**call, "declined": said is not None, "reason": reason, "step": step, "event": event})
        return
    went: list[list[str]] = sp.ev.setdefault(WENT_THROUGH, [])
    if len(went) < MAX_WENT_THROUGH:
        went.append([call["raw"], *call["given"], *(f"{n}={v}" for n, v in call["short"].items())])
    for failed in [p for p in pending if p["raw"] == call["raw"]]:
        if not _same_request(failed, call):
            continue
        pending.remove(failed)
        change = _difference(failed, call)
        if change is not None:
            _learn(sp, failed, change)


def _same_request(failed: dict[str, Any], call: dict[str, Any]) -> bool:
    if failed["request"]:
        return bool(set(failed["request"]) & set(call["request"]))
    return True  # nothing long to compare: the tool's next call that went through is the retry


def _difference(failed: dict[str, Any], call: dict[str, Any]) -> dict[str, Any] | None:
    """What the retry changed: {changed: [(name, old, new)], added: [(name, value)]}. What it left out is
    not told: with a value changed too, which of them mattered is not known (blind judges, round 20:
    "left out `labels`" read as the cause, and a call with labels had gone through)."""
    old, new = failed["short"], call["short"]
    changed = [(n, old[n], new[n]) for n in old if n in new and old[n] != new[n]
               and not (_IDENTIFIER.match(old[n]) or _IDENTIFIER.match(new[n]))]
    added = [(n, new.get(n, "")) for n in call["given"] if n not in failed["given"]
             and not _IDENTIFIER.match(new.get(n, "") or "-")]
    if not changed and not added:
        return None  # only identifiers changed, or only something was left out: not shown to matter
    return {"changed": changed[:3], "added": added[:4]}


def _learn(sp: Scratchpad, failed: dict[str, Any], change: dict[str, Any]) -> None:
    raw = failed["raw"]
    names = sorted([n for n, _, _ in change["changed"]] + [n for n, _ in change["added"]])
    key = f"{TOOL_ARGS}:{raw}:{','.join(names)}"[:200]
    if key in sp.signals:
        return
    tokens = tuple(f"{n}={v}" for n, v, _ in change["changed"])
    unless = tuple(n for n, _ in change["added"])
    data = {"tool": raw, "declined": bool(failed["declined"]), "reason": failed["reason"], **change,
            "events": [failed["event"]], "triggers": [Trigger(TOOL, raw, (), tokens, unless=unless).as_json()]}
    sp.add_signal(Signal(TOOL_ARGS, key, int(failed["step"]), [], data,
                         [excerpt(f"{raw}: {failed['reason']} → {', '.join(names)}", 200)]))


def tool_label(raw: str) -> str:
    """```create_ticket` (tracker)`` for ``mcp__tracker__create_ticket``; the name itself otherwise."""
    parts = raw.split("__")
    if raw.startswith("mcp__") and len(parts) >= 3:
        return f"`{parts[-1]}` ({parts[1]})"
    return f"`{raw}`"


def _named(name: str, value: str) -> str:
    return f'{name} "{excerpt(value, 40)}"' if value else f"`{name}`"


def lesson_text(d: dict[str, Any]) -> str:
    """The lesson's sentence: the call refused (or declined, in the user's words) and what the retry changed."""
    label = tool_label(str(d["tool"]))
    changed = [(str(n), str(o), str(v)) for n, o, v in d.get("changed", [])]
    added = [(str(n), str(v)) for n, v in d.get("added", [])]
    given = ("given " + ", ".join(_named(n, o) for n, o, _ in changed) if changed
             else "without " + ", ".join(f"`{n}`" for n, _ in added))
    fixes = []
    if changed:
        fixes.append("set " + ", ".join(_named(n, v) for n, _, v in changed))
    if added:
        fixes.append("added " + ", ".join(_named(n, v) for n, v in added))
    fix = " and ".join(fixes)
    reason = excerpt(str(d["reason"]), 120)
    if d.get("declined"):
        return f"The user declined a {label} call {given} (\"{reason}\"); the one they let through {fix}."
    return f"{label} failed here with \"{reason}\" {given}; the retry that went through {fix}."
