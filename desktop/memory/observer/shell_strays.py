"""The shell's folder, learned as a lesson of the project (issue 26; the hooks warn live, issue 25).

Claude Code keeps one shell for a session, so a ``cd`` moves every later command, and agents
forget it: from ``cmd/cli/strategy`` they run ``go test ./cmd/cli/...`` or ``cd cmd/cli`` and get
"no such file or directory". The session shows it without any reading of words: the shell was in
a subfolder (``recipes`` follows it), the call failed saying a path is missing, and the path it
named starts where the subfolder does (``cmd/...`` from ``cmd/cli/strategy``: a path from the
project root). In one session it is a slip; in a second it is how this project's layout trips
agents, which a colleague would say on day one.
"""

from __future__ import annotations

import re
from typing import Any, Final

from desktop.memory.observer.command_shape import parse
from desktop.memory.observer.events import ToolResult
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.signals import SHELL_STRAY, Signal, excerpt
from desktop.memory.privacy.boundary import redact_then_cut

_MISSING: Final = re.compile(r"no such file or directory|directory not found|does not exist|cannot find the path|"
                             r"ENOENT|not a directory", re.I)
_PATHISH: Final = re.compile(r"^(?:\./)?[\w@.+-]+(?:/[\w@.+*-]*)+$")


def _root_relative(path: str, folder: str) -> bool:
    """A path written from the project root while the shell is in ``folder``: it starts with the
    folder's own first part (``cmd/...`` from ``cmd/cli``)."""
    clean = path.removeprefix("./").rstrip("/")
    return bool(folder) and clean.split("/", 1)[0] == folder.split("/", 1)[0]


def _tail(path: str) -> str:
    """The part of a path an error message quotes whatever it was relative to (its last name)."""
    parts = [p for p in path.removeprefix("./").rstrip("/").split("/") if p and p != "..."]
    return parts[-1] if parts else path


def on_result(sp: Scratchpad, ev: ToolResult, pend: dict[str, Any]) -> None:
    """A call that failed from a subfolder on a path from the project root."""
    if not ev.is_error or SHELL_STRAY in sp.signals or not _MISSING.search(ev.output[:2000]):
        return
    folder, named = "", ""
    moved = pend.get("cwd")
    if isinstance(moved, list) and moved and isinstance(moved[0], str) and moved[0]:
        folder = moved[0]  # where the shell was when the command started
        cmd = parse(str(pend.get("command", "")))
        args = [cmd.cwd] if cmd.cwd else [a for s in cmd.segments for a in s.args]
        named = next((a for a in args if a and _PATHISH.match(a) and _root_relative(a, folder)), "")
    elif isinstance(pend.get("look"), dict):
        folder = str(sp.ev.get("shell", {}).get("cwd") or "")
        raw = str(pend["look"].get("path") or "")
        named = raw if _root_relative(raw, folder) else ""
    if not named or _tail(named) not in ev.output[:2000]:
        return  # the error is about another path (a hook's script, a file the command opened)
    # A shell command read as a search (``rg x docs/a.md``) is quoted as it ran, not as the tool it was read as.
    call = str(pend.get("command") or pend.get("shell") or f"{pend.get('tool', ev.tool)} {named}")
    data = {"folder": folder, "path": named, "call": redact_then_cut(call, 120),
            "error": excerpt(ev.output.strip().splitlines()[-1] if ev.output.strip() else "", 100),
            "events": [str(pend.get("event", ev.event_key))]}
    sp.add_signal(Signal(SHELL_STRAY, SHELL_STRAY, ev.step, [], data,
                         [f"from {folder}/: {excerpt(call, 80)} → {excerpt(ev.output, 80)}"]))
