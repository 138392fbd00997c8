"""The shape of a shell command: which programs it runs, with which subcommands and flags, where.

A lesson about a command ("``git show --no-stat`` is not an option") must fire on the next
command of the same shape whatever its arguments, quoting, wrappers and chaining: ``cd x &&
timeout 60 git show abc --no-stat 2>&1 | head``. This module turns a command line into
:class:`Segment` s (one per program run, wrappers and environment assignments removed, output
plumbing dropped) and tracks the working folder a ``cd`` moves the shell to. It knows shell
syntax, not any project: no program is special except the wrappers that only run another.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass
from typing import Final

from desktop.memory.text.lazy_re import lazy

#: Programs that only run the command after them (their own options are skipped).
_WRAPPERS: Final = frozenset({"timeout", "time", "nice", "nohup", "env", "sudo", "command", "exec", "stdbuf",
                              "caffeinate", "xargs", "watch", "ionice", "chronic", "unbuffer"})
#: Wrapper options that take a value (``timeout -k 5 60 cmd``, ``sudo -u bob cmd``, ``nice -n 5 cmd``).
_WRAPPER_VALUE_OPTS: Final = frozenset({"-k", "-s", "-u", "-g", "-n", "-o", "-e", "-i", "--signal", "--kill-after",
                                        "-I", "-L", "-P"})
_SHELLS: Final = frozenset({"bash", "sh", "zsh", "dash", "fish"})
_OPERATORS: Final = frozenset({"&&", "||", ";", "|", "&", "|&", ";;", "(", ")", "\n"})
#: A redirection operator as the lexer splits it (``2>&1`` arrives as ``2``, ``>&``, ``1``).
_REDIRECT_OP: Final = lazy(r"^(?:&?>>?|<<?<?|>&|<&|&>>?|>\|)$")
_ASSIGNMENT: Final = lazy(r"^[A-Za-z_][A-Za-z0-9_]*=")
#: A subcommand word: lower-case identifier-like (``show``, ``test:ci``, ``pr``), never a path or a number.
_WORD: Final = lazy(r"^[a-z][a-z0-9_:-]*$")
MAX_WORDS: Final = 2


@dataclass(frozen=True, slots=True)
class Segment:
    """One program run by a command line."""

    program: str                 # the program's base name (``git``), or ``python -m``'s module
    words: tuple[str, ...]       # its subcommand words (``("pr", "diff")`` for ``gh pr diff 12``)
    flags: tuple[str, ...]       # its options without values (``--no-stat``, ``-k``)
    args: tuple[str, ...]        # every argument after the program, unquoted
    piped: bool = False          # it reads another program's output (``| head``)

    def has(self, token: str) -> bool:
        """True when the segment was given ``token`` (a flag also matches its ``--flag=value`` form)."""
        if token.startswith("-"):
            return any(a == token or a.startswith(token + "=") for a in self.args)
        return token in self.args or any(token in a for a in self.args if len(token) >= 3)

    def text(self) -> str:
        """The segment as one line (quoted where needed), for messages."""
        return " ".join(shlex.quote(p) for p in (self.program, *self.args))


@dataclass(frozen=True, slots=True)
class Command:
    """A parsed command line: its segments and where it runs."""

    segments: tuple[Segment, ...]
    cwd: str                     # the folder its programs run in ('' = where the shell was)
    leaves_cwd: str              # the folder the shell is left in ('' = unchanged)

    def programs(self) -> list[str]:
        """The programs it runs, in order (piped filters included)."""
        return [s.program for s in self.segments]

    def main(self) -> Segment | None:
        """The first segment that is not a filter on another's output."""
        return next((s for s in self.segments if not s.piped), None)


