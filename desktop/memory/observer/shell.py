"""Classify shell commands that merely read or search files.

Codex (and Gemini, and sometimes Claude Code) reads code with ``cat``, ``sed -n``,
``nl``, ``head`` and searches with ``rg``/``grep`` instead of dedicated tools. If
those stayed plain ``Bash`` calls, the file-access and co-access signals would be
blind for those agents. So a command is re-labelled as Read/Grep/Glob only when it
is one simple command (optionally piped through harmless filters) whose paths are
obvious; anything with redirection, chaining, substitution or in-place edits stays
``Bash`` because it may change state.
"""

from __future__ import annotations

import logging
import os
import shlex
from dataclasses import dataclass, field
from typing import Final

logger = logging.getLogger("engram.observer")

_READERS: Final = frozenset({"cat", "nl", "less", "more", "bat", "batcat", "head", "tail", "sed"})
_SEARCHERS: Final = frozenset({"rg", "grep", "egrep", "fgrep", "ag", "ack"})
_LISTERS: Final = frozenset({"ls", "find", "fd", "tree"})
# Stages allowed after a pipe: they only reshape the text on stdin.
_FILTERS: Final = frozenset({"head", "tail", "wc", "nl", "sort", "uniq", "cut", "cat", "sed", "less"})
_SHELLS: Final = frozenset({"bash", "sh", "zsh", "dash"})
# Options whose value is the next token; it must not be mistaken for a path.
_VALUE_OPTS: Final = {
    "head": frozenset({"-n", "-c", "--lines", "--bytes"}),
    "tail": frozenset({"-n", "-c", "--lines", "--bytes"}),
    "sed": frozenset({"-e", "-f", "-l"}),
    "nl": frozenset({"-b", "-w", "-s", "-v", "-i"}),
    "rg": frozenset({"-e", "-f", "-g", "--glob", "-t", "--type", "-T", "--type-not", "-A", "-B",
                     "-C", "-m", "--max-count", "--max-depth", "-M", "-j", "--threads", "-E",
                     "--encoding", "--iglob", "--context", "--after-context", "--before-context"}),
    "grep": frozenset({"-e", "-f", "-A", "-B", "-C", "-m", "--include", "--exclude",
                       "--exclude-dir", "-d", "-D", "--max-count"}),
    "find": frozenset(),
    "ls": frozenset({"-I", "--ignore", "-w", "--width", "--sort", "--color", "-T"}),
}
_UNSAFE_TOKENS: Final = frozenset({";", "&&", "||", "&", ">", ">>", "<", "<<", "(", ")", ">|", "&>"})


@dataclass(frozen=True, slots=True)
class ShellClass:
    """What a shell command does, as far as file access goes."""

    tool: str  # canonical: Read, Grep, Glob or Bash
    paths: tuple[str, ...] = ()
    extra: dict[str, str] = field(default_factory=dict)


BASH: Final = ShellClass("Bash")


def command_text(command: object) -> str:
    """Turn a command given as a string or argv list into one shell string.

    Codex logs ``["bash", "-lc", "<script>"]``; the script is what matters, so the
    shell wrapper is peeled off.
    """
    if isinstance(command, list):
        argv = [str(a) for a in command]
        if len(argv) >= 3 and os.path.basename(argv[0]) in _SHELLS and argv[1] in {"-c", "-lc"}:
            return argv[2]
        return shlex.join(argv)
    return str(command) if command is not None else ""


def shell_tokens(command: str) -> list[str] | None:
    """Split like a POSIX shell, keeping operators as separate tokens."""
    if "`" in command or "$(" in command or "\n" in command:
        return None
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>()")
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:  # unbalanced quotes: not something we can reason about
        return None


