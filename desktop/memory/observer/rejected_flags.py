"""A program refused a flag the agent gave it: the flag does not exist there, whatever the task.

Agents write options from memory, and the same model remembers the same wrong ones in the next
session (``gh pr diff --stat``, ``git show --no-stat``). When the fix follows in the session, the
command-fix lesson (``lessons``) says the flag and what worked in its place (:func:`dropped_flag`).
Often it does not: the agent drops the idea and does something else, and nothing is learned although
the program said exactly what was wrong. This learns that case from the failed run alone, which is a real outcome
(one session is enough):

* the output names the flag as unknown (``unknown flag: --stat``, ``unrecognized argument:
  --no-stat``, ``no such option: -x``), and the command gave it; or
* the program printed only its usage (``usage: git diff [<options>] …``) and the command gave it
  exactly one long option, which is then the one it did not take.

It fires before a later run of the same program with that flag, whatever the subcommand (a flag
made up for one subcommand is made up for its siblings too). A session where the program then ran
with that flag and succeeded contradicts it, and a session that found the fix keeps only the
command-fix lesson.
"""

from __future__ import annotations

import re
from typing import Any, Final

from desktop.memory.observer.command_shape import Segment, parse
from desktop.memory.observer.harness import shorten_command
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.signal_kinds import COMMAND_FIX, REJECTED_FLAG
from desktop.memory.observer.signals import Signal, excerpt
from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.triggers.model import COMMAND, Trigger

#: The flag an error names as one the program does not take.
_NAMED: Final = re.compile(r"\b(?:unknown|unrecognized|unrecognised|invalid|unexpected|no such)\s+"
                           r"(?:flag|option|argument|switch)s?\b[:\s]*['\"`‘]?(--?[A-Za-z][\w-]*)", re.I)
#: Output that is only the program's usage text (after the harness's "Exit code N" line).
_USAGE: Final = re.compile(r"^\s*usage:\s", re.I)
_EXIT_LINE: Final = re.compile(r"^exit code \d+\s*\n", re.I)
_STATE: Final = "rejected_flags"
MAX_PER_SESSION: Final = 3


def _body(output: str) -> str:
    """The program's own output, without the harness's "Exit code N" line."""
    return _EXIT_LINE.sub("", output.lstrip(), count=1)


def _gave(seg: Segment, flag: str) -> bool:
    return any(a == flag or a.startswith(flag + "=") for a in seg.args)


def rejected_flag(command: str, output: str) -> tuple[Segment, str] | None:
    """(the segment that was given it, the flag) when ``output`` shows the program refused a flag
    of ``command``; None otherwise."""
    segments = [s for s in parse(command).segments if not s.piped]
    text = _body(output)[:4000]
    named = _NAMED.search(text)
    if named is not None:
        flag = named.group(1)
        seg = next((s for s in segments if _gave(s, flag)), None)
        return (seg, flag) if seg is not None else None
    if _USAGE.match(text) and len(segments) == 1:
        long_flags = [a.split("=", 1)[0] for a in segments[0].args if a.startswith("--") and len(a) > 3]
        if len(long_flags) == 1:
            return segments[0], long_flags[0]
    return None


def dropped_flag(failed: str, error: str, removed: list[str]) -> tuple[str, str] | None:
    """(the program with its subcommand, the flag) when ``failed`` was refused one of its flags and
    the retry that worked ``removed`` it; None otherwise. The lesson is then the flag, whatever
    the arguments: ``git show <any commit>`` does not take ``--no-stat``."""
    found = rejected_flag(failed, error)
    if found is None:
        return None
    seg, flag = found
    if not any(t == flag or t.startswith(flag + "=") for t in removed):
        return None
    return " ".join((seg.program, *seg.words)), flag


def on_failure(sp: Scratchpad, command: str, output: str, step: int, event: str) -> None:
    """A failed shell call whose program refused one of its flags: kept until the session ends."""
    found = rejected_flag(command, output)
    if found is None:
        return
    seg, flag = found
    pending: list[dict[str, Any]] = sp.ev.setdefault(_STATE, [])
    if len(pending) >= MAX_PER_SESSION or any(p["program"] == seg.program and p["flag"] == flag for p in pending):
        return
    first = next((ln.strip() for ln in _body(output).splitlines() if ln.strip()), "")
    pending.append({"program": seg.program, "words": " ".join(seg.words), "flag": flag,
                    "failed": shorten_command(command), "error": redact_then_cut(first, 120),
                    "step": step, "event": event})


def finalize(sp: Scratchpad) -> None:
    """The refused flags the session neither fixed (a command-fix lesson says those) nor saw work."""
    pending = sp.ev.get(_STATE, [])
    if not pending:
        return  # most sessions: no succeeded command to parse
    fixed = {str(s.data.get("failed")) for s in sp.signals_of(COMMAND_FIX)}
    worked = [parse(c) for c in sp.ev.get("ok", [])]
    for p in pending:
        if p["failed"] in fixed or any(seg.program == p["program"] and _gave(seg, p["flag"])
                                       for cmd in worked for seg in cmd.segments):
            continue
        data = {**{k: p[k] for k in ("program", "words", "flag", "failed", "error")}, "events": [p["event"]],
                "triggers": [Trigger(COMMAND, p["program"], (), (p["flag"],)).as_json()]}
        sp.add_signal(Signal(REJECTED_FLAG, f"{REJECTED_FLAG}:{p['program']}:{p['flag']}"[:200], int(p["step"]), [],
                             data, [excerpt(f"{p['failed']} → {p['error']}", 200)]))
