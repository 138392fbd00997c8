"""Lessons whose trigger is the call that went wrong (issue 25): learned from outcomes, not words.

Three kinds, each carrying in ``data["triggers"]`` what should make it fire next time:

- ``wrong_place``: a search or read under a path found nothing (or the path did not exist),
  and a few steps later the thing was found elsewhere; fires before the next look there.
- ``check_rule``: a checker (linter, type checker, compiler, test runner) failed with a
  structured diagnostic naming its rule (``file:line: message (rule)``, ``[rule]``, ``E501``,
  ``TS2345``, ``error[E0382]``), and the same checker passed later in the session (the fix is
  the edit of the flagged file in between, by the project's annotation); fires after the checker
  reports that rule, and before an edit writes a line of the construct its caret flagged.
- ``check_gap``: a checker passed, then a sibling of it (same program and first word, another
  target: ``mise run test`` then ``mise run test:ci``) failed and was fixed: the first one is
  not enough; fires after the first one passed. When the sibling builds with a switch the first
  one lacks (a build tag, a feature), that switch is the reason, and the lesson names it.

All state lives in ``Scratchpad.ev`` (JSON-safe, bounded); every handler does bounded work.
The formats recognised are tool output formats, never a project's own words.
"""

from __future__ import annotations

import itertools
import posixpath
import re
from pathlib import Path
from typing import Any, Final

from desktop.memory.observer.command_shape import Command, parse
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.signals import CHECK_GAP, CHECK_RULE, WRONG_PLACE, Signal, excerpt
from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.triggers.code_shape import flagged_shape
from desktop.memory.triggers.model import CODE, COMMAND, PATH, Trigger

LOOK_WINDOW: Final = 8
MAX_MISSES: Final = 4
MAX_RULES: Final = 4
MAX_SHAPES: Final = 3
#: Programs that show, fetch or search, never check the code here (``gh run view`` prints a CI
#: run's log: its diagnostics are that run's, and viewing another run later proves no fix).
NOT_CHECKERS: Final = r"(?:git|gh|echo|cat|grep|rg|ls|which|find)\b"
#: Build switches that leave code out of a build unless given, by what they select: the reason a
#: weaker check passes while a sibling fails. Read from the command and from the task runner's echo
#: of what it ran (``[test:ci] $ go test -tags=integration ./...``).
_SWITCHES: Final = (("build tag", re.compile(r"(?<![\w-])-tags[= ]['\"]?([\w,.-]+)")),
                    ("feature", re.compile(r"(?<![\w-])--features[= ]['\"]?([\w,.-]+)")))
_EMPTY: Final = re.compile(r"^\s*(?:No (?:files|matches) found\.?|Found 0 (?:files|matches)\.?|0 matches?\.?|"
                           r"No such file or directory|)\s*$", re.I)
_MISSING: Final = re.compile(r"does not exist|no such file or directory|not found|ENOENT|cannot find the path",
                             re.I)
_FILE: Final = r"(?P<file>(?:\.{0,2}/)?[\w@+-][\w@.+/-]*\.[A-Za-z]\w{0,7})"
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
)
_RUST_AT: Final = re.compile(r"^\s*-->\s+" + _FILE + r":(?P<line>\d+)")
#: ruff's default ("full") format: ``E711 message`` with the file on the ``-->`` line after it.
_CODE_HEADER: Final = re.compile(r"^(?P<rule>[A-Z]{1,4}\d{2,4})(?:\s+\[\*\])?\s+(?P<msg>\S.+)$")
#: A gutter frame (ruff, rustc, biome): ``4 |     if x == None:`` then ``  |        ^^^^``.
_GUTTER_SOURCE: Final = re.compile(r"^\s*\d+\s*\|(?: (?P<code>.*))?$")
_GUTTER_CARET: Final = re.compile(r"^\s*\| ?(?P<pad> *)\^")
_FRAME_LINES: Final = 12
#: Rule names checkers give plain compile errors (golangci-lint's ``typecheck``): the code was
#: broken, no project rule was learned.
_COMPILE_RULES: Final = frozenset({"typecheck", "compile", "syntax"})
#: Instance details in a checker message (numbers, quoted names) that differ from run to run.
_INSTANCE: Final = ((re.compile(r"`[^`]{1,80}`|'[^']{1,80}'|\"[^\"]{1,80}\""), "…"), (re.compile(r"\b\d+\b"), "N"))
#: "message: <the code it is about>": the code part is the instance.
_CODE_TAIL: Final = re.compile(r"^(.{20,}?):\s+.*[().].*$")


