"""Lessons from the commands a session ran, without a language model (issue 13).

Three kinds, each a signal the promotion renders as one or two standalone sentences:

- ``command_fix``: a command that failed, then a near-identical one that worked (the
  difference is the lesson), keyed by that difference so it counts across sessions;
- (recipes, how the project is tested, built, linted and run, are learned by ``recipes``);
- ``error_fix``: an error with a stable message, the file edited, the edit in one line,
  and the same command passing afterwards (proof the edit fixed it).

The user's own words and the agent's stated causes are in ``prose_lessons``. All state
lives in ``Scratchpad.ev`` (a small JSON-safe dict, checkpointed with the rest); every
handler does bounded work per event.
"""

from __future__ import annotations

import dataclasses
import difflib
import posixpath
import re
from typing import Any, Final

from desktop.memory.observer import missing_flags, rejected_flags, trigger_lessons, type_clashes
from desktop.memory.observer.command_kinds import category as kind_of
from desktop.memory.observer.command_kinds import ran_nothing, shows_failure
from desktop.memory.observer.command_shape import parse
from desktop.memory.observer.contradictions import MAX_UNUSED, unused_suppressions
from desktop.memory.observer.events import ToolCall, ToolResult
from desktop.memory.observer.harness import outside_project, shorten_command, strip_project_cd
from desktop.memory.observer.hook_blocks import on_refusal
from desktop.memory.observer.run_parts import recipe_form
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.signals import (
    COMMAND_FIX,
    ERROR_FIX,
    Signal,
    error_core,
    is_test_file,
    normalize_error,
)
from desktop.memory.observer.utterances import declined_call, rejection_feedback
from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.triggers.model import COMMAND, SETUP_STEP, Trigger, replaced_texts

ERROR_FIX_WINDOW: Final = 40
MAX_SUCCEEDED: Final = 400
#: The session's declined shell commands, as ``[command, the user's words]`` (``SessionDigest.declined``).
DECLINED_CALLS: Final = "declined"
MAX_DECLINED: Final = 40
COMMAND_FIX_WINDOW: Final = 6


# -- commands ----------------------------------------------------------------------------------

_CATEGORIES: Final = (
    ("test", re.compile(r"(?:^|&&\s*|\s)(?:pytest|py\.test|jest|vitest|mocha|tox|nox|rspec|phpunit|ctest|"
                        r"(?:npm|pnpm|yarn|bun)(?: run)? test[\w:-]*|cargo test|go test|make (?:test|check)|"
                        r"python3? -m (?:pytest|unittest))\b")),
    ("lint", re.compile(r"(?:^|&&\s*|\s)(?:ruff|mypy|pyright|eslint|flake8|black|pylint|prettier|"
                        r"pre-commit run|tsc --noEmit|(?:npm|pnpm|yarn) run (?:lint|typecheck|check)[\w:-]*|"
                        r"cargo (?:clippy|fmt)|golangci-lint)\b")),
    ("build", re.compile(r"(?:^|&&\s*|\s)(?:(?:npm|pnpm|yarn|bun) run (?:build|compile)[\w:-]*|cargo build|go build|"
                         r"make(?: \w+)?$|tsc(?: -p \S+)?$|vite build|docker build|python3? -m build|uv build)\b")),
    ("install", re.compile(r"(?:^|&&\s*|\s)(?:uv sync|uv pip install|pip3? install -e|pip3? install -r|"
                           r"(?:npm|pnpm|yarn|bun) (?:install|ci)|poetry install|pre-commit install|"
                           r"bundle install)\b")),
    ("migrate", re.compile(r"(?:^|&&\s*|\s)(?:alembic upgrade|manage\.py migrate|prisma migrate|knex migrate|"
                           r"flyway|rails db:migrate|sqlx migrate)\b")),
    ("deploy", re.compile(r"(?:^|&&\s*|\s)(?:\w+ deploy|gh release create|twine upload|npm publish|"
                          r"kubectl apply|helm upgrade|vercel|netlify deploy)\b")),
    ("run", re.compile(r"(?:^|&&\s*|\s)(?:(?:npm|pnpm|yarn|bun) run (?:dev|start|serve)|(?:npm|pnpm|yarn) start|"
                       r"uvicorn|flask run|cargo run|go run|docker compose up|manage\.py runserver)\b")),
)
_INVOCATION_ERROR: Final = re.compile(
    r"command not found|not recognized as|unexpected argument|unrecognized (?:argument|option)|"
    r"unknown (?:option|flag|command)|No module named|no such (?:option|command)|usage:|"
    r"is not installed|Cannot find module|ENOENT", re.I)
