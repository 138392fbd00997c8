"""What a checker's output says, read by its format, never by a project's words.

- ``diagnostics``: each rule a linter, type checker, compiler or test runner named
  (``file:line: message (rule)``, ``[rule]``, ``E501``, ``TS2345``, ``error[E0382]``), with its
  first message, its file and the constructs its caret pointed at;
- ``annotation``: the suppression an edit added (``//nolint:nilerr //``, ``# noqa: E711``);
- ``failing_place``: where a check failed, in a form that outlives the day's error;
- ``build_switches``: the build tags or features a check ran with, from its command or its task
  runner's echo (``[test:ci] $ go test -tags=integration ./...``).
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Final, NamedTuple

from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.triggers.code_shape import flagged_shape, is_call

MAX_SHAPES: Final = 3
#: The characters of an output line read: a diagnostic is shorter; a longer line is data.
MAX_LINE: Final = 2000
#: Build switches that leave code out of a build unless given, by what they select: the reason a
#: weaker check passes while a sibling fails. Read from the command and from the task runner's echo
#: of what it ran (``[test:ci] $ go test -tags=integration ./...``).
_SWITCHES: Final = ((("build tag", "-tags"), re.compile(r"(?<![\w-])-tags[= ]['\"]?([\w,.-]+)")),
                    (("feature", "--features"), re.compile(r"(?<![\w-])--features[= ]['\"]?([\w,.-]+)")))

#: A file as checkers print it. It starts where a path can start, never inside a run of path characters:
#: searched from every position of a long run without dots (a minified line, a base64 blob), the
#: pattern's backtracking made each line quadratic (a 30,000-character line took 90 s).
_FILE: Final = r"(?<![\w@.+/-])(?P<file>(?:\.{0,2}/)?[\w@+-][\w@.+/-]*\.[A-Za-z]\w{0,7})"
#: An ESLint rule: ``no-console``, ``@typescript-eslint/no-explicit-any``, ``react/jsx-key``.
_JS_RULE: Final = r"(?P<rule>[@\w][\w@/.-]{1,80})"
#: Diagnostic lines of common checkers, by their output format.
_DIAGNOSTICS: Final = (
    # golangci-lint, staticcheck, many linters: path:line:col: message (rule)
    re.compile(_FILE + r":(?P<line>\d+)(?::\d+)?:\s+(?P<msg>.+?)\s+\((?P<rule>[a-z][\w-]{1,40})\)\s*$"),
    # mypy / pyright: path:line: error: message  [rule]
    re.compile(_FILE + r":(?P<line>\d+)(?::\d+)?(?::| -)\s*error:\s+(?P<msg>.+?)\s+\[(?P<rule>[\w-]{2,40})\]\s*$"),
    re.compile(_FILE + r":(?P<line>\d+)(?::\d+)? - error:\s+(?P<msg>.+?)\s+\((?P<rule>report\w+)\)\s*$"),
    # ruff / flake8 / pylint: path:line:col: CODE message
    re.compile(_FILE + r":(?P<line>\d+):\d+:\s+(?P<rule>[A-Z]{1,4}\d{2,4})\b:?\s+(?P<msg>.+)$"),
    # tsc: path(line,col): error TS1234: message
    re.compile(_FILE + r"\((?P<line>\d+),\d+\):\s+error\s+(?P<rule>TS\d{3,5}):\s+(?P<msg>.+)$"),
    # rustc / cargo: error[E0382]: message (the file follows on a "-->" line)
    re.compile(r"^error\[(?P<rule>E\d{4})\]:\s+(?P<msg>.+)$"),
    # gcc-style warnings and notes with the rule last (clang-tidy, shellcheck -f gcc, cppcheck)
    re.compile(_FILE + r":(?P<line>\d+)(?::\d+)?:\s*(?:warning|note):\s+(?P<msg>.+?)\s+"
               r"\[(?P<rule>[\w.-]{2,60})\]\s*$"),
    # ESLint's unix and compact formats: ... [Error/rule], ... Error - message (rule)
    re.compile(_FILE + r":(?P<line>\d+):\d+:\s+(?P<msg>.+?)\s+\[(?:Error|Warning)/" + _JS_RULE + r"\]\s*$"),
    re.compile(_FILE + r": line (?P<line>\d+), col \d+, (?:Error|Warning) - (?P<msg>.+?)\s+\(" + _JS_RULE + r"\)\s*$"),
    # RuboCop: path:line:col: C: [Correctable] Dept/Cop: message
    re.compile(_FILE + r":(?P<line>\d+):\d+:\s+[CWEFR]:\s+(?:\[Correctable\]\s+)?"
               r"(?P<rule>[A-Z]\w+/[A-Z]\w+):\s+(?P<msg>.+)$"),
    # Checkstyle: [WARN] path:line:col: message [Rule]
    re.compile(r"^\[(?:WARN|ERROR)\]\s+" + _FILE + r":(?P<line>\d+)(?::\d+)?:\s+(?P<msg>.+?)\s+"
               r"\[(?P<rule>[A-Z]\w{2,60})\]\s*$"),
    # Biome: path:line:col lint/group/rule ━━━ (the message follows under it)
    re.compile(_FILE + r":(?P<line>\d+):\d+\s+(?P<rule>lint/\w+/\w+)(?P<msg>)(?:\s+\S+)*\s*━*\s*$"),
)
#: ESLint's default ("stylish") format: the file alone on a line, then ``  3:7  error  message  rule``.
_STYLISH_FILE: Final = re.compile(r"^" + _FILE + r"$")
_STYLISH: Final = re.compile(r"^(?P<line>\d+):\d+\s+(?:error|warning)\s+(?P<msg>.+?)\s{2,}" + _JS_RULE + "$")
#: rustc and clippy name a warning's lint after its frame: ``#[warn(clippy::needless_return)]`` on
#: its first report, the lint's page (``…/index.html#needless_return``) on every one.
_RUST_WARNING: Final = re.compile(r"^(?:warning|error): (?P<msg>.+)$")
_RUST_LINT: Final = re.compile(r"#\[(?:warn|deny|forbid)\((?:clippy::)?(?P<a>[\w:]+)\)\]|"
                               r"rust-clippy/\S*index\.html#(?P<b>\w+)")
#: Biome's message: the first line after its header that starts with its mark.
_BIOME_MESSAGE: Final = re.compile(r"^\s*[✖×!ℹ]\s+(?P<msg>\S.+)$")
_RUST_AT: Final = re.compile(r"^\s*-->\s+" + _FILE + r":(?P<line>\d+)")
#: ruff's default ("full") format: ``E711 message`` with the file on the ``-->`` line after it.
_CODE_HEADER: Final = re.compile(r"^(?P<rule>[A-Z]{1,4}\d{2,4})(?:\s+\[\*\])?\s+(?P<msg>\S.+)$")
#: A gutter frame (ruff, rustc, biome): ``4 |     if x == None:`` then ``  |        ^^^^``.
_GUTTER_SOURCE: Final = re.compile(r"^\s*>?\s*\d+\s*[|│](?: (?P<code>.*))?$")
_GUTTER_CARET: Final = re.compile(r"^\s*[|│] ?(?P<pad> *)\^")
_FRAME_LINES: Final = 12
#: Rule names checkers give plain compile errors (golangci-lint's ``typecheck``): the code was
#: broken, no project rule was learned.
_COMPILE_RULES: Final = frozenset({"typecheck", "compile", "syntax"})
#: Instance details in a checker message (numbers, quoted names) that differ from run to run.
#: Bare identifiers count as names when their shape is code's, never prose's: camelCase, PascalCase of
#: two words or more, snake_case (``TestX_Y should call t.Parallel``, ``F - param is unused``); a
#: qualified one (``git.StatusCode``, ``t.Parallel``) names an API, and stays.
_INSTANCE: Final = ((re.compile(r"`[^`]{1,80}`|'[^']{1,80}'|\"[^\"]{1,80}\""), "…"),
                    (re.compile(r"(?<![\w.])(?:[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|"
                                r"[A-Za-z][A-Za-z0-9]*_\w+)(?![\w.])"), "…"),
                    (re.compile(r"\b\d+\b"), "N"))
#: "message: <the code it is about>": the code part is the instance.
_CODE_TAIL: Final = re.compile(r"^(.{20,}?):\s+.*[().].*$")


def diagnostics(output: str) -> dict[str, list[Any]]:
    """Rule -> [message, file, shapes, sources] for each checker rule named in ``output`` (first
    message and file; ``shapes``: the constructs its caret pointed at, ``code_shape.flagged_shape``;
    ``sources``: the lines it flagged where the caret was on a name or keyword instead)."""
    found: dict[str, list[Any]] = {}
    pending_rust: str | None = None
    stylish_file = ""
    lines = [raw.rstrip()[:MAX_LINE] for raw in output[-40_000:].splitlines()[-600:]]
    for i, line in enumerate(lines):
        if pending_rust is not None:
            at = _RUST_AT.match(line)
            if at:
                found[pending_rust][1] = at.group("file")
                pending_rust = None
                continue
        if _STYLISH_FILE.match(line):
            stylish_file = line
            continue
        m = _match(line.strip(), lines, i, stylish_file)
        if m is None:
            continue
        rule, msg, file = m
        if rule not in found and rule not in _COMPILE_RULES and len(found) < 12:
            found[rule] = [general_message(msg), file.removeprefix("./"), [], []]
            if not file:
                pending_rust = rule
        if rule in found:
            flagged = _caret_shape(lines, i)
            if flagged and flagged not in found[rule][2] and len(found[rule][2]) < MAX_SHAPES:
                found[rule][2].append(flagged)
            # A caret on a name or keyword: its line is paired with its block later. A flagged call's
            # line is kept too: how an edit rewrote it is the fix to tell.
            source = "" if flagged and not is_call(flagged) else _flagged_source(lines, i)
            if source and source not in found[rule][3] and len(found[rule][3]) < MAX_SHAPES:
                found[rule][3].append(source)
    return found


def _match(line: str, lines: list[str], i: int, stylish_file: str) -> tuple[str, str, str] | None:
    """(rule, message, file) of the diagnostic at ``lines[i]`` (``line``, stripped); '' file when it
    follows on a ``-->`` line. ``stylish_file``: the file an ESLint block above it named."""
    after = lines[i + 1] if i + 1 < len(lines) else ""
    for rx in _DIAGNOSTICS:
        m = rx.search(line)
        if m:
            msg = m.group("msg") or _biome_message(lines, i)
            return (m.group("rule"), msg, m.groupdict().get("file") or "") if msg else None
    if stylish_file:
        m = _STYLISH.match(line)
        if m:
            return m.group("rule"), m.group("msg"), stylish_file
    head = _CODE_HEADER.match(line)
    at = _RUST_AT.match(after) if head else None
    if head is not None and at is not None:
        return head.group("rule"), head.group("msg"), at.group("file")
    warned = _RUST_WARNING.match(line)
    at = _RUST_AT.match(after) if warned else None
    if warned is not None and at is not None:
        lint = _rust_lint(lines, i)
        return (lint, warned.group("msg"), at.group("file")) if lint else None
    return None


def _rust_lint(lines: list[str], i: int) -> str:
    """The lint a rustc or clippy warning's notes name, before the next report starts ('' when none)."""
    for j in range(i + 2, min(i + 3 * _FRAME_LINES, len(lines))):
        if _RUST_WARNING.match(lines[j]):
            break
        m = _RUST_LINT.search(lines[j])
        if m:
            return (m.group("a") or m.group("b") or "").replace("clippy::", "").replace("-", "_")
    return ""


