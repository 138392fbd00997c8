"""Files an agent deleted or moved with a shell command.

Agents delete and rename files with ``rm``, ``git rm``, ``mv`` and ``git mv`` far
more often than with a dedicated tool. If the observer did not notice, the
project's learned picture would keep recommending files that no longer exist
(and would lose the history of a renamed file). This module reads those four
commands out of a shell command line; anything it cannot vouch for (substitution,
globs, unknown options) is ignored rather than guessed.
"""

from __future__ import annotations

import logging
import posixpath
from dataclasses import dataclass, field
from typing import Final

from desktop.memory.observer.shell import shell_tokens
from desktop.memory.observer.tool_names import relative_path

logger = logging.getLogger("engram.observer")

_SEPARATORS: Final = frozenset({";", "&&", "||", "|", "&"})
_REDIRECTS: Final = frozenset({">", ">>", "<", "<<", ">|", "&>", "2>", "2>>"})
_GLOB_CHARS: Final = frozenset("*?[")
# Options after which the command does not delete or move anything in the tree.
_KEEPS_FILES: Final = frozenset({"--cached", "-n", "--dry-run", "-h", "--help"})


@dataclass
class FileOps:
    """What one command line did to project files (paths relative to the project)."""

    removed: list[str] = field(default_factory=list)
    moved: list[tuple[str, str]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.removed or self.moved)


def _segments(tokens: list[str]) -> list[list[str]]:
    """Split a token list into simple commands, dropping redirection targets."""
    out: list[list[str]] = [[]]
    skip = False
    for tok in tokens:
        if skip:
            skip = False
            continue
        if tok in _SEPARATORS:
            out.append([])
        elif tok in _REDIRECTS:
            skip = True  # the next token is a redirection target, not an operand
            if out[-1] and out[-1][-1].isdigit():
                out[-1].pop()  # `2>/dev/null`: the 2 is a file descriptor
        else:
            out[-1].append(tok)
    return [seg for seg in out if seg]


def _project_path(arg: str, cwd: str, workdir: str, *, glob_ok: bool = False) -> str | None:
    """The project-relative path of an operand, or None when outside the project (or a glob)."""
    if not arg or (not glob_ok and any(c in _GLOB_CHARS for c in arg)) or arg.startswith("$"):
        return None
    rel = relative_path(arg, cwd, workdir)
    if rel in (".", "") or rel.startswith(("/", "../")) or rel == "..":
        return None
    return rel


def file_operations(command: str, cwd: str) -> FileOps:
    """Deletions and moves done by ``command`` run in ``cwd`` (the project folder).

    Understands ``rm``, ``git rm`` (not ``--cached``), ``mv`` and ``git mv``, chained
    with ``&&``/``;``/``||`` and preceded by ``cd``. A removed path may be a folder
    (everything under it went) or, for ``rm``, a glob such as ``docs/*.png`` (matched
    against known files later). A move onto a path ending in ``/`` (or of several
    sources) moves into that folder. Never raises.
    """
    ops = FileOps()
    tokens = shell_tokens(command or "")
    if not tokens or not cwd:
        return ops
    workdir = cwd
    for seg in _segments(tokens):
        argv = seg
        if argv[0] == "git" and len(argv) > 1:
            argv = ["git " + argv[1], *argv[2:]]
        name = posixpath.basename(argv[0]) if not argv[0].startswith("git ") else argv[0]
        if name == "cd" and len(argv) == 2:
            workdir = posixpath.normpath(posixpath.join(workdir, argv[1]))
            continue
        if name not in ("rm", "git rm", "mv", "git mv"):
            continue
        opts = [a for a in argv[1:] if a.startswith("-") and a != "-"]
        if any(o in _KEEPS_FILES or o.startswith("--target") or o == "-t" for o in opts):
            continue
        operands = [a for a in argv[1:] if not a.startswith("-")]
        if name in ("rm", "git rm"):
            ops.removed.extend(p for p in (_project_path(a, cwd, workdir, glob_ok=True) for a in operands) if p)
            continue
        if len(operands) < 2:
            continue
        *sources, target = operands
        dst = _project_path(target, cwd, workdir)
        into_folder = target.endswith("/") or len(sources) > 1
        for src_arg in sources:
            src = _project_path(src_arg, cwd, workdir)
            if src is None:
                continue
            if dst is None:  # moved out of the project: as good as deleted
                ops.removed.append(src)
            else:
                ops.moved.append((src, posixpath.join(dst, posixpath.basename(src)) if into_folder else dst))
    return ops
