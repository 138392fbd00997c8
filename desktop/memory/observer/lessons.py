"""Evidence that makes good memories, without a language model (issue 13).

Five kinds, each a signal the promotion renders as one or two standalone sentences:

- ``user_rule``: the user's own instruction or correction, in their words, from a
  plain user message (never a tool result, slash-command expansion or hook feedback);
- ``command_fix``: a command that failed, then a near-identical one that worked (the
  difference is the lesson), keyed by that difference so it counts across sessions;
- ``recipe``: how the project is tested, built, linted, run, migrated or deployed: a
  command that succeeded, with its working folder and the names of its env vars;
- ``error_fix``: an error with a stable message, the file edited, the edit in one line,
  and the same command passing afterwards (proof the edit fixed it);
- ``stated_cause``: a root cause or decision the agent stated in its visible prose
  ("Root cause: ...", "That's the issue: ...", "Decision: ..."), with its files.

All state lives in ``Scratchpad.ev`` (a small JSON-safe dict, checkpointed with the
rest); every handler does bounded work per event.
"""

from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Iterable
from typing import Any, Final

from desktop.memory.observer.events import Reasoning, ToolCall, ToolResult, UserMessage
from desktop.memory.observer.harness import outside_project, shorten_command, strip_project_cd
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.signals import (
    COMMAND_FIX,
    ERROR_FIX,
    RECIPE,
    STATED_CAUSE,
    USER_RULE,
    Signal,
    error_core,
    normalize_error,
)

ERROR_FIX_WINDOW: Final = 40
COMMAND_FIX_WINDOW: Final = 6
MAX_RULES_PER_MESSAGE: Final = 2

# -- user instructions -------------------------------------------------------------------------

# A message that is not something the user typed to instruct: a slash command or its
# expansion, hook feedback, a continuation summary, pasted tool output.
_NOT_TYPED: Final = re.compile(
    r"^(?:<|/\S+|Caveat:|This session is being continued|\[Request interrupted|Stop hook feedback|"
    r"\w+ hook (?:feedback|error)|PreToolUse|PostToolUse|#+ |Execute @?\.?claude/commands|"
    r"execute /\w+|Base directory for this skill)", re.I)
# Discourse fillers before the instruction itself: "Good, but please don't ..." -> "don't ...".
_FILLER: Final = re.compile(
    r"^(?:(?:ok(?:ay)?|good|great|nope|no|yes|yeah|sorry|hmm+|also|and|but|so|then|please|just|again|"
    r"not bad|looks good|this is good|correct|right|agreed|nah|ah|oh)\b[\s,;:.!-]*)+", re.I)
# A standing rule: a prohibition, an always/never, a "must", or a correction of a tool choice.
# Bare imperatives ("use X", "keep Y", "we should Z") are mostly today's plan, so they count
# only with never/always/not/instead.
_RULE_START: Final = re.compile(
    r"^(?:don'?t|do not|never|always|make sure|stop|avoid|"
    r"you (?:must|shouldn'?t|should (?:not|never|always)|are not (?:allowed|supposed)|can'?t|do not|don'?t)|"
    r"we (?:shouldn'?t|should (?:not|never|always)|must|never|always|are using|don'?t (?:use|want|commit|add))|"
    r"we'?re using|(?:use|keep|leave|remember)\b.*\b(?:instead of|rather than|not|never|always)\b|"
    r"(?:[\w`@./-]+ ){1,4}must (?:not |never |always |be |only )?)", re.I)
# "X should glob for the name, not use a fixed one": a correction, wherever it sits.
_RULE_ANYWHERE: Final = re.compile(r"\b(?:you should (?:not|never)|"
                                   r"(?:should|must)\b[^.;]*,\s*not\b|"
                                   r"(?:never|always) (?:use|run|commit|add|load|read|write|put|create))\b", re.I)
# Words that point into the conversation ("it", "here", "again"): the sentence means nothing later.
_DEICTIC: Final = re.compile(r"\b(?:that|this)\W*$|\b(?:here|now|again|above|below|previous(?:ly)?|earlier|last time|"
                             r"this one|that one|already there)\b", re.I)