def _biome_message(lines: list[str], i: int) -> str:
    """Biome's message, on the marked line under its header ('' when there is none)."""
    for j in range(i + 1, min(i + 4, len(lines))):
        m = _BIOME_MESSAGE.match(lines[j])
        if m:
            return m.group("msg")
    return ""


def _caret_shape(lines: list[str], i: int) -> str:
    """The construct a diagnostic's caret points at: the source and caret lines right after it
    (golangci-lint), or the first caret of the gutter frame that follows (ruff, rustc)."""
    if i + 2 < len(lines):
        direct = flagged_shape(lines[i + 1], lines[i + 2])
        if direct:
            return direct
    for j in range(i + 1, min(i + _FRAME_LINES, len(lines) - 1)):
        source, caret = _GUTTER_SOURCE.match(lines[j]), _GUTTER_CARET.match(lines[j + 1])
        if source is not None and caret is not None:
            return flagged_shape(source.group("code") or "", caret.group("pad") + "^")
    return ""


def _flagged_source(lines: list[str], i: int) -> str:
    """The source line a diagnostic shows with a caret under it ('' when it shows none)."""
    if i + 2 < len(lines) and lines[i + 1].strip() and re.match(r"^\s*\^", lines[i + 2]):
        return lines[i + 1]
    for j in range(i + 1, min(i + _FRAME_LINES, len(lines) - 1)):
        source, caret = _GUTTER_SOURCE.match(lines[j]), _GUTTER_CARET.match(lines[j + 1])
        if source is not None and caret is not None:
            return source.group("code") or ""
    return ""


