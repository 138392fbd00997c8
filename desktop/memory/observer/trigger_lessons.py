"""Lessons whose trigger is the call that went wrong (issue 25): learned from outcomes, not words.

Three kinds, each carrying in ``data["triggers"]`` what should make it fire next time:

- ``wrong_place``: a search or read found nothing where it looked (``wrong_places``).
- ``check_rule``: a checker (linter, type checker, compiler, test runner) failed with a
  structured diagnostic naming its rule (``file:line: message (rule)``, ``[rule]``, ``E501``,
  ``TS2345``, ``error[E0382]``), and the same checker passed later in the session (the fix is
  the edit of the flagged file in between, by the project's annotation, or a rewrite of the very
  line it flagged: ``return err`` as ``return fmt.Errorf("…: %w", err)``); an annotated rule fires
  after the checker reports it, and before an edit writes a line of the construct its caret flagged
  (or the flagged line in the same kind of block); a rewritten one is only found when looked for.
- ``check_gap``: a checker passed, then a sibling of it (same program and first word, another
  target: ``mise run test`` then ``mise run test:ci``) failed and was fixed: the first one is
  not enough; fires after the first one passed. When the sibling builds with a switch the first
  one lacks (a build tag, a feature), that switch is the reason, and the lesson names it.

All state lives in ``Scratchpad.ev`` (JSON-safe, bounded); every handler does bounded work.
The formats recognised are tool output formats, never a project's own words.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Final

from desktop.memory.observer.checker_output import (
    MAX_SHAPES,
    annotation,
    annotation_of,
    build_switches,
    diagnostics,
    failing_place,
)
from desktop.memory.observer.command_kinds import SHOWS_TEXT
from desktop.memory.observer.command_shape import Command, parse
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.signals import CHECK_GAP, CHECK_RULE, Signal, excerpt, is_test_file
from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.triggers.code_shape import RETURNED_AS_IS, flagged_origin, flagged_pair, is_call, rewritten_as
from desktop.memory.triggers.model import CODE, COMMAND, TEST_FILES, Trigger

MAX_RULES: Final = 4
#: A command line that opens with a program of ``command_kinds.SHOWS_TEXT``.
NOT_CHECKERS: Final = r"(?:" + "|".join(sorted(SHOWS_TEXT)) + r")\b"
def command_key(command: Command) -> list[str]:
    """The program and subcommand words of a command's last step (``["mise", "run", "lint"]``): in
    ``fmt && lint`` the checker is the one that ran last, the one whose failure ended the chain."""
    runs = [s for s in command.segments if not s.piped]
    return [runs[-1].program, *runs[-1].words] if runs else []


def command_label(command: Command) -> str:
    """The command as a person would name it: each step's program and words (``mise run fmt && mise run lint``)."""
    return " && ".join(" ".join([s.program, *s.words]) for s in command.segments if not s.piped)


# -- checkers ------------------------------------------------------------------------------------

def on_check_result(sp: Scratchpad, command: str, category: str | None, output: str, is_error: bool,
                    step: int, event: str) -> bool:
    """Open a failed checker's rules; close them (as lessons) when the same checker passes. True
    when the output named rules: the failure is the rules', learned as such, not as an error line.

    The checker is the command's last step (``fmt && lint`` and ``lint`` are one checker). Its
    output piped into a filter (``lint 2>&1 | tail -20``) exits with the filter's status, so a
    checker whose piped output names rules failed, whatever the exit code said.
    """
    parsed = parse(command)
    key = command_key(parsed)
    if not key:
        return False
    name = " ".join(key)
    checks: dict[str, Any] = sp.ev.setdefault("checks", {})
    passed: dict[str, Any] = sp.ev.setdefault("passed", {})
    checked = category in ("lint", "test", "build") or (len(key) > 1 and not re.match(NOT_CHECKERS, key[0]))
    rules = diagnostics(output) if checked and (is_error or filtered(parsed)) else {}
    if is_error or rules:
        if rules:
            held = checks.setdefault(name, {"key": key, "label": command_label(parsed), "rules": {}, "step": step,
                                            "event": event, "edits": {}})
            for rule, info in rules.items():
                known = held["rules"].setdefault(rule, info)
                if known is not info:  # flagged again: the new run's constructs and lines count too
                    for at in (2, 3):
                        had = known[at] if len(known) > at else []
                        known[at:at + 1] = [list(dict.fromkeys([*had, *info[at]]))[:MAX_SHAPES]]
            if len(checks) > 3:
                checks.pop(next(iter(checks)))
        _open_gap(sp, key, name, output, step, event, command)
        return bool(rules)
    held = checks.pop(name, None)
    if held is not None:
        _rule_lessons(sp, held, command, step, event)
    gaps = sp.ev.get("gaps", {})
    switches = build_switches(command, output) if gaps or len(key) >= 2 else []
    for gap_name in (name, *(f"{name} {s.given}" for s in switches)):  # the same switch passing closes it
        gap = gaps.pop(gap_name, None)
        if gap is not None:
            _gap_lesson(sp, gap, gap_name.split(" "), step, event)
    if len(key) >= 2:
        passed[name] = {"key": key, "step": step, "switches": [s.worded for s in switches]}
        if len(passed) > 6:
            passed.pop(next(iter(passed)))
    return False