def diagnostics(output: str) -> dict[str, list[Any]]:
    """Rule -> [message, file, shapes] for each checker rule named in ``output`` (first message and
    file; ``shapes``: the constructs its caret pointed at, ``code_shape.flagged_shape``)."""
    found: dict[str, list[Any]] = {}
    pending_rust: str | None = None
    lines = [raw.rstrip() for raw in output[-40_000:].splitlines()[-600:]]
    for i, line in enumerate(lines):
        if pending_rust is not None:
            at = _RUST_AT.match(line)
            if at:
                found[pending_rust][1] = at.group("file")
                pending_rust = None
                continue
        m = _match(line.strip(), lines[i + 1] if i + 1 < len(lines) else "")
        if m is None:
            continue
        rule, msg, file = m
        if rule not in found and rule not in _COMPILE_RULES and len(found) < 12:
            found[rule] = [general_message(msg), file.removeprefix("./"), []]
            if not file:
                pending_rust = rule
        if rule in found:
            flagged = _caret_shape(lines, i)
            if flagged and flagged not in found[rule][2] and len(found[rule][2]) < MAX_SHAPES:
                found[rule][2].append(flagged)
    return found


def _match(line: str, after: str) -> tuple[str, str, str] | None:
    """(rule, message, file) of a diagnostic line ('' file: it follows on a ``-->`` line)."""
    for rx in _DIAGNOSTICS:
        m = rx.search(line)
        if m:
            return m.group("rule"), m.group("msg"), m.groupdict().get("file") or ""
    head = _CODE_HEADER.match(line)
    at = _RUST_AT.match(after) if head else None
    if head is not None and at is not None:
        return head.group("rule"), head.group("msg"), at.group("file")
    return None


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


#: The annotation itself in an edit's new text (up to the reason the project asks for).
_ANNOTATION: Final = re.compile(
    r"(//\s*nolint(?::[\w,-]+)?(?:\s*//)?|#\s*noqa(?::\s*[A-Z]+\d+(?:,\s*[A-Z]+\d+)*)?|"
    r"#\s*(?:type|pyright):\s*ignore(?:\[[\w,-]+\])?|//\s*eslint-disable(?:-next)?-line\s+[\w/@,-]+|"
    r"@ts-(?:ignore|expect-error)|#!?\[allow\([\w:]+\)\]|@SuppressWarnings\([^)]*\))")


def annotation(summary: str) -> str:
    """The suppression annotation an edit added (``//nolint:nilerr //``), or ''."""
    new = summary.split("→", 1)[-1]
    m = _ANNOTATION.search(new)
    return " ".join(m.group(1).split()) if m else ""


def general_message(message: str) -> str:
    """A checker message without its instance details, so it reads the same every time."""
    text = _CODE_TAIL.sub(r"\1", " ".join(message.split()))
    for rx, repl in _INSTANCE:
        text = rx.sub(repl, text)
    return redact_then_cut(text, 160)


def command_key(command: Command) -> list[str]:
    """The program and subcommand words of a command's last step (``["mise", "run", "lint"]``): in
    ``fmt && lint`` the checker is the one that ran last, the one whose failure ended the chain."""
    runs = [s for s in command.segments if not s.piped]
    return [runs[-1].program, *runs[-1].words] if runs else []