#: The annotation itself in an edit's new text (up to the reason the project asks for).
_ANNOTATION: Final = re.compile(
    r"(//\s*nolint(?::[\w,-]+)?(?:\s*//)?|#\s*noqa(?::\s*[A-Z]+\d+(?:,\s*[A-Z]+\d+)*)?|"
    r"#\s*(?:type|pyright):\s*ignore(?:\[[\w,-]+\])?|//\s*eslint-disable(?:-next)?-line\s+[\w/@,-]+|"
    r"@ts-(?:ignore|expect-error)|#!?\[allow\([\w:]+\)\]|@Suppress(?:Warnings)?\([^)]*\)|"
    r"//\s*biome-ignore\s+lint/\w+/\w+|#\s*(?:rubocop:disable|pylint:\s*disable=)\s*[\w/,-]+|"
    r"#\s*shellcheck\s+disable=[\w,]+|//\s*NOLINT(?:NEXTLINE)?\([\w.,-]+\))")


def annotation(summary: str) -> str:
    """The suppression annotation an edit added (``//nolint:nilerr //``), or ''."""
    new = summary.split("→", 1)[-1]
    m = _ANNOTATION.search(new)
    return _note(m) if m else ""


def _note(m: re.Match[str]) -> str:
    return " ".join(m.group(1).split())