def same_file(path: str, file: str) -> bool:
    """True when an edit's path and a checker's file are one file: either may be absolute (ESLint
    prints absolute paths, agents edit by absolute path) or relative to where the checker ran."""
    return path == file or path.endswith("/" + file) or file.endswith("/" + path.removeprefix("./"))


def filtered(command: Command) -> bool:
    """True when the checker's output runs through a filter (``| tail``), which hides its exit code."""
    return bool(command.segments) and command.segments[-1].piped


def on_edit(sp: Scratchpad, path: str, summary: str, texts: tuple[str, ...] = ()) -> None:
    """Remember the edit of each file a held checker flagged that fixed its rule: one that names
    the rule (an annotation) wins over the first edit of the file. ``texts`` (the edit's old and new
    text) show the block a flagged line sat in: its pair (``code_shape.paired``) is kept."""
    for held in sp.ev.get("checks", {}).values():
        for rule, info in held["rules"].items():
            file = info[1]
            if not file or not same_file(path, file) or not summary:
                continue
            known = held["edits"].get(rule)
            # An edit that annotates the rule wins over one that does not, and a later one over an
            # earlier: a bare ``//nolint:gosec`` that nolintlint refused, then the same with its reason,
            # passed as the second (blind judges: the first "would fail lint as written"). Only an
            # annotation counts, not the rule's name anywhere (a comment that mentions it).
            annotates = rule.lower() in annotation(summary).lower()
            if known is None or annotates or (rule not in known[1] and rule in summary):
                held["edits"][rule] = [path, summary]
                if annotates and texts:
                    held.setdefault("notes", {})[rule] = annotation_of(rule, texts[-1], "\n".join(texts[:-1]))
            pairs = held.setdefault("pairs", {}).setdefault(rule, [])
            rewrites = held.setdefault("rewrites", {})
            for source in info[3] if len(info) > 3 else []:
                found = next((p for p in (flagged_pair(t, source) for t in texts) if p), "")
                if found and found not in pairs and len(pairs) < MAX_SHAPES:
                    pairs.append(found)
                if any(flagged_origin(t, source) for t in texts[:-1] or texts):
                    held.setdefault("origins", {})[rule] = True
                called = next((c for c in info[2] if is_call(str(c))), "")
                now = rewritten_as(texts[:-1], texts[-1], source, called) if len(texts) > 1 else ""
                if now and rule not in rewrites:  # agent-written code: redacted, and no backtick breaks the quote
                    rewrites[rule] = [redact_then_cut(" ".join(t.split()).replace("`", "'"), 120)
                                      for t in (source, now)]


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
            note = ""
        whole = held.get("notes", {}).get(rule, "")
        if note and whole.startswith(note.rstrip("/ ")):
            note = whole  # the same annotation, with the reason the summary's window cut away
        rewrite = held.get("rewrites", {}).get(rule) if not note else None
        calls = [c for c in (info[2] if len(info) > 2 else []) if is_call(str(c))]
        if not note and not (rewrite and (held.get("pairs", {}).get(rule) or calls)):
            # Fixed in code, and not by rewriting the line it flagged where that line has a moment of
            # its own: the lesson could only repeat the checker's message, which the agent reads in the
            # output right above it.
            continue
        # The checker's run is the moment (after it fails with this rule), and the writing of a
        # construct it flagged (``code_shape``): not every edit of a file of that kind, which is
        # nearly always about something else.
        # A line paired with its block only for a rule that flagged no construct: where it did
        # (``_`` in ``x, _ = f()``), that is the rule's moment, and a name's line is one instance.
        shapes = list(info[2] if len(info) > 2 else []) or list(held.get("pairs", {}).get(rule, []))
        # A construct is code of the language it was flagged in: not a snippet in a Markdown plan.
        # A rule flagged only in a test file is for test files (usetesting: ``t.Chdir`` over ``os.Chdir``);
        # one flagged in the sources is for every file, tests included: checkers run on both, and
        # narrowing it to sources lost more than it spared (in process over 0-159: noctx, errcheck and
        # wrapcheck said before the same construct in tests, 9 sayings judged useful, for 1 forbidigo
        # saying judged wrong where the project's checker skips tests).
        ext = posixpath.splitext(path)[1]
        kind = (ext, TEST_FILES) if ext and is_test_file(path) else (ext,) if ext else ()
        triggers = [Trigger(COMMAND, key[0], tuple(key[1:])).as_json(),
                    *(Trigger(CODE, str(c), tokens=kind).as_json() for c in shapes[:2 * MAX_SHAPES])] if note else []
        # A rule fixed by a rewrite is knowledge, found by search and MCP (blind judges AG and AH: the
        # wrapcheck rewrite useful). Its line alone (``if err != nil { return nil, err }``) is ordinary
        # code, and after the report it restates the checker (AK and AL: 0 of 10 such sayings useful).
        # Where the flagged line returned as it came what a call on a dotted name assigned, that pair
        # is the rule's moment (``code_shape.RETURNED_AS_IS``): rare in code that already wraps.
        if not note and held.get("origins", {}).get(rule):
            triggers = [Trigger(CODE, RETURNED_AS_IS, tokens=kind).as_json()]
        # A call the checker flagged and the edit rewrote (``exec.Command(`` → ``exec.CommandContext(``):
        # writing that call again is the rule's moment, and the rewrite is what to say there.
        if not note and rewrite and calls:
            triggers = [Trigger(CODE, c, tokens=kind).as_json() for c in calls[:MAX_SHAPES]]
        data: dict[str, Any] = {"command": str(held.get("label") or " ".join(key)), "rule": rule, "message": msg,
                                "file": path, "annotation": note, "triggers": triggers,
                                "events": [held["event"], event]}
        if rewrite:
            data["rewrite"] = rewrite
        # The rule is the project's checker configuration, however the checker was run: one lesson per
        # rule, proven at once by the annotated exception.
        sp.add_signal(Signal(CHECK_RULE, f"{CHECK_RULE}:{rule}"[:200], step, [path], data, [f"{rule}: {msg}"]))