# An object pronoun ("show them to me") points back into the conversation; "it"/"they" later
# in a sentence usually mean the sentence's own subject ("Never load `x.md`: it is huge").
_PRONOUN: Final = re.compile(r"\b(?:them|its|those ones)\b", re.I)
# "don't we also need ...": a question, whatever its punctuation.
_INVERTED: Final = re.compile(r"^(?:don'?t|do|does|can'?t|can|could|should(?:n'?t)?|would|is|are|isn'?t|aren'?t) "
                              r"(?:we|you|I|it|they)\b", re.I)
# Session-bound wording: a plan for today, not a standing rule.
_NOT_A_RULE: Final = re.compile(
    r"\b(?:yet|for now|right now|at this time|this time|today|right away|anymore|at the moment|"
    r"this session|last session|next session|in the meantime|for later|this phase|maybe|perhaps|probably|"
    r"there must|must have|must be some|"
    r"not sure|W8|WTF)\b", re.I)
_SENTENCES: Final = re.compile(r"(?<=[.!])\s+|\n+")
_CODEISH: Final = re.compile(r"`([^`\n]{2,80})`|@([\w./-]+)|(?<![\w.])([\w.-]+/[\w./-]+|"
                             r"\.?[\w-]+\.(?:py|ts|js|md|json|toml|ya?ml|sh|sql|cfg|ini|txt|lock))\b")
_PRONOUN_START: Final = re.compile(r"^(?:it|this|that|these|those|they|he|she|which)\b", re.I)


_FILELIKE: Final = re.compile(r"\.?[\w@+-][\w@.+-]*(?:/[\w@.+-]+)*(?:\.[A-Za-z]\w{0,7}|/)")


def _files_in(tokens: list[str]) -> list[str]:
    """The tokens that name a project file or folder (``a/b.py``, ``.github/``), not code or prose."""
    return [t for t in tokens if _FILELIKE.fullmatch(t) and not outside_project(t)]


def _concrete(sentence: str) -> list[str]:
    """Code-ish tokens a sentence names (backticked, @file, paths, file names)."""
    return [next(g for g in m.groups() if g) for m in _CODEISH.finditer(sentence)]


def rule_sentences(text: str) -> list[str]:
    """The sentences of a typed user message that state a standing rule or correction."""
    stripped = text.strip()
    if not stripped or _NOT_TYPED.match(stripped) or len(stripped) > 3000:
        return []
    out: list[str] = []
    for raw in _SENTENCES.split(stripped[:3000]):
        sentence = " ".join(raw.strip(" -*>•").split())
        if not 20 <= len(sentence) <= 320 or sentence.endswith("?") or sentence.startswith(("│", "⎿", "$")):
            continue
        core = _FILLER.sub("", sentence)
        if "?" in sentence or _NOT_A_RULE.search(sentence) or re.match(r"(?:I|I'\w+|or|our)\b", core, re.I):
            continue
        if len(core.split()) < 5 and not _concrete(core):
            continue  # "Remember our process!": a mood, not a rule
        if _DEICTIC.search(core) or _INVERTED.match(core) or (_PRONOUN.search(core) and not _concrete(core)):
            continue
        if not (_RULE_START.match(core) or _RULE_ANYWHERE.search(sentence)):
            continue
        if _PRONOUN_START.match(core) and not _concrete(sentence):
            continue  # "it shouldn't be private": nobody knows what "it" is a week later
        out.append(sentence)
        if len(out) >= MAX_RULES_PER_MESSAGE:
            break
    return out


def on_user(sp: Scratchpad, ev: UserMessage) -> None:
    """Keep the user's instructions and corrections, in their words, tied to the files they name."""
    for sentence in rule_sentences(ev.text):
        named = _files_in(_concrete(sentence))
        key = re.sub(r"[^a-z0-9 ]+", "", sentence.lower())[:120]
        sp.add_signal(Signal(USER_RULE, f"{USER_RULE}:{key}", ev.step, named[:4],
                             {"text": sentence, "events": [ev.event_key]}, [sentence]))


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
_ENV_ASSIGN: Final = re.compile(r"(?:^|&&\s*|;\s*|\bexport\s+)([A-Z][A-Z0-9_]{1,40})=\S*")
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
_SELECTOR: Final = re.compile(r"^(?:[\w./-]+\.(?:py|ts|js|tsx|rs|go)(?:::[\w:\[\]-]+)?|::.*)$")


