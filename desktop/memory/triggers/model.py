"""What makes a memory fire, and the tool call it is checked against.

A lesson carries its own trigger (seed 002's negative memories with trigger patterns): the
shape of the command that failed, the path an agent looked in for nothing, the files a rule
governs. Before an agent's tool call runs, the call is reduced to a :class:`CallShape` and the
triggers whose index key it mentions are checked against it. The kinds:

* ``command``: a shell run of ``program`` whose subcommand starts with ``words`` and that was
  given every one of ``tokens`` (``git`` / ``show`` / ``--no-stat``), unless it was also given
  every one of ``unless`` (a rule's recommended form, which the call already follows);
* ``path``: a read, search or listing under ``path`` (``missing``: only of something not on disk);
* ``edit``: an edit or write of a file under ``path`` ending in ``key`` (an extension, the
  file name itself, ``*`` for any file, or ``<tests>`` for a test file by its name or folder);
* ``code``: an edit or write whose new text has a line of the shape ``key`` (``code_shape``): the
  construct a checker flagged before, about to be written again, in a file of the kind it was
  flagged in (``tokens``: its extensions, a Go construct in a Markdown plan is not code; and
  ``<tests>`` when it was flagged only in test files);
* ``tool``: a call of the non-shell tool ``key`` (an MCP server's ``mcp__tracker__create_ticket``) given
  any of the argument values ``tokens`` (``queue=Ops``: refused before) or lacking any of the arguments
  ``unless`` (``component``: the user declined a call without it).

A ``command`` trigger keyed ``<!>`` is about a quoted ``!`` next to a space, which the agent's shell
tool has been seen to rewrite (``observer/shell_escapes``), given to the program it broke (its one
token: ``jq`` for a jq filter, whichever program runs it).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from desktop.memory.observer.command_shape import Command, Segment, parse, resolve_dir
from desktop.memory.observer.tool_names import OTHER
from desktop.memory.text.file_kinds import declared_tests, is_test_file
from desktop.memory.text.lazy_re import lazy
from desktop.memory.triggers.code_shape import same_assignment, written_calls, written_shapes, written_text

COMMAND, PATH, EDIT, CODE, TOOL = "command", "path", "edit", "code", "tool"
KINDS: Final = (COMMAND, PATH, EDIT, CODE, TOOL)
#: Triggers about an edit and what it writes: they fire before it (or after it, for an agent that
#: reads nothing before a call), never after an edit that failed and so wrote nothing.
WRITE_TRIGGERS: Final = frozenset({CODE, EDIT})
#: Canonical tools (observer/tool_names) by what they do to a path.
LOOK_TOOLS: Final = frozenset({"Read", "Grep", "Glob", "LS"})
EDIT_TOOLS: Final = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
#: Longest argument value a ``tool`` trigger compares (longer ones are a request's text).
PARAM_CHARS: Final = 80
ANY_FILE: Final = "*"
#: An edit trigger's key for any test file (``file_kinds.is_test_file``: ``x_test.go``, ``tests/y.py``).
TEST_FILES: Final = "<tests>"
#: A command trigger's key for any run with a quoted ``!`` next to a space (``observer/shell_escapes``).
BANG_IN_QUOTES: Final = "<!>"
#: A ``!`` next to whitespace (or ending the text, or before ``=`` and a space): where the harness
#: puts its backslash.
EXPOSED_BANG: Final = lazy(r"(?<!\\)!(?=\s|=\s|$)|(?<=\s)!")
#: The first ``unless`` token of a trigger whose recommended form is a setup step run before the program
#: (``source .venv/bin/activate && ruff``): an earlier step of the call meets it, not the program's own args.
SETUP_STEP: Final = "<setup>"
#: A command argument that names a path in the project (a folder with a slash, or a file name).
PATH_ARG: Final = lazy(r"^\.?[\w@+-][\w@.+-]*(?:/[\w@.+*-]*)+$|^[\w@+-][\w@+-]*\.[A-Za-z]\w{0,7}$")


@dataclass(frozen=True, slots=True)
class Trigger:
    """One condition under which a memory is worth saying before a tool call."""

    kind: str
    key: str
    words: tuple[str, ...] = ()
    tokens: tuple[str, ...] = ()
    path: str = ""
    missing: bool = False
    unless: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        """The stored form (empty fields left out)."""
        out: dict[str, Any] = {"kind": self.kind, "key": self.key}
        if self.words:
            out["words"] = list(self.words)
        if self.tokens:
            out["tokens"] = list(self.tokens)
        if self.path:
            out["path"] = self.path
        if self.missing:
            out["missing"] = True
        if self.unless:
            out["unless"] = list(self.unless)
        return out

    @classmethod
    def from_json(cls, data: Any) -> Trigger | None:
        """A trigger from its stored form; None for anything malformed (never raises)."""
        if not isinstance(data, dict) or data.get("kind") not in KINDS or not isinstance(data.get("key"), str):
            return None
        words, tokens, unless = data.get("words") or [], data.get("tokens") or [], data.get("unless") or []
        if not all(isinstance(w, str) for w in [*words, *tokens, *unless]) or \
                not isinstance(data.get("path", ""), str):
            return None
        key = same_assignment(data["key"][:200]) if data["kind"] == CODE else data["key"][:200]
        return cls(data["kind"], key, tuple(words)[:4], tuple(tokens)[:6],
                   str(data.get("path", ""))[:300], bool(data.get("missing")), tuple(unless)[:6])

    def spec(self) -> str:
        """A canonical JSON text (the stored row's identity)."""
        return json.dumps(self.as_json(), sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class CallShape:
    """A tool call about to run, reduced to what triggers look at."""

    tool: str                       # canonical tool name (Bash, Read, Edit, ...)
    command: Command | None         # the parsed shell command (Bash)
    paths: tuple[str, ...]          # project-relative paths it reads, searches or writes
    cwd: str = ""                   # project-relative folder the shell runs in ('' = root)
    code: tuple[str, ...] = ()      # shapes of the lines an edit or write is about to put in a file
    adds_tests: bool = False        # an edit or write that declares test cases the text it replaces did not
    raw_tool: str = ""              # the agent's own name of a tool with no canonical one (an MCP tool)
    params: tuple[str, ...] = ()    # that tool's arguments: each name, and ``name=value`` for a short value

    def keys(self) -> list[tuple[str, str]]:
        """The (kind, key) index entries this call can match."""
        out: list[tuple[str, str]] = []
        if self.command is not None:
            out += [(COMMAND, p) for p in dict.fromkeys(self.command.programs())]
            if quoted_bang(self.command):
                out.append((COMMAND, BANG_IN_QUOTES))
        for p in self.paths:
            out.append((PATH, p.split("/", 1)[0]))
            if self.tool in EDIT_TOOLS:
                out.append((EDIT, posixpath.splitext(p)[1] or posixpath.basename(p)))
                out.append((EDIT, posixpath.basename(p)))
                out.append((EDIT, ANY_FILE))
                if is_test_file(p):
                    out.append((EDIT, TEST_FILES))
        out += [(CODE, c) for c in self.code]
        if self.raw_tool:
            out.append((TOOL, self.raw_tool))
        return list(dict.fromkeys(out))


def exposed_bang(arg: str) -> bool:
    """True for an argument the harness would rewrite: it holds whitespace (so it was quoted: an
    unquoted word has none) and a ``!`` next to it (``select(.a != 1)``, ``"done! now"``)."""
    return "!" in arg and any(c.isspace() for c in arg) and bool(EXPOSED_BANG.search(arg))


def filter_language(seg: Segment) -> str:
    """What reads a segment's quoted arguments: ``jq`` for a jq filter (``jq '…'``, ``gh api --jq '…'``),
    else the program itself."""
    return "jq" if seg.program == "jq" or any(a == "--jq" or a.startswith("--jq=") for a in seg.args) else seg.program


def quoted_bang(command: Command, reader: str = "") -> bool:
    """True when some argument of the command is one the harness would rewrite (given to ``reader``,
    see :func:`filter_language`, when one is named)."""
    return any(exposed_bang(a) for seg in command.segments if not reader or filter_language(seg) == reader
               for a in seg.args)


def shape_of(tool: str, args: dict[str, Any], paths: list[str], cwd: str = "", raw_tool: str = "") -> CallShape:
    """The shape of a canonical tool call (``paths`` already project-relative; ``raw_tool``: the
    agent's name for a tool with no canonical one, whose arguments ``tool`` triggers read)."""
    command = parse(str(args.get("command") or "")) if tool == "Bash" else None
    run_in = resolve_dir(cwd, command.cwd) if command is not None and command.cwd else cwd
    named = list(paths)
    if command is not None:  # the relative paths a command names (``git add logs/``, ``cat docs/x.md``)
        named += [resolve_dir(run_in, a.rstrip("/")) for s in command.segments for a in s.args
                  if PATH_ARG.match(a) and not a.startswith(("/", "~", "-"))]
    new = written_text(args) if tool in EDIT_TOOLS else ""
    code = (*written_shapes(new.splitlines()), *written_calls(new, replaced_texts(args))) if new else ()
    own = raw_tool if tool == OTHER and raw_tool else ""
    return CallShape(tool, command, tuple(dict.fromkeys(p for p in named if p and not p.startswith(("/", "..")))),
                     run_in, code, tool in EDIT_TOOLS and adds_tests(args), own, tool_params(args) if own else ())


def param_value(value: Any) -> str | None:
    """An argument's value as a tool trigger compares it: a short one-line text, a number or a flag;
    None for a long or structured value (a title or a body is the request, not a parameter)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str) and value.strip() and len(value) <= PARAM_CHARS and "\n" not in value:
        return value.strip()
    return None


def tool_params(args: dict[str, Any]) -> tuple[str, ...]:
    """A tool call's arguments for ``tool`` triggers: each given name, and ``name=value`` for a short value."""
    out: list[str] = []
    for name, value in list(args.items())[:40]:
        if value is None or value == "" or value == [] or value == {}:
            continue
        out.append(name)
        shown = param_value(value)
        if shown is not None:
            out.append(f"{name}={shown}")
    return tuple(out)


def replaced_texts(args: dict[str, Any]) -> list[str]:
    """The old texts an edit replaces, in each agent's argument names (the counterpart of
    ``code_shape.written_text``)."""
    edits = args.get("edits")
    olds = [args.get("old_string"), args.get("old_str"),
            *(e.get("old_string") for e in (edits if isinstance(edits, list) else []) if isinstance(e, dict))]
    return [o for o in olds if isinstance(o, str)]


def adds_lines(args: dict[str, Any], *, whole_file: bool = False) -> bool:
    """True for an edit that adds to a file (a whole file written, new text longer than the old it
    replaces, or texts the agent does not report), not one that renames or rewords what is there
    (``replace_all`` of a name): the observer's tests habits read it."""
    old = sum(len(o.splitlines()) for o in replaced_texts(args))
    new = written_text(args)
    if whole_file or not (old or new):
        return True
    return len(new.splitlines()) > old


def adds_tests(args: dict[str, Any]) -> bool:
    """True for an edit or write that declares more test cases than the text it replaces: new tests,
    not an update of the ones there (a renamed type, a fixed expectation, a moved path)."""
    return declared_tests(written_text(args)) > sum(declared_tests(o) for o in replaced_texts(args))


def _under(path: str, prefix: str) -> bool:
    prefix = prefix.rstrip("/")
    return not prefix or path == prefix or path.startswith(prefix + "/")


def on_disk(root: Path, path: str) -> bool:
    """True when ``path`` (project-relative; a glob pattern matches something) exists under ``root``."""
    try:
        if any(c in path for c in "*?["):
            return next(iter(root.glob(path)), None) is not None
        return (root / path).exists()
    except (OSError, ValueError):
        return True  # unknown: say nothing rather than warn about a look that may succeed


def _set_up_before(setup: tuple[str, ...], earlier: Iterable[Segment]) -> bool:
    """True when a step before the one a trigger is about is the setup it asks for (``source
    .venv/bin/activate`` before ``ruff``): the call already follows the lesson."""
    return bool(setup) and any(not seg.piped and seg.program == setup[0] and all(seg.has(t) for t in setup[1:])
                               for seg in earlier)


def matches(trigger: Trigger, call: CallShape, root: Path | None = None) -> bool:
    """True when ``call`` is what ``trigger`` is about (``root``: check ``missing`` paths on disk)."""
    if trigger.kind == COMMAND:
        if call.command is None:
            return False
        if trigger.key == BANG_IN_QUOTES:
            return quoted_bang(call.command, trigger.tokens[0] if trigger.tokens else "")
        segments = call.command.segments
        return any(seg.program == trigger.key and seg.words[:len(trigger.words)] == trigger.words
                   and all(seg.has(t) for t in trigger.tokens)
                   and not (trigger.unless and (all(seg.has(t) for t in trigger.unless)
                                                or (trigger.unless[0] == SETUP_STEP
                                                    and _set_up_before(trigger.unless[1:], segments[:i]))))
                   for i, seg in enumerate(segments))
    if trigger.kind == PATH:
        if call.tool not in LOOK_TOOLS and call.tool != "Bash":
            return False
        under = [p for p in call.paths if _under(p, trigger.path)]
        if not under:
            return False
        # ``missing``: only a look at something not on disk (the lesson's own folder may exist:
        # a file name guessed in it), so a look that will succeed hears nothing.
        return not trigger.missing or root is None or any(not on_disk(root, p) for p in under)
    if trigger.kind == EDIT:
        return call.tool in EDIT_TOOLS and any(
            _under(p, trigger.path) and (trigger.key == ANY_FILE or p.endswith(trigger.key)
                                         or posixpath.basename(p) == trigger.key
                                         or (trigger.key == TEST_FILES and is_test_file(p)))
            for p in call.paths)
    if trigger.kind == CODE:
        exts = tuple(t for t in trigger.tokens if t != TEST_FILES)
        tests_only = TEST_FILES in trigger.tokens
        return call.tool in EDIT_TOOLS and trigger.key in call.code and any(
            (not exts or p.endswith(exts)) and (not tests_only or is_test_file(p)) for p in call.paths)
    if trigger.kind == TOOL:
        return call.raw_tool == trigger.key and (any(t in call.params for t in trigger.tokens)
                                                 or any(u not in call.params for u in trigger.unless))
    return False