def _open_gap(sp: Scratchpad, key: list[str], name: str, output: str, step: int, event: str,
              command: str) -> None:
    from desktop.memory.observer.lessons import stable_error

    if len(key) < 2:
        return
    passed: dict[str, Any] = sp.ev.get("passed", {})
    switches = build_switches(command, output)
    # A sibling that goes further: same program, same words but the last, which extends the
    # passed one's (``test`` -> ``test:ci``, ``lint`` -> ``lint-all``); never ``lint`` -> ``test``.
    sibling = next((p for p in passed.values()
                    if len(p["key"]) == len(key) and p["key"][:-1] == key[:-1] and p["key"] != key
                    and key[-1].startswith(p["key"][-1])), None)
    # Or the same check given a build switch the passed run lacked (``go test`` ->
    # ``go test -tags=integration``): the switch is what goes further.
    before = sibling if sibling is not None else passed.get(name, {})
    extra = [s for s in switches if s.worded not in before.get("switches", [])]
    gap_name = name
    unless: tuple[str, ...] = ()
    if sibling is None and name in passed and extra:
        sibling, gap_name, unless = passed[name], f"{name} {extra[0].given}", (extra[0].flag,)
    err = stable_error(output)
    if sibling is None or not err:
        return
    gaps: dict[str, Any] = sp.ev.setdefault("gaps", {})
    # What the sibling builds that the passed check left out: the gap's reason, when there is one.
    gaps.setdefault(gap_name, {"passed": sibling["key"], "error": err, "where": failing_place(output), "event": event,
                               "step": step, "guard": extra[0].worded if extra else "", "unless": list(unless)})
    if len(gaps) > 2:
        gaps.pop(next(iter(gaps)))


def _gap_lesson(sp: Scratchpad, gap: dict[str, Any], key: list[str], step: int, event: str) -> None:
    passed = list(gap["passed"])
    # A gap within one check (``go test`` -> ``go test -tags=x``) is not said after the switched run.
    trig = Trigger(COMMAND, passed[0], tuple(passed[1:]), unless=tuple(gap.get("unless", [])))
    sp.add_signal(Signal(CHECK_GAP, f"{CHECK_GAP}:{' '.join(passed)}>{' '.join(key)}", step, [],
                         {"passed": " ".join(passed), "failed": " ".join(key), "error": gap["error"],
                          "where": gap.get("where", ""), "guard": gap.get("guard", ""),
                          "triggers": [trig.as_json()], "events": [gap["event"], event]},
                         [f"{' '.join(passed)} passed, {' '.join(key)} failed: {excerpt(gap['error'], 80)}"]))
