"""The agent's shell tool rewrote the command: a ``!`` it never escaped reached the program as ``\\!``.

Claude Code's Bash tool has, over many releases, put a backslash before a ``!`` next to a space,
even inside quotes where no shell would expand it (anthropics/claude-code#2941, #23740, #32864,
#68181): ``jq 'select(.a != null)'`` runs as ``select(.a \\!= null)`` and jq fails to parse it. The
agent reads its own command, not what ran, and writes the same ``!=`` in the next session.

Nothing here knows a program or a harness by name: the evidence is the failed call's own output,
which quotes a piece of the command around a ``!`` with a backslash the command did not have. That
is an outcome of a real run, so one session is enough to learn it; what it teaches is the
harness's behaviour, so it fires before a later command that gives a quoted ``!`` next to a space
to the same reader (``triggers/model``: the ``<!>`` command key): a jq filter, whichever program
runs it, or the program that failed. Replayed on real sessions, a ``!`` in a heredoc or a ``sed``
script went through unharmed, so a jq lesson says nothing there.
"""

from __future__ import annotations

import re
from typing import Any, Final

from desktop.memory.observer.command_shape import parse
from desktop.memory.observer.events import ToolResult
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.signals import SHELL_ESCAPE, Signal, excerpt
from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.triggers.model import BANG_IN_QUOTES, COMMAND, EXPOSED_BANG, Trigger, exposed_bang, filter_language

#: The words around the ``!`` quoted in the lesson: the token before it and the one after, whole.
_WORD_BEFORE: Final = re.compile(r"[^\s'\"(]{1,30}\s*$")
_WORD_AFTER: Final = re.compile(r"!=?\s*[^\s')|]{0,20}")
_ERROR_LINE: Final = re.compile(r"error|fail|invalid|unexpected", re.I)
#: Where an error line's first clause ends (the rest is detail: "expecting ';' or ')'").
_CLAUSE_END: Final = re.compile(r",\s|\s\(")


def escaped_echo(command: str, output: str) -> tuple[str, str] | None:
    """(what the command said, what the output shows ran) around a ``!`` the output quotes with a
    backslash the command did not have, in whole words; None when the output shows no such rewrite."""
    for m in EXPOSED_BANG.finditer(command):
        line_start = command.rfind("\n", 0, m.start()) + 1
        before_m = _WORD_BEFORE.search(command[line_start:m.start()])
        tail_m = _WORD_AFTER.match(command, m.start())
        if before_m is None or tail_m is None:
            continue  # nothing before the ``!`` on its line to tell it from another
        before, tail = before_m.group(0), tail_m.group(0).rstrip()
        written, ran = before + tail, before + "\\" + tail
        if ran in output and ran not in command:
            return written.strip(), ran.strip()
    return None


def _first_clause(line: str) -> str:
    """An error line up to the end of its first clause, when that says something."""
    cut = _CLAUSE_END.search(line, 16)
    return line[:cut.start()] if cut is not None else line


def on_result(sp: Scratchpad, ev: ToolResult, pend: dict[str, Any]) -> None:
    """A failed shell call whose output quotes its own ``!`` with a backslash it was never given."""
    command = str(pend.get("command") or "")
    if not ev.is_error or SHELL_ESCAPE in sp.signals or "!" not in command or "\\!" not in ev.output:
        return
    found = escaped_echo(command, ev.output[:4000])
    if found is None:
        return
    written, ran = found
    readers = [filter_language(seg) for seg in parse(command).segments
               if any(exposed_bang(a) and written.strip() in a for a in seg.args)]
    if not readers:
        return  # the rewritten text is not one argument of a program (a heredoc, a comment)
    lines = [ln.strip() for ln in ev.output.strip().splitlines()
             if ln.strip() and "\\!" not in ln and not ln.strip().lower().startswith("exit code")]
    error = next((ln for ln in lines if _ERROR_LINE.search(ln)), lines[0] if lines else "")
    data = {"written": redact_then_cut(written, 60), "ran": redact_then_cut(ran, 62),
            "error": excerpt(_first_clause(error), 100),
            "jq": readers[0] == "jq",
            "call": redact_then_cut(command, 120), "events": [str(pend.get("event", ev.event_key))],
            "triggers": [Trigger(COMMAND, BANG_IN_QUOTES, tokens=(readers[0],)).as_json()]}
    sp.add_signal(Signal(SHELL_ESCAPE, SHELL_ESCAPE, ev.step, [], data,
                         [f"{excerpt(command, 80)} → {excerpt(ev.output, 100)}"]))