# The command line itself was wrong (not the code): a command_fix lesson, never an error_fix.
_NOT_FOUND: Final = re.compile(r"command not found|not recognized as|No module named", re.I)
_CLI_ERROR: Final = re.compile(r"command not found|not recognized as|unexpected argument|"
                               r"unrecognized (?:argument|option)|"
                               r"unknown (?:option|flag|command)|no such (?:option|command)|usage:", re.I)
_STABLE_ERROR: Final = re.compile(
    r"(?:^E\s+)?(?:[\w.]*(?:Error|Exception)\b:?.*|error(?:\[\w+\])?: .+|.*command not found.*|"
    r"Cannot find module.*|.*No such file or directory.*|FAILED .+ - (?!assert).+)")
_NOT_STABLE: Final = re.compile(r"^(?:=+|-+|\.+|Error:?\s*Error|Error:?)\s*$|\.{5,}|test session starts|"
                                r"^[.sFExX]+\s*\[\s*\d+%\]|"
                                r"\b(?:Passed|Skipped)\s*$|^\s*✓|AssertionError|^E\s+assert\b", re.I)


_QUOTED: Final = re.compile(r"\"[^\"]*\"|'[^']*'")


def command_category(command: str) -> str | None:
    """test / lint / build / install / migrate / deploy / run, or None for anything else.

    Quoted text is ignored (a commit message mentioning ruff is not a lint run), and so is
    everything git, gh and echo do.
    """
    bare = _QUOTED.sub("''", command.split("|")[0])
    last = bare.split("&&")[-1].strip()
    if re.match(trigger_lessons.NOT_CHECKERS, last):
        return None
    for name, rx in _CATEGORIES:
        if rx.search(bare):
            return name
    return None


def stable_error(output: str) -> str:
    """The error line that would read the same next time (an exception, ``error:``), or ''."""
    lines = [ln.strip() for ln in output[-6000:].splitlines() if ln.strip()]
    for line in reversed(lines[-80:]):
        bare = line.removeprefix("Error: ").removeprefix("E ").strip()
        if _NOT_STABLE.search(line) or _NOT_STABLE.search(bare):
            continue
        if _STABLE_ERROR.fullmatch(line) and len(bare) >= 12:
            return redact_then_cut(bare, 200)
    core = error_core(output).removeprefix("Error: ").strip()
    return "" if not core or _NOT_STABLE.search(core) or len(core) < 12 else core[:200]


def _tokens(command: str) -> list[str]:
    return command.split()


def command_diff(failed: str, worked: str) -> tuple[list[str], list[str], float]:
    """Tokens only in the failed command, only in the working one, and their similarity."""
    a, b = _tokens(failed), _tokens(worked)
    sm = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    removed = [t for op, i1, i2, _, _ in sm.get_opcodes() if op in ("replace", "delete") for t in a[i1:i2]]
    added = [t for op, _, _, j1, j2 in sm.get_opcodes() if op in ("replace", "insert") for t in b[j1:j2]]
    return removed, added, sm.ratio()


def on_bash_call(sp: Scratchpad, ev: ToolCall, pend: dict[str, Any]) -> None:
    """Remember the full command (redacted later) and its event for the result."""
    pend["event"] = ev.event_key


def on_edit(sp: Scratchpad, ev: ToolCall, path: str) -> None:
    """One-line summary of an edit, kept for the open errors it might fix."""
    state = sp.ev.setdefault("open", [])
    if outside_project(path) or not (state or sp.ev.get("checks")):
        return
    summary = edit_summary(ev.args)
    trigger_lessons.on_edit(sp, path, summary, edit_texts(ev.args))
    for err in state:
        edits = err.setdefault("edits", [])
        if len(edits) < 3 and all(e[0] != path for e in edits):
            edits.append([path, summary, ev.event_key])


def edit_texts(args: dict[str, Any]) -> tuple[str, ...]:
    """An edit's old text and the new text it writes (whole, unlike its summary)."""
    from desktop.memory.triggers.code_shape import written_text

    return (*(o for o in replaced_texts(args) if o), written_text(args))