def _split(command: str) -> list[str] | None:
    lexer = shlex.shlex(command.replace("\\\n", " "), posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote: the command is not parseable (and would not have run)
        return None


def _unwrap(tokens: list[str]) -> list[str]:
    """Drop environment assignments and wrappers in front of the real program."""
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if _ASSIGNMENT.match(tok):
            i += 1
            continue
        if posixpath.basename(tok) in _WRAPPERS:
            i += 1
            while i < len(tokens) and (tokens[i].startswith("-") or _ASSIGNMENT.match(tokens[i])):
                i += 2 if tokens[i] in _WRAPPER_VALUE_OPTS else 1
            if posixpath.basename(tok) == "timeout" and i < len(tokens) and re.match(r"^\d+(?:\.\d+)?[smhd]?$",
                                                                                    tokens[i]):
                i += 1  # the duration
            continue
        break
    return tokens[i:]


def _segment(tokens: list[str], piped: bool) -> Segment | None:
    clean: list[str] = []
    skip = False
    for tok in (t for t in tokens if t):  # redirections, their fd numbers and targets shape output only
        if skip:
            skip = False
            continue
        if _REDIRECT_OP.match(tok):
            if clean and clean[-1].isdigit():
                clean.pop()
            skip = True
            continue
        clean.append(tok)
    clean = _unwrap(clean)
    if not clean:
        return None
    program, args = posixpath.basename(clean[0]), clean[1:]
    if program in ("python", "python3") and len(args) >= 2 and args[0] == "-m":
        program, args = args[1], args[2:]
    words: list[str] = []
    for a in args:
        if len(words) == MAX_WORDS or a.startswith("-") or not _WORD.match(a):
            break
        words.append(a)
    flags = tuple(dict.fromkeys(a.split("=", 1)[0] for a in args if a.startswith("-") and len(a) > 1))
    return Segment(program, tuple(words), flags, tuple(args), piped)


def parse(command: str) -> Command:
    """The segments of ``command`` and the folder it runs in (never raises)."""
    tokens = _split(command)
    if tokens is None:
        return Command((), "", "")
    segments: list[Segment] = []
    cwd = ""
    current: list[str] = []
    piped = False
    inner: list[Segment] = []

    def close(next_piped: bool) -> None:
        nonlocal cwd, current, piped
        seg = _segment(current, piped)
        current = []
        piped = next_piped
        if seg is None:
            return
        if seg.program == "cd" and not seg.piped:
            target = next((a for a in seg.args if not a.startswith("-")), "~")
            cwd = target if target.startswith(("/", "~")) else posixpath.normpath(posixpath.join(cwd, target))
            return
        run_flag = next((i for i, a in enumerate(seg.args) if re.match(r"^-[a-z]*c[a-z]*$", a)), None)
        if seg.program in _SHELLS and run_flag is not None:
            script = seg.args[run_flag + 1] if run_flag + 1 < len(seg.args) else ""
            inner.extend(parse(script).segments if script else ())
            return
        segments.append(seg)
        segments.extend(inner)
        inner.clear()

    for tok in tokens:
        if tok in _OPERATORS or (tok and set(tok) <= set(";&|") and tok not in ("&",)):
            close(tok in ("|", "|&"))
            continue
        current.append(tok)
    close(False)
    segments.extend(inner)
    # A command that is only "cd X" (or ends with one) leaves the shell there for the next call.
    ends_in_cd = bool(tokens) and _last_program(tokens) == "cd"
    return Command(tuple(segments), cwd if segments else "", cwd if ends_in_cd or not segments else "")


def _last_program(tokens: list[str]) -> str:
    start = 0
    for i, tok in enumerate(tokens):
        if tok in _OPERATORS:
            start = i + 1
    rest = _unwrap([t for t in tokens[start:] if t])
    return posixpath.basename(rest[0]) if rest else ""


def resolve_dir(base: str, target: str) -> str:
    """``target`` (relative, absolute, ``..``) seen from ``base``; both project-relative or absolute."""
    if not target:
        return base
    if target.startswith("/"):
        return posixpath.normpath(target)
    return posixpath.normpath(posixpath.join(base or ".", target)).removeprefix("./")
