"""A run failed before it began, and the same run with one more flag got past that: the flag is needed.

Build and test tools refuse to start when a switch is missing (``go test`` on a package behind a
build tag: "build constraints exclude all Go files"; a bundler without its config flag), and the
agent retries with the switch. The retry often fails further on, for the reason the agent was
there for (a test that fails), so no "failed, then worked" pair ever forms and nothing is learned.
The outcome still proves the switch: the first run's error is gone from the retry's output.

Learned when, within a few steps, a failed run (its exit code, or a failure a pipe hid) is followed
by a run that only adds a flag (and its value), and the first run's telling error line is not in
the second one's output. The lesson fires before a run of the same program and subcommand, at a
target the error named, without that flag.

Nothing here knows a tool: only the command lines and the two outputs.
"""

from __future__ import annotations

import re
from typing import Any, Final

from desktop.memory.observer.command_shape import parse
from desktop.memory.observer.harness import shorten_command
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.signal_kinds import COMMAND_FIX
from desktop.memory.observer.signals import Signal
from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.triggers.model import COMMAND, PATH_ARG, Trigger

_STATE: Final = "failed_run"
WINDOW: Final = 4
MAX_ADDED: Final = 2
#: Lines that sum a run up (``FAIL pkg [setup failed]``, ``ok pkg``, ``Exit code 1``, a package
#: header ``# pkg``): they say that it failed, never why.
_SUMMARY: Final = re.compile(r"^(?:(?:FAIL|ok|PASS|Exit code|exit status|\d+ (?:failed|passed))\b|#\s|"
                             r"\[[\w:.-]+\] ERROR\b)", re.I)
_MIN_LINE: Final = 20


def telling_line(output: str) -> str:
    """The first line of a failed run that says why (not a summary, not a header), or ''."""
    for raw in output[-6000:].splitlines()[-40:]:
        line = raw.strip()
        if len(line) >= _MIN_LINE and not _SUMMARY.match(line):
            return line
    return ""


def on_failed_run(sp: Scratchpad, command: str, output: str, step: int, event: str) -> None:
    """A run that failed: a lesson when it only added a flag to the last failed run and got past
    that run's error; then it is the failed run the next one is compared with."""
    _got_past(sp, command, output, step, event)
    line = telling_line(output)
    sp.ev[_STATE] = [command, step, line, event] if line else None


def on_passed_run(sp: Scratchpad, command: str, output: str, step: int, event: str) -> None:
    """A run that succeeded: it may be the flag that got past the last failure, too."""
    _got_past(sp, command, output, step, event)
    sp.ev[_STATE] = None


def _got_past(sp: Scratchpad, command: str, output: str, step: int, event: str) -> None:
    last = sp.ev.get(_STATE)
    if not last or step - int(last[1]) > WINDOW or last[2] in output:
        return
    failed, _, line, fail_event = last
    before, after = parse(failed).main(), parse(command).main()
    if before is None or after is None or (before.program, before.words) != (after.program, after.words):
        return
    added = [a for a in after.args if a not in before.args]
    if not added or len(added) > MAX_ADDED or not added[0].startswith("-") or \
            any(a not in after.args for a in before.args):
        return
    flag = added[0].split("=", 1)[0]
    # A path the run was given, not a subcommand word or a value (``list`` in a usage text is no target).
    targets = tuple(_bare(a) for a in before.args if not a.startswith("-") and a not in before.words
                    and PATH_ARG.match(_bare(a)) and _bare(a) in line)[:2]
    if not targets:
        return  # the error names no path the run was given: no telling which runs need the flag
    sp.ev[_STATE] = None
    data: dict[str, Any] = {
        "failed": shorten_command(failed), "worked": shorten_command(command), "flag": " ".join(added),
        "run": " ".join((before.program, *before.words)), "target": targets[0],
        "error": redact_then_cut(_relative(line, sp.cwd), 160), "past": True, "events": [fail_event, event],
        "triggers": [Trigger(COMMAND, before.program, before.words, targets, unless=(flag,)).as_json()]}
    key = f"{COMMAND_FIX}:+{flag} " + redact_then_cut(" ".join(targets), 120)
    sp.add_signal(Signal(COMMAND_FIX, key, step, [], data,
                         [f"{shorten_command(failed, 80)} → {shorten_command(command, 80)}"]))


def _bare(arg: str) -> str:
    """A path argument as an error would name it (``./pkg/x/`` and ``pkg/x/...`` are ``pkg/x``)."""
    return arg.strip("'\"").removeprefix("./").removesuffix("/...").rstrip("/")


def _relative(line: str, root: str) -> str:
    """The error line with the project's own folder written as ``./`` (a user's home is not the lesson)."""
    root = root.rstrip("/")
    return line.replace(root + "/", "./") if len(root) > 1 else line