def edit_summary(args: dict[str, Any]) -> str:
    """``old`` → ``new`` for the first changed line of an edit (empty for a whole-file write)."""
    old, new = args.get("old_string"), args.get("new_string")
    if old is None and isinstance(args.get("edits"), list) and args["edits"]:
        first = args["edits"][0]
        if isinstance(first, dict):
            old, new = first.get("old_string"), first.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str):
        return ""
    a = [ln.strip() for ln in old.splitlines() if ln.strip()]
    b = [ln.strip() for ln in new.splitlines() if ln.strip()]
    for x, y in zip(a, b, strict=False):
        if x != y:
            x, y = _around_change(x, y)
            return f"`{x}` → `{y}`"
    if len(b) > len(a):
        return f"added `{shorten_command(b[len(a)], 70)}`"
    if len(a) > len(b):
        return f"removed `{shorten_command(a[len(b)], 70)}`"
    return ""


def _around_change(old: str, new: str, width: int = 60) -> tuple[str, str]:
    """The changed part of two long lines (from a word before the first difference), redacted."""
    old, new = shorten_command(old, 400), shorten_command(new, 400)
    if len(old) <= width and len(new) <= width:
        return old, new
    p = 0
    while p < min(len(old), len(new)) and old[p] == new[p]:
        p += 1
    start = old.rfind(" ", 0, max(0, p - 12)) + 1
    lead = "…" if start else ""
    return (lead + shorten_command(old[start:], width).rstrip(" …") + ("…" if len(old) - start > width else ""),
            lead + shorten_command(new[start:], width).rstrip(" …") + ("…" if len(new) - start > width else ""))


def on_bash_result(sp: Scratchpad, ev: ToolResult, pend: dict[str, Any], *, harness: bool) -> None:
    """Failed-then-worked pairs, error → fix with proof, and recipes (succeeded commands)."""
    raw = str(pend.get("command", ""))
    if raw and harness:
        on_refusal(sp, strip_project_cd(raw, sp.cwd)[0], ev.output, ev.step, str(pend.get("event", ev.event_key)))
        if declined_call(ev.output):
            note_declined(sp, strip_project_cd(raw, sp.cwd)[0], rejection_feedback(ev.output) or "")
    if not raw or harness:
        return
    command, folder = strip_project_cd(raw, sp.cwd)
    if folder == "?":
        sp.ev.pop("last_fail", None)
        return  # run in another folder (another checkout): not a fact about this project
    category = command_category(command)
    event = str(pend.get("event", ev.event_key))
    named_rules = trigger_lessons.on_check_result(sp, command, category, ev.output, ev.is_error, ev.step, event)
    # Only a checker's own run is evidence against a lesson (``mise run lint``, ``ruff check``):
    # ``echo "directive … is unused"`` is an agent's words, and an agent's words retire nothing.
    if kind_of(command) in ("lint", "test", "build"):
        unused: list[str] = sp.ev.setdefault("unused", [])
        unused.extend(r for r in unused_suppressions(ev.output) if r not in unused)
        del unused[MAX_UNUSED:]
    # A run whose pipe hid its exit code but whose output shows it failed did not work, nor did one
    # that found nothing to run: it proves no recipe, fixes nothing and contradicts no "this fails" lesson.
    unproven = not ev.is_error and ((shows_failure(ev.output) and trigger_lessons.filtered(parse(command)))
                                    or ran_nothing(ev.output))
    if ev.is_error or unproven:
        missing_flags.on_failed_run(sp, command, ev.output, ev.step, event)
        # The compiler's own lines are the evidence, also through a pipe that hid the exit code.
        type_clashes.on_failure(sp, command, ev.output, ev.step, event)
    if unproven:
        return
    if ev.is_error:
        rejected_flags.on_failure(sp, command, ev.output, ev.step, event)
        err = stable_error(ev.output)
        if err:
            sp.ev["last_fail"] = [command, ev.step, err, event]
            # A failure whose output named checker rules is learned as those rules (``trigger_lessons``):
            # its error line (ESLint's ``10:1 error … no-console``) would be the same lesson told twice.
            if category in ("test", "lint", "build", "migrate") and not _CLI_ERROR.search(err) and not named_rules:
                opened = sp.ev.setdefault("open", [])
                if all(o["fp"] != normalize_error(err) for o in opened):
                    opened.append({"cmd": command, "cat": category, "step": ev.step, "err": err,
                                   "fp": normalize_error(err), "event": event, "edits": [],
                                   "own": _self_inflicted(sp, ev.output), "named": named_files(ev.output)})
                    del opened[:-3]
        return
    note_success(sp, command)
    if not _command_fix(sp, command, ev.step, event):
        missing_flags.on_passed_run(sp, command, ev.output, ev.step, event)
    _error_fixed(sp, command, category, ev.step, event)
    # Recipes are learned by ``recipes`` (shell-aware: the session's working folder, wrappers).