_QUOTED: Final = re.compile(r"\"[^\"]*\"|'[^']*'")


def command_category(command: str) -> str | None:
    """test / lint / build / install / migrate / deploy / run, or None for anything else.

    Quoted text is ignored (a commit message mentioning ruff is not a lint run), and so is
    everything git, gh and echo do.
    """
    bare = _QUOTED.sub("''", command.split("|")[0])
    last = bare.split("&&")[-1].strip()
    if re.match(r"(?:git|gh|echo|cat|grep|rg|ls|which|find)\b", last):
        return None
    for name, rx in _CATEGORIES:
        if rx.search(bare):
            return name
    return None


def env_names(command: str) -> list[str]:
    """Names (never values) of the environment variables a command sets."""
    return sorted({m.group(1) for m in _ENV_ASSIGN.finditer(command)})[:5]


def stable_error(output: str) -> str:
    """The error line that would read the same next time (an exception, ``error:``), or ''."""
    lines = [ln.strip() for ln in output[-6000:].splitlines() if ln.strip()]
    for line in reversed(lines[-80:]):
        bare = line.removeprefix("Error: ").removeprefix("E ").strip()
        if _NOT_STABLE.search(line) or _NOT_STABLE.search(bare):
            continue
        if _STABLE_ERROR.fullmatch(line) and len(bare) >= 12:
            return bare[:200]
    core = error_core(output).removeprefix("Error: ").strip()
    return "" if not core or _NOT_STABLE.search(core) or len(core) < 12 else core[:200]


def recipe_form(command: str) -> str:
    """The command to reuse: no pipe into a pager or grep, no test selectors, file arguments,
    short flags or valued options (they belong to one run, not to the recipe)."""
    head = command.split(" | ")[0]
    words = [w for w in head.split() if not _SELECTOR.match(w) and not re.match(r"[A-Z][A-Z0-9_]*=", w)
             and not (w.startswith("-") and (not w.startswith("--") or "=" in w))]
    return " ".join(words)


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
    if not state or outside_project(path):
        return
    summary = edit_summary(ev.args)
    for err in state:
        edits = err.setdefault("edits", [])
        if len(edits) < 3 and all(e[0] != path for e in edits):
            edits.append([path, summary, ev.event_key])


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
    if not raw or harness:
        return
    command, folder = strip_project_cd(raw, sp.cwd)
    if folder == "?":
        sp.ev.pop("last_fail", None)
        return  # run in another folder (another checkout): not a fact about this project
    category = command_category(command)
    event = str(pend.get("event", ev.event_key))
    if ev.is_error:
        err = stable_error(ev.output)
        if err:
            sp.ev["last_fail"] = [command, ev.step, err, event]
            if category in ("test", "lint", "build", "migrate") and not _CLI_ERROR.search(err):
                opened = sp.ev.setdefault("open", [])
                if all(o["fp"] != normalize_error(err) for o in opened):
                    opened.append({"cmd": command, "cat": category, "step": ev.step, "err": err,
                                   "fp": normalize_error(err), "event": event, "edits": [],
                                   "own": _self_inflicted(sp, ev.output)})
                    del opened[:-3]
        return
    _command_fix(sp, command, ev.step, event)
    _error_fixed(sp, command, category, ev.step, event)
    if category is not None:
        form = recipe_form(command)
        key = f"{RECIPE}:{category}:{form}"
        sp.add_signal(Signal(RECIPE, key, ev.step, [], {"category": category, "command": shorten_command(form),
                                                          "folder": folder, "env": env_names(command),
                                                          "events": [event]}, [shorten_command(command, 160)]))


def _self_inflicted(sp: Scratchpad, output: str) -> bool:
    """True when the failure names a file this session already edited: the agent broke it and
    fixed it again, which teaches the next session nothing."""
    if not sp.edit_set:
        return False
    tail = output[-6000:]
    return any(posixpath.basename(p) in tail for p in list(sp.edit_set)[:200])