def command_label(command: Command) -> str:
    """The command as a person would name it: each step's program and words (``mise run fmt && mise run lint``)."""
    return " && ".join(" ".join([s.program, *s.words]) for s in command.segments if not s.piped)


# -- wrong place ---------------------------------------------------------------------------------

def look_of(tool: str, args: dict[str, Any], root: str) -> dict[str, str] | None:
    """Where a Read/Grep/Glob/LS call looks (project-relative, '' for the whole project) and for what."""
    raw = args.get("file_path") if tool == "Read" else args.get("path")
    if tool != "Read" and not raw:
        raw = root or "."
    if not isinstance(raw, str) or not raw:
        return None
    path = raw.rstrip("/")
    if root and path.startswith(root.rstrip("/") + "/"):
        path = path[len(root.rstrip("/")) + 1:]
    if path in (".", root.rstrip("/")):
        path = ""  # the whole project
    elif path.startswith(("/", "~", "..")):
        return None  # outside the project
    what = posixpath.basename(path) if tool == "Read" else str(args.get("pattern") or "")
    return {"path": path, "what": redact_then_cut(what, 80), "tool": tool}


def on_look_result(sp: Scratchpad, look: dict[str, str], output: str, is_error: bool, step: int,
                   event: str) -> None:
    """Remember a look that found nothing; turn a later find of the same thing into a lesson."""
    misses: list[dict[str, Any]] = sp.ev.setdefault("misses", [])
    empty = is_error or bool(_EMPTY.match(output[:200]))
    if empty:
        if (is_error and not _MISSING.search(output[:300])) or not look["path"]:
            return  # another kind of failure, or nothing found anywhere: not a wrong place
        misses[:] = [m for m in misses if step - int(m["step"]) <= LOOK_WINDOW and m["path"] != look["path"]]
        misses.append({**look, "step": step, "event": event, "missing": is_error})
        del misses[:-MAX_MISSES]
        return
    if not misses:
        return
    for miss in list(misses):
        if step - int(miss["step"]) > LOOK_WINDOW:
            misses.remove(miss)
            continue
        found = _found_for(miss, look, output, sp.cwd)
        if found and not found.startswith(miss["path"] + "/") and found != miss["path"]:
            misses.remove(miss)
            _wrong_place(sp, miss, found, step, event)


def _words(text: str) -> set[str]:
    """The words of a search text or file name (3+ letters; regex syntax and extensions dropped)."""
    stem = posixpath.splitext(text)[0] if "." in text and " " not in text else text
    return {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9_]{2,}", stem)}


def _found_for(miss: dict[str, str], look: dict[str, str], output: str, root: str) -> str:
    """The file this successful look found that is what ``miss`` looked for, or ''.

    A Read counts when the file's name shares a word with what was looked for; a search's
    listing counts through the first listed file whose name does.
    """
    wanted = _words(miss["what"])
    if not wanted:
        return ""
    if look["tool"] == "Read":
        return look["path"] if wanted & _words(posixpath.basename(look["path"])) else ""
    for line in output[:20_000].splitlines()[:400]:
        m = re.match(r"^\s*(?:\./)?([\w@.+/-]+\.\w{1,8})(?::\d+.*)?\s*$", line.strip())
        if m and wanted & _words(posixpath.basename(m.group(1))):
            found = m.group(1)
            prefix = root.rstrip("/") + "/"
            if root and found.startswith(prefix):
                return found[len(prefix):]
            return "" if found.startswith("/") else found
    return ""


def _a_real_place(target: Path) -> bool:
    """A file, or a folder holding more than a few files: somewhere that is right for other things."""
    try:
        if target.is_file():
            return True
        return target.is_dir() and sum(1 for p in itertools.islice(target.rglob("*"), 64) if p.is_file()) > 3
    except OSError:
        return False