def _positional(cmd: str, args: list[str]) -> tuple[list[str], dict[str, list[str]]] | None:
    """Separate positional arguments from options (and the values options take)."""
    value_opts = _VALUE_OPTS.get(cmd, frozenset())
    positional: list[str] = []
    opts: dict[str, list[str]] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            positional.extend(args[i + 1:])
            break
        if arg.startswith("-") and len(arg) > 1:
            name, has_eq, value = arg.partition("=")
            if has_eq:
                opts.setdefault(name, []).append(value)
            elif arg in value_opts:
                if i + 1 >= len(args):
                    return None
                opts.setdefault(arg, []).append(args[i + 1])
                i += 1
            else:
                opts.setdefault(arg, [])
        else:
            positional.append(arg)
        i += 1
    return positional, opts


def _classify_read(cmd: str, args: list[str]) -> ShellClass:
    parsed = _positional(cmd, args)
    if parsed is None:
        return BASH
    positional, opts = parsed
    if cmd == "sed":
        # Only `sed -n` prints selected lines without touching the file.
        if not ({"-n", "--quiet", "--silent"} & opts.keys()) or any(o.startswith("-i") for o in opts):
            return BASH
        if "-e" not in opts and "-f" not in opts:
            positional = positional[1:]  # the first positional is the script
    if not positional:
        return BASH
    return ShellClass("Read", tuple(positional), {})


def _classify_search(cmd: str, args: list[str]) -> ShellClass:
    parsed = _positional(cmd, args)
    if parsed is None:
        return BASH
    positional, opts = parsed
    if cmd == "rg" and "--files" in opts:
        return ShellClass("Glob", tuple(positional), {"pattern": ",".join(opts.get("-g", []))})
    patterns = opts.get("-e", [])
    if not patterns:
        if not positional:
            return BASH
        patterns, positional = [positional[0]], positional[1:]
    return ShellClass("Grep", tuple(positional), {"pattern": patterns[0]})


def _classify_list(cmd: str, args: list[str]) -> ShellClass:
    if cmd == "find":
        if any(a in {"-exec", "-execdir", "-delete", "-ok", "-fprint"} for a in args):
            return BASH
        roots = []
        for arg in args:
            if arg.startswith("-") or arg in {"(", "!"}:
                break
            roots.append(arg)
        pattern = ""
        for flag in ("-name", "-iname", "-path"):
            if flag in args and args.index(flag) + 1 < len(args):
                pattern = args[args.index(flag) + 1]
                break
        return ShellClass("Glob", tuple(roots), {"pattern": pattern})
    parsed = _positional(cmd, args)
    if parsed is None:
        return BASH
    positional, _ = parsed
    if cmd == "fd" and positional:
        return ShellClass("Glob", tuple(positional[1:]), {"pattern": positional[0]})
    return ShellClass("Glob", tuple(positional), {})


def classify_command(command: object) -> ShellClass:
    """Classify a shell command as Read, Grep, Glob or (by default) Bash.

    ``command`` may be a string or an argv list. Never raises: anything the parser
    cannot vouch for is ``Bash``.
    """
    text = command_text(command).strip()
    tokens = shell_tokens(text)
    if not tokens or any(t in _UNSAFE_TOKENS or "$(" in t for t in tokens):
        return BASH
    stages: list[list[str]] = [[]]
    for tok in tokens:
        if tok == "|":
            stages.append([])
        else:
            stages[-1].append(tok)
    if any(not stage for stage in stages):
        return BASH
    for stage in stages[1:]:
        name = os.path.basename(stage[0])
        if name not in _FILTERS or (name == "sed" and any(a.startswith("-i") for a in stage)):
            return BASH
    argv = stages[0]
    cmd = os.path.basename(argv[0])
    if cmd in _SHELLS and len(stages) == 1 and len(argv) == 3 and argv[1] in {"-c", "-lc"}:
        return classify_command(argv[2])  # `bash -lc '<script>'` given as one string
    if "=" in cmd:  # `FOO=1 cat x`: an environment prefix; too clever to guess
        return BASH
    if cmd in _READERS:
        return _classify_read(cmd, argv[1:])
    if cmd in _SEARCHERS:
        return _classify_search(cmd, argv[1:])
    if cmd in _LISTERS:
        return _classify_list(cmd, argv[1:])
    return BASH
