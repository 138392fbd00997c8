"""Read a shell command line the way the shell runs it: segments, the working folder, wrappers.

A recipe learned from ``cd web && timeout 60 npm test 2>&1 | tail -20 || true`` must
say "run ``npm test`` in ``web/``": the folder comes from the ``cd`` (in this command
or an earlier one of the session: Claude Code's shell keeps its working folder
between calls), the wrappers (``timeout``, ``time``, ``nice``, an output pager, a
``|| true`` that hides the exit status) are not part of it, and the flags are.

This module only parses; it never runs anything. It is tolerant: anything it cannot
follow (command substitution in a ``cd``, here-documents) leaves the folder unknown
rather than guessed.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Final

#: Programs that run another command: the recipe is the command they run.
_WRAPPERS: Final = {"timeout": 1, "gtimeout": 1, "time": 0, "nice": 0, "nohup": 0, "command": 0, "exec": 0,
                    "stdbuf": 0, "caffeinate": 0, "unbuffer": 0}
#: Pipe stages that only reshape output (the exit status becomes theirs: the run's is hidden).
_FILTERS: Final = frozenset({"head", "tail", "grep", "egrep", "rg", "less", "more", "cat", "tee", "sort", "uniq",
                             "wc", "cut", "sed", "awk", "jq", "column", "tr", "xargs"})
#: Segments that set up the shell for what follows (kept in the recipe, in order).
_SETUP: Final = re.compile(r"^(?:source|\.)\s+\S+|^export\s+[A-Za-z_]\w*=|^(?:nvm|pyenv|rbenv|sdk)\s+use\b|"
                           r"^eval\s+\"?\$\((?:mise|direnv|pyenv|rbenv|fnm|brew shellenv)")
#: Segments that carry no action (status echoes, pauses).
_NOISE: Final = re.compile(r"^(?:echo|printf|sleep|clear|true|:|set\s+-[a-z]+|wait)\b")
_ASSIGN: Final = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(\S*)$")
_REDIRECT: Final = re.compile(r"^(?:\d?>>?|&>>?|\d?<|<<<?|>&|\d>&\d)(?:\S*)$")


@dataclass
class Segment:
    """One simple command of a line, with what the shell does around it."""

    text: str
    """The command as it runs, wrappers, redirections and assignments removed."""
    op: str = ""
    """The operator before it (``&&``, ``||``, ``;``, or '' for the first)."""
    env: list[str] = field(default_factory=list)
    """Names (never values) of the variables assigned for it."""
    masked: bool = False
    """Its exit status does not reach the caller (piped into a filter, or ``|| true`` after it)."""
    cwd: str | None = ""
    """The project-relative folder it runs in ('' = root; None = outside the project or unknown)."""


def split_top(command: str) -> list[tuple[str, str]]:
    """(operator before, segment) for each simple command, outside quotes; newlines split too."""
    out: list[tuple[str, str]] = []
    buf: list[str] = []
    op = ""
    quote: str | None = None
    depth = 0
    i = 0
    while i < len(command):
        c = command[i]
        if quote:
            buf.append(c)
            if c == quote:
                quote = None
            elif c == "\\" and quote == '"' and i + 1 < len(command):
                buf.append(command[i + 1])
                i += 1
        elif c == "\\" and command[i + 1:i + 2] == "\n":
            buf.append(" ")  # a line continuation: one command over several lines
            i += 1
        elif c in "'\"`":
            quote = c
            buf.append(c)
        elif c == "(" and command[i - 1:i] == "$":
            depth += 1
            buf.append(c)
        elif c == ")" and depth:
            depth -= 1
            buf.append(c)
        elif depth == 0 and command.startswith(("&&", "||"), i):
            out.append((op, "".join(buf).strip()))
            op, buf = command[i:i + 2], []
            i += 1
        elif depth == 0 and c in ";\n" and not command.startswith(";;", i):
            out.append((op, "".join(buf).strip()))
            op, buf = ";", []
        else:
            buf.append(c)
        i += 1
    out.append((op, "".join(buf).strip()))
    return [(o, s) for o, s in out if s]


def _pipe_stages(segment: str) -> list[str]:
    """The stages of a pipeline (``|`` outside quotes, not ``||``)."""
    stages, buf, quote = [], [], None
    for i, c in enumerate(segment):
        if quote:
            quote = None if c == quote else quote
            buf.append(c)
        elif c in "'\"":
            quote = c
            buf.append(c)
        elif c == "|" and segment[i - 1:i] != "|" and segment[i + 1:i + 2] != "|":
            stages.append("".join(buf).strip())
            buf = []
        else:
            buf.append(c)
    stages.append("".join(buf).strip())
    return [s for s in stages if s]


def _words(text: str) -> list[str]:
    """Whitespace words, quotes kept together (a light shlex that never raises)."""
    return re.findall(r"""(?:[^\s"']+|"[^"]*"|'[^']*')+""", text)


def strip_wrappers(stage: str) -> tuple[str, list[str]]:
    """A pipeline stage without its wrappers, redirections and variable assignments; the names
    of the assigned variables (``CI=1 go test`` -> ``go test``, ``["CI"]``)."""
    words = [w for w in _words(stage) if not _REDIRECT.match(w)]
    env: list[str] = []
    while words:
        head = words[0]
        m = _ASSIGN.match(head)
        if m:
            env.append(m.group(1))
            words = words[1:]
        elif head == "env":
            words = words[1:]
        elif head in _WRAPPERS:
            skip = _WRAPPERS[head]
            words = words[1:]
            while words and words[0].startswith("-"):  # "timeout -s KILL 5", "nice -n 10"
                flag = words[0]
                words = words[2:] if flag in ("-s", "-k", "-n", "--signal", "--kill-after") else words[1:]
            words = words[skip:]
        else:
            break
    return " ".join(words), env


def _cd_target(segment: str) -> str | None:
    """The folder of a ``cd``/``pushd`` segment, or None when it is not one."""
    m = re.match(r"^(?:cd|pushd)(?:\s+(?:--\s+)?(\"[^\"]+\"|'[^']+'|\S+))?\s*$", segment)
    if m is None:
        return None
    return (m.group(1) or "~").strip("\"'")


def move(cwd: str | None, target: str, root: str) -> str | None:
    """The project-relative folder after ``cd target`` from ``cwd`` (None = outside or unknown)."""
    root = root.rstrip("/")
    if target.startswith(("~", "$", "-")) or "$(" in target or "`" in target:
        return None
    if target.startswith("/"):
        if root and (target.rstrip("/") == root):
            return ""
        if root and target.startswith(root + "/"):
            return posixpath.normpath(target[len(root) + 1:]).strip("/")
        return None
    if cwd is None:
        return None
    joined = posixpath.normpath(posixpath.join(cwd or ".", target))
    if joined == ".":
        return ""
    return None if joined.startswith("..") else joined


@dataclass
class ParsedLine:
    """A command line, read: its segments and the folder the shell is in afterwards."""

    segments: list[Segment]
    cwd_after: str | None


def parse_line(command: str, cwd: str | None, root: str) -> ParsedLine:
    """Segments of ``command`` started in ``cwd`` (project-relative), following ``cd`` as the shell does."""
    segments: list[Segment] = []
    here = cwd
    parts = split_top(command)
    for i, (op, text) in enumerate(parts):
        target = _cd_target(text)
        if target is not None:
            here = move(here, target, root)
            continue
        if text == "popd":
            here = None
            continue
        stages = _pipe_stages(text)
        main, env = strip_wrappers(stages[0]) if stages else ("", [])
        filtered = [s for s in stages[1:] if s.split()[0].rsplit("/", 1)[-1] not in _FILTERS]
        if filtered:  # a real pipeline (``a | b``): the recipe is the whole of it
            main = " | ".join([main, *(strip_wrappers(s)[0] for s in stages[1:])])
        masked = len(stages) > 1 and not filtered
        nxt = parts[i + 1] if i + 1 < len(parts) else None
        if nxt is not None and nxt[0] in ("||", ";"):
            masked = True  # "x || true", "x; y": its exit status is swallowed or never reaches the caller
        if not main:
            continue
        segments.append(Segment(main, op, env, masked, here))
    return ParsedLine(segments, here)


def is_setup(segment: Segment) -> bool:
    """True for a segment that prepares the shell (``source .venv/bin/activate``, ``export X=``)."""
    return bool(_SETUP.match(segment.text))


def is_noise(segment: Segment) -> bool:
    """True for a segment that does nothing a recipe needs (``echo``, ``sleep``, ``true``)."""
    return bool(_NOISE.match(segment.text))