def _wrong_place(sp: Scratchpad, miss: dict[str, Any], found: str, step: int, event: str) -> None:
    path = str(miss["path"])
    missing = bool(miss["missing"])
    if miss["tool"] == "Read" and posixpath.dirname(found) != posixpath.dirname(path):
        # The file was in another folder: the folder was the wrong place, whatever the name.
        path, missing = posixpath.dirname(path) or path, False
    where = path.rstrip("/")
    if sp.cwd and _a_real_place(Path(sp.cwd) / where):
        return  # one search that found nothing in a folder full of code says nothing about the folder
    trig = Trigger(PATH, where.split("/", 1)[0], path=where, missing=missing)
    sp.add_signal(Signal(WRONG_PLACE, f"{WRONG_PLACE}:{where}", step, [found],
                         {"path": where, "missing": missing, "what": miss["what"], "found": found,
                          "triggers": [trig.as_json()], "events": [miss["event"], event]},
                         [f"{miss['tool']} {where} for '{excerpt(miss['what'], 40)}': nothing; found {found}"]))


# -- checkers ------------------------------------------------------------------------------------

def on_check_result(sp: Scratchpad, command: str, category: str | None, output: str, is_error: bool,
                    step: int, event: str) -> None:
    """Open a failed checker's rules; close them (as lessons) when the same checker passes.

    The checker is the command's last step (``fmt && lint`` and ``lint`` are one checker). Its
    output piped into a filter (``lint 2>&1 | tail -20``) exits with the filter's status, so a
    checker whose piped output names rules failed, whatever the exit code said.
    """
    parsed = parse(command)
    key = command_key(parsed)
    if not key:
        return
    name = " ".join(key)
    checks: dict[str, Any] = sp.ev.setdefault("checks", {})
    passed: dict[str, Any] = sp.ev.setdefault("passed", {})
    checked = category in ("lint", "test", "build") or (len(key) > 1 and not re.match(NOT_CHECKERS, key[0]))
    rules = diagnostics(output) if checked and (is_error or _filtered(parsed)) else {}
    if is_error or rules:
        if rules:
            held = checks.setdefault(name, {"key": key, "label": command_label(parsed), "rules": {}, "step": step,
                                            "event": event, "edits": {}})
            for rule, info in rules.items():
                known = held["rules"].setdefault(rule, info)
                if known is not info:  # flagged again: the new run's constructs count too
                    shapes = known[2] if len(known) > 2 else []
                    known[2:] = [list(dict.fromkeys([*shapes, *info[2]]))[:MAX_SHAPES]]
            if len(checks) > 3:
                checks.pop(next(iter(checks)))
        _open_gap(sp, key, name, output, step, event, command)
        return
    held = checks.pop(name, None)
    if held is not None:
        _rule_lessons(sp, held, command, step, event)
    gap = sp.ev.get("gaps", {}).pop(name, None)
    if gap is not None:
        _gap_lesson(sp, gap, key, step, event)
    if len(key) >= 2:
        passed[name] = {"key": key, "step": step, "switches": build_switches(f"{command}\n{output}")}
        if len(passed) > 6:
            passed.pop(next(iter(passed)))


def _filtered(command: Command) -> bool:
    """True when the checker's output runs through a filter (``| tail``), which hides its exit code."""
    return bool(command.segments) and command.segments[-1].piped


def on_edit(sp: Scratchpad, path: str, summary: str) -> None:
    """Remember the edit of each file a held checker flagged that fixed its rule: one that names
    the rule (an annotation) wins over the first edit of the file."""
    for held in sp.ev.get("checks", {}).values():
        for rule, info in held["rules"].items():
            file = info[1]
            if not file or not (path == file or path.endswith("/" + file)) or not summary:
                continue
            known = held["edits"].get(rule)
            if known is None or (rule not in known[1] and rule in summary):
                held["edits"][rule] = [path, summary]