def annotation_of(rule: str, written: str, old: str = "") -> str:
    """The first annotation naming ``rule`` on a line ``written`` (an edit's whole new text) changed from
    ``old``, or ''. The one-line summary is cut around the first change: a reason after the annotation
    (``//nolint:gosec // fixed name``) is often cut away, and the lesson then showed it bare. A line the
    edit left as it was (another annotation of the file) is not this fix."""
    kept = {ln.strip() for ln in old.splitlines()}
    for line in written.splitlines():
        if line.strip() in kept:
            continue
        for m in _ANNOTATION.finditer(line):
            note = _note(m)
            if rule.lower() in note.lower():
                return note
    return ""


def general_message(message: str) -> str:
    """A checker message without its instance details, so it reads the same every time."""
    text = _CODE_TAIL.sub(r"\1", " ".join(message.split()))
    for rx, repl in _INSTANCE:
        text = rx.sub(repl, text)
    return redact_then_cut(text, 160)


class Switch(NamedTuple):
    """One build switch a check ran with: ``worded`` (``build tag `integration```), the flag
    (``-tags``) and its canonical form (``-tags=integration``)."""

    worded: str
    flag: str
    given: str


SWITCH_SCAN: Final = 4000


def build_switches(command: str, output: str) -> list[Switch]:
    """The build switches a check's command or its runner's echo gives (the first characters of the
    two, never a copy of a long output), in order, without repeats."""
    text = f"{command}\n{output[:SWITCH_SCAN]}"[:SWITCH_SCAN]
    found: dict[str, Switch] = {}
    for (kind, flag), pattern in _SWITCHES:
        for m in pattern.finditer(text):
            found.setdefault(m.group(1), Switch(f"{kind} `{m.group(1)}`", flag, f"{flag}={m.group(1)}"))
    return list(found.values())[:3]


_FAIL_LINE: Final = re.compile(r"fail|error|panic", re.I)
_SOURCE_FILE: Final = re.compile(r"(?<![\w.-])([\w.-]+\.(?:go|py|ts|tsx|js|jsx|rs|java|kt|rb|php|cs|c|cc|cpp|h|swift))"
                                 r"(?::\d+)?(?![\w.])")
_PACKAGE: Final = re.compile(r"(?<![\w./-])((?:[\w.@-]+/){2,}[\w.@-]+)(?![\w/])")


def failing_place(output: str) -> str:
    """Where a check failed, in a form that outlives the day's error: the source file a failure
    line names (``session_test.go``), or the tail of the package path (``cli/integration_test``);
    '' when no failure line names one."""
    for line in output[-6000:].splitlines()[-120:]:
        if not _FAIL_LINE.search(line):
            continue
        m = _SOURCE_FILE.search(line)
        if m:
            return posixpath.basename(m.group(1))
        p = _PACKAGE.search(line)
        if p and "://" not in line[max(0, p.start() - 3):p.start() + 3]:
            return "/".join(p.group(1).rstrip("/").split("/")[-2:])
    return ""