_NAMED_FILE: Final = re.compile(r"([\w@+-][\w@.+-]*\.[A-Za-z][\w]{0,7})(?=[:\s'\"),(]|$)")


def named_files(output: str) -> list[str]:
    """Base names of the files a failure's output names (``handlers.go:12:3: …`` -> ``handlers.go``)."""
    found = dict.fromkeys(m.group(1) for m in _NAMED_FILE.finditer(output[-8000:]))
    return [f for f in found if not f[0].isdigit()][:40]


def note_success(sp: Scratchpad, command: str) -> None:
    """A shell command that ran fine: a lesson saying such a command fails is contradicted by it."""
    ok: list[str] = sp.ev.setdefault("ok", [])
    if command not in ok and len(ok) < MAX_SUCCEEDED:
        ok.append(command)


def note_declined(sp: Scratchpad, command: str, words: str) -> None:
    """A shell command the user declined to let run (with what they typed, if anything): a lesson
    that recommends running it waits for their review (``contradictions.declined_contradicted``)."""
    declined: list[list[str]] = sp.ev.setdefault(DECLINED_CALLS, [])
    if all(d[0] != command for d in declined) and len(declined) < MAX_DECLINED:
        declined.append([command, redact_then_cut(words, 200)])


def _self_inflicted(sp: Scratchpad, output: str) -> bool:
    """True when the failure names a file this session already edited: the agent broke it and
    fixed it again, which teaches the next session nothing."""
    if not sp.edit_set:
        return False
    tail = output[-6000:]
    return any(posixpath.basename(p) in tail for p in list(sp.edit_set)[:200])


def _command_fix(sp: Scratchpad, command: str, step: int, event: str) -> bool:
    """A failed command, then a near-identical one that worked: True when that is a lesson."""
    last = sp.ev.get("last_fail")
    if not last or step - int(last[1]) > COMMAND_FIX_WINDOW:
        return False
    failed, _, err, fail_event = last
    if failed == command or command.startswith("git commit"):
        return False
    removed, added, ratio = command_diff(failed, command)
    if ratio < 0.5 or not (removed or added) or len(removed) > 4 or len(added) > 5:
        return False
    flags_only = all(t.startswith("-") for t in [*removed, *added])
    if not (_INVOCATION_ERROR.search(err) or flags_only):
        return False
    if not any(len(t) > 1 and t.strip("'\"") in err for t in failed.split()) or _piped_program_failed(failed, err):
        return False  # "head: unrecognized option": another command of the pipe failed, not this one
    if _plumbing_free(failed) == _plumbing_free(command):
        return False  # only "2>/dev/null" or "| head" changed: that cannot make the command itself work
    sp.ev.pop("last_fail", None)
    data: dict[str, Any] = {"failed": shorten_command(failed), "worked": shorten_command(command),
                            "error": redact_then_cut(err, 160), "events": [fail_event, event]}
    dropped = rejected_flags.dropped_flag(failed, err, removed)
    if dropped is None:
        difference = f"{' '.join(sorted(removed))}>{' '.join(sorted(added))}"
    else:
        # The program refused a flag and the retry worked without it: one lesson about the flag, in
        # every session whatever the arguments (blind judges read the one-off commands, tied to one
        # commit or one file, as noise), with the flags that took its place, if any.
        instead = " ".join(added) if added and all(t.startswith("-") for t in added) else ""
        data.update({"tool": dropped[0], "flag": dropped[1], "instead": instead})
        difference = f"{dropped[0]}:{dropped[1]}>{instead}"
    key = f"{COMMAND_FIX}:" + redact_then_cut(difference, 180)
    trigger = _fix_trigger(failed, removed, err)
    if trigger is not None:
        data["triggers"] = [trigger.as_json()]
    # "pytest: command not found" fixed by a setup prefix is one lesson whatever the arguments:
    # stated once, in the same words every session, so it reinforces instead of repeating.
    if not removed and added and added[-1] in ("&&", ";") and _NOT_FOUND.search(err):
        rest = command[len(" ".join(added)):].split()
        ran = parse(" ".join(rest)).main()
        if ran is not None:
            data["program"], data["prefix"] = rest[0], " ".join(added)
            # One lesson per program: the text names it, and ``ruff`` found once the venv is active
            # is not ``pytest`` found (one key made the later program reinforce the first one's text).
            key = f"{COMMAND_FIX}:{ran.program}:" + redact_then_cut(difference, 160)
            if trigger is not None:
                # A run that already has the setup step before it follows the lesson: it neither needs
                # it said nor proves it wrong by working (``source .venv/bin/activate && ruff check``).
                setup = tuple(t for t in added if t not in ("&&", ";"))[:5]
                data["triggers"] = [dataclasses.replace(trigger, unless=(SETUP_STEP, *setup)).as_json()]
    sp.add_signal(Signal(COMMAND_FIX, key, step, [], data,
                         [f"{shorten_command(failed, 80)} → {shorten_command(command, 80)}"]))
    return True