def _rule_lessons(sp: Scratchpad, held: dict[str, Any], command: str, step: int, event: str) -> None:
    key = held["key"]
    for rule, info in list(held["rules"].items())[:MAX_RULES]:
        msg = info[0]
        edit = held["edits"].get(rule)
        if not edit or not edit[1]:
            continue  # passed without a concrete edit of the flagged file: no fix to tell
        path, summary = edit
        note = annotation(summary)
        if not (note and rule.lower() in note.lower()):
            # Fixed in code, not by the project's way of allowing an exception: the lesson could only
            # repeat the checker's own message, which the agent reads in the output right above it.
            continue
        # The checker's run is the moment (after it fails with this rule), and the writing of a
        # construct it flagged (``code_shape``): not every edit of a file of that kind, which is
        # nearly always about something else.
        shapes = info[2] if len(info) > 2 else []
        triggers = [Trigger(COMMAND, key[0], tuple(key[1:])).as_json(),
                    *(Trigger(CODE, str(c)).as_json() for c in shapes[:MAX_SHAPES])]
        data: dict[str, Any] = {"command": str(held.get("label") or " ".join(key)), "rule": rule, "message": msg,
                                "file": path, "annotation": note, "triggers": triggers,
                                "events": [held["event"], event]}
        # The rule is the project's checker configuration, however the checker was run: one lesson per
        # rule, proven at once by the annotated exception.
        sp.add_signal(Signal(CHECK_RULE, f"{CHECK_RULE}:{rule}"[:200], step, [path], data, [f"{rule}: {msg}"]))


def _open_gap(sp: Scratchpad, key: list[str], name: str, output: str, step: int, event: str,
              command: str) -> None:
    from desktop.memory.observer.lessons import stable_error

    if len(key) < 2:
        return
    # A sibling that goes further: same program, same words but the last, which extends the
    # passed one's (``test`` -> ``test:ci``, ``lint`` -> ``lint-all``); never ``lint`` -> ``test``.
    sibling = next((p for p in sp.ev.get("passed", {}).values()
                    if len(p["key"]) == len(key) and p["key"][:-1] == key[:-1] and p["key"] != key
                    and key[-1].startswith(p["key"][-1])), None)
    err = stable_error(output)
    if sibling is None or not err:
        return
    gaps: dict[str, Any] = sp.ev.setdefault("gaps", {})
    # What the sibling builds that the passed check left out: the gap's reason, when there is one.
    extra = [s for s in build_switches(f"{command}\n{output}") if s not in sibling.get("switches", [])]
    gaps.setdefault(name, {"passed": sibling["key"], "error": err, "where": failing_place(output), "event": event,
                           "step": step, "guard": extra[0] if extra else ""})
    if len(gaps) > 2:
        gaps.pop(next(iter(gaps)))


def _gap_lesson(sp: Scratchpad, gap: dict[str, Any], key: list[str], step: int, event: str) -> None:
    passed = list(gap["passed"])
    trig = Trigger(COMMAND, passed[0], tuple(passed[1:]))
    sp.add_signal(Signal(CHECK_GAP, f"{CHECK_GAP}:{' '.join(passed)}>{' '.join(key)}", step, [],
                         {"passed": " ".join(passed), "failed": " ".join(key), "error": gap["error"],
                          "where": gap.get("where", ""), "guard": gap.get("guard", ""),
                          "triggers": [trig.as_json()], "events": [gap["event"], event]},
                         [f"{' '.join(passed)} passed, {' '.join(key)} failed: {excerpt(gap['error'], 80)}"]))


def build_switches(text: str) -> list[str]:
    """The build switches a check's command or its runner's echo gives, worded by what they select
    (``-tags=integration`` -> ``build tag `integration```), in order, without repeats."""
    found: dict[str, None] = {}
    for kind, pattern in _SWITCHES:
        for m in pattern.finditer(text[:4000]):
            found[f"{kind} `{m.group(1)}`"] = None
    return list(found)[:3]


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