def _command_fix(sp: Scratchpad, command: str, step: int, event: str) -> None:
    last = sp.ev.get("last_fail")
    if not last or step - int(last[1]) > COMMAND_FIX_WINDOW:
        return
    failed, _, err, fail_event = last
    if failed == command or command.startswith("git commit"):
        return
    removed, added, ratio = command_diff(failed, command)
    if ratio < 0.5 or not (removed or added) or len(removed) > 4 or len(added) > 5:
        return
    flags_only = all(t.startswith("-") for t in [*removed, *added])
    if not (_INVOCATION_ERROR.search(err) or flags_only):
        return
    if not any(len(t) > 1 and t.strip("'\"") in err for t in failed.split()):
        return  # "head: unrecognized option": another command of the pipe failed, not this one
    sp.ev.pop("last_fail", None)
    key = f"{COMMAND_FIX}:{' '.join(sorted(removed))}>{' '.join(sorted(added))}"[:200]
    data: dict[str, Any] = {"failed": shorten_command(failed), "worked": shorten_command(command),
                            "error": err[:160], "events": [fail_event, event]}
    # "pytest: command not found" fixed by a setup prefix is one lesson whatever the arguments:
    # stated once, in the same words every session, so it reinforces instead of repeating.
    if not removed and added and added[-1] in ("&&", ";") and _NOT_FOUND.search(err):
        rest = command[len(" ".join(added)):].split()
        if rest:
            data["program"], data["prefix"] = rest[0], " ".join(added)
    sp.add_signal(Signal(COMMAND_FIX, key, step, [], data,
                         [f"{shorten_command(failed, 80)} → {shorten_command(command, 80)}"]))


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
        path, summary, edit_event = edits[0]
        sp.add_signal(Signal(ERROR_FIX, f"{ERROR_FIX}:{err['fp']}", step, [path],
                             {"command": shorten_command(recipe_form(err["cmd"])), "error": err["err"],
                              "file": path, "edit": summary, "events": [err["event"], edit_event, event],
                              "self_inflicted": bool(err.get("own"))},
                             [err["err"]]))


# -- stated causes and decisions --------------------------------------------------------------

_CAUSE: Final = re.compile(
    r"(?:\*\*)?(?P<label>root cause(?: found| identified)?|the root cause (?:is|was)|that'?s the (?:issue|problem|bug)|"
    r"the (?:real |actual )?(?:issue|problem|bug) (?:is|was) that|decision|we decided to|"
    r"the fix (?:is|was) to)(?:\*\*)?\s*[:!—-]?\s+(?P<body>.{20,400}?)(?=(?<!\w\.\w)[.!]\s|\n|$)",
    re.I)


def attach_files(names: list[str], session_files: Iterable[str]) -> list[str]:
    """The project files a session touched (read or edited, any time) that ``names`` refer to.

    ``library.py`` resolves to ``bookminder/library.py``; a folder name matches the files under it.
    Run at session end, so a file opened after the sentence was written counts too.
    """
    touched = [p for p in session_files if not outside_project(p)]
    out: list[str] = []
    for name in names:
        if name in touched or (name.endswith("/") and any(p.startswith(name) for p in touched)):
            hit: str | None = name
        else:
            tail = "/" + name.lstrip("./")
            hit = next((p for p in touched if ("/" + p).endswith(tail)), None)
        if hit is not None and hit not in out:
            out.append(hit)
    return out


def on_agent_text(sp: Scratchpad, ev: Reasoning) -> None:
    """A root cause or decision the agent stated in visible prose (never hidden thinking)."""
    if ev.kind != "text" or len(ev.text) < 30:
        return
    for m in _CAUSE.finditer(ev.text[:6000]):
        body = " ".join(m.group("body").split()).strip(" *")
        named = _concrete(body)
        if not named:
            continue  # "the issue is that it does not work": no file, no value, nothing to act on
        files = _files_in(named)
        if not files:
            continue  # attached to their files (checked against the session's files at promotion)
        label = m.group("label").lower()
        kind = "decision" if label.startswith(("decision", "we decided")) else "cause"
        key = re.sub(r"[^a-z0-9 ]+", "", body.lower())[:120]
        sp.add_signal(Signal(STATED_CAUSE, f"{STATED_CAUSE}:{key}", ev.step, files[:4],
                             {"text": body, "kind": kind, "events": [ev.event_key]}, [body]))
        return