def _fix_trigger(failed: str, removed: list[str], err: str) -> Trigger | None:
    """What makes a command-fix lesson fire: the failed program and subcommand, given the tokens
    the fix removed (those the error names first; a prefix fix fires on the bare program)."""
    seg = parse(failed).main()
    if seg is None:
        return None
    named = [t for t in removed if len(t) > 1 and t.strip("'\"") in err and t not in (seg.program, *seg.words)]
    tokens = tuple(named or [t for t in removed if t.startswith("-")])[:3]
    return Trigger(COMMAND, seg.program, seg.words, tokens)


_REDIRECT: Final = re.compile(r"(?:\d|&)?>>?(?:&\d|\S+)?")


def _plumbing_free(command: str) -> str:
    """The command without what only shapes its output: later pipe stages and redirections."""
    return " ".join(t for t in command.split("|")[0].split() if not _REDIRECT.fullmatch(t))


def _piped_program_failed(command: str, err: str) -> bool:
    """True when the error is printed by a program later in the pipe (``x | head -z`` and
    ``head: invalid option``): what failed is the output plumbing, not the command."""
    programs = [seg.split()[0] for seg in command.split("|")[1:] if seg.split()]
    return any(err.lstrip().startswith((f"{prog}:", f"{posixpath.basename(prog)}:")) for prog in programs)


def _error_fixed(sp: Scratchpad, command: str, category: str | None, step: int, event: str) -> None:
    opened = sp.ev.get("open")
    if not opened or category is None:
        return
    for err in list(opened):
        if err["cat"] != category or step - int(err["step"]) > ERROR_FIX_WINDOW:
            if step - int(err["step"]) > ERROR_FIX_WINDOW:
                opened.remove(err)
            continue
        opened.remove(err)
        edits = [e for e in err.get("edits", []) if e[1]]
        if not edits:
            continue  # passed without a concrete edit: a flaky run or a different selection
        if sum(1 for seg in parse(err["cmd"]).segments if not seg.piped) > 2:
            continue  # a one-off chain of several programs (a script session), not a command to learn
        # The fix must be an edit of a file the failure named: an edit elsewhere that happened to
        # come before a passing run is no proof it fixed anything (a later run may have passed
        # for another reason: another folder, another selection, a flaky test).
        named = set(err.get("named") or [])
        edits = [e for e in edits if posixpath.basename(e[0]) in named]
        if not edits:
            continue
        path, summary, edit_event = edits[0]
        # One bug fixed once is history: the code holds its fix now, and the next session learns
        # nothing from it unless it comes back (of eleven lessons stored from one session, in two
        # projects, blind judges found one useful and six noise). It waits in the signal counts for
        # another session (``signals.SIGNAL_SPECS``). A bug comes back only as the same error fixed
        # in the same file: an error shape as broad as "build failed" fixed elsewhere is another bug.
        own = bool(err.get("own")) or is_test_file(path)
        sp.add_signal(Signal(ERROR_FIX, f"{ERROR_FIX}:{err['fp']}@{path}", step, [path],
                             {"command": shorten_command(recipe_form(err["cmd"])), "error": err["err"],
                              "file": path, "edit": summary, "events": [err["event"], edit_event, event],
                              "self_inflicted": own},
                             [err["err"]]))
