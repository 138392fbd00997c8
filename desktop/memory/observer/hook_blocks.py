"""Commands a hook refused: the rules a project (or its user) enforces in code (issue 13).

When a ``PreToolUse`` hook refuses a shell command, Claude Code replaces the command's
output with ``Bash operation blocked by hook:`` and one ``- [hook command]: message``
entry per hook. The message is the rule ("Please stage files explicitly by name", "Use
rg instead of grep -r"): the next session should know it before it runs into it. A hook
that crashed (``can't open file``, a traceback) states no rule and teaches nothing.

The refusal reaches the observer as a failed tool result, which the harness registry
(``harness.py``) keeps out of the error and command lessons; this module is the one place
that reads it, as a ``hook_block`` signal keyed by the hook and the rule's wording, so the
same refusal in many sessions reinforces one memory.

A hook the session itself wrote, edited, copied or renamed is the agent's own work under test,
not a rule the project enforces: its refusals there are the agent trying its draft (rules it
reworded, then removed, the same day). What an agent writes never promotes itself, so such a
session's refusals by that hook teach nothing; the hook teaches once a session that left it
alone runs into it.
"""

from __future__ import annotations

import posixpath
import re
from typing import Final

from desktop.memory.observer.command_shape import Segment, parse
from desktop.memory.observer.events import ToolCall
from desktop.memory.observer.harness import outside_project, shorten_command
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.signals import HOOK_BLOCK, Signal, excerpt
from desktop.memory.observer.tool_names import BASH, WRITE_TOOLS
from desktop.memory.privacy.boundary import redacted_key
from desktop.memory.triggers.model import COMMAND, Trigger

MAX_RULES_PER_REFUSAL: Final = 3

# At the start of a line, and before any "Exit code" line: the harness's words, not text a
# failing command printed (a command cannot make its own output a hook's refusal).
_REFUSAL: Final = re.compile(r"^(?:Error:\s*)?\w+ (?:operation blocked by hook|hook error):?\s*-?\s*"
                             r"\[(?P<hook>[^\]\n]{1,300})\]:?(?P<msg>.*)", re.I | re.S | re.M)
_EXIT_CODE: Final = re.compile(r"^Exit code \d+", re.M)
# Text a broken hook prints instead of a rule.
_BROKEN: Final = re.compile(r"can't open file|No such file|Traceback|\[Errno|command not found|"
                            r"Permission denied|SyntaxError|ModuleNotFoundError", re.I)
# The hook's own footer and the terminal's fold marker: not part of the rule.
_NOT_RULE: Final = re.compile(r"^\(add .{1,60} to override[^)]*\)$|^… \+\d+ lines", re.I)
_FOOTER: Final = re.compile(r"\s*\(add .{1,60} to override[^)]*\)\s*$", re.I)
# A label some hooks put before each rule: the rule is what follows.
_LABEL: Final = re.compile(r"^(?:System prompt instructs|Reason|Rule):\s*", re.I)
_SCRIPT: Final = re.compile(r"[\w~./-]+\.(?:py|sh|js|mjs|ts|rb|pl)\b")
#: Shell programs that put a script where a hook runs it (its new name, and the old one for ``mv``).
_PLACES: Final = frozenset({"mv", "cp", "ln", "install", "tee"})
#: A shell call that may place a script (checked before parsing: most calls do not).
_SHELL_WRITE: Final = re.compile(r"\b(?:mv|cp|ln|install|tee|sed)\b")
_REDIRECT_TO: Final = re.compile(r">>?\s*([\w~./\\-]+\.(?:py|sh|js|mjs|ts|rb|pl))\b")
_TOUCHED: Final = "hook_scripts_touched"
MAX_TOUCHED: Final = 256


def refusal_rules(output: str) -> tuple[str, list[str]]:
    """The hook (its script when it names one) and the rules it stated, or ``("", [])``."""
    m = _REFUSAL.search(output[:4000])
    if m is None or _EXIT_CODE.search(output[:m.start()]):
        return "", []
    hook = m.group("hook").strip()
    script = _SCRIPT.search(hook)
    msg = re.split(r"\n\s*-\s\[[^\]\n]+\]:", m.group("msg"))[0]  # the next hook's entry, if several refused
    rules: list[str] = []
    for line in (ln.strip() for ln in msg.splitlines()):
        if not line or _NOT_RULE.match(line):
            continue
        if rules and line[0].islower():
            rules[-1] = f"{rules[-1]} {line}"  # the terminal wrapped the line
        else:
            rules.append(line)
    if not rules or any(_BROKEN.search(r) for r in rules):
        return "", []
    rules = [_FOOTER.sub("", _LABEL.sub("", r)).strip() for r in rules]
    rules = [r for r in rules if len(r) >= 12]
    return (script.group(0) if script else hook), rules[:MAX_RULES_PER_REFUSAL]


def _trigger(seg: Segment, rule: str) -> Trigger:
    """What fires a hook's rule next time (and what, run fine in a later session, retires it:
    contradictions.py): the command the rule quotes when it quotes one of the refused program
    (``'git add .' detected`` -> git add with ``.``), else a run of the refused program."""
    for quoted in re.findall(r"'([^'\n]{2,80})'|\"([^\"\n]{2,80})\"|`([^`\n]{2,80})`", rule):
        span = next(q for q in quoted if q)
        named = parse(span).main()
        if named is not None and named.program == seg.program:
            return Trigger(COMMAND, named.program, named.words, tuple(named.args[len(named.words):])[:3])
    return Trigger(COMMAND, seg.program, seg.words[:1])


def on_refusal(sp: Scratchpad, command: str, output: str, step: int, event: str) -> None:
    """Record each rule a hook stated when it refused ``command``."""
    hook, rules = refusal_rules(output)
    if not rules:
        return
    files = [] if outside_project(hook) else [hook.removeprefix("./")]
    seg = next((s for s in parse(command).segments if not s.piped), None)
    for rule in rules:
        triggers = [_trigger(seg, rule).as_json()] if seg is not None else []
        # Quoted parts name the command or pattern that tripped it; the rule is the rest.
        wording = re.sub(r"'[^']*'|\"[^\"]*\"|[^a-z ]+", "", redacted_key(rule, 4000))
        key = f"{HOOK_BLOCK}:{posixpath.basename(hook)}:{' '.join(wording.split())}"[:200]
        sp.add_signal(Signal(HOOK_BLOCK, key, step, files,
                             {"hook": hook, "rule": excerpt(rule, 200), "command": shorten_command(command, 80),
                              "events": [event], "triggers": triggers},
                             [f"{shorten_command(command, 80)} → {excerpt(rule, 160)}"]))


def _place(path: str) -> str:
    """A script's place as a hook names it: its folder's name and its file name (``.claude/guard.py``
    for ``~/.claude/guard.py``, ``../../.claude/guard.py`` or ``C:\\u\\.claude\\guard.py``)."""
    parts = [p for p in re.split(r"[\\/]+", path.strip("'\"")) if p and p != "."]
    return "/".join(parts[-2:])


def on_call(sp: Scratchpad, ev: ToolCall) -> None:
    """Note each script the session writes, edits, copies, moves or writes through the shell (a
    redirection, ``tee``, ``sed -i``), by its place (``_place``): a hook runs it from anywhere."""
    paths: list[str] = []
    if ev.tool in WRITE_TOOLS:
        paths = [*ev.file_paths, str(ev.args.get("file_path") or "")]
    elif ev.tool == BASH:
        command = str(ev.args.get("command") or "")
        paths = [m.group(1) for m in _REDIRECT_TO.finditer(command)]
        for seg in parse(command).segments if _SHELL_WRITE.search(command) else ():  # most calls: no parse
            if seg.program in _PLACES or (seg.program == "git" and seg.words[:1] == ("mv",)) or (
                    seg.program == "sed" and any(a.startswith("-i") for a in seg.args)):
                paths.extend(a for a in seg.args if not a.startswith("-"))
    places = {place for place in map(_place, filter(None, paths)) if _SCRIPT.fullmatch(place.rsplit("/", 1)[-1])}
    if places:
        touched = sp.ev.setdefault(_TOUCHED, [])
        touched.extend(p for p in sorted(places) if p not in touched and len(touched) < MAX_TOUCHED)


def finalize(sp: Scratchpad) -> None:
    """Drop the refusals of hooks the session worked on itself: the agent's draft is no evidence.
    A hook named with its folder must match the folder's name too (``src/index.js`` edited is not
    ``.claude/hooks/index.js``); one named bare (``python3 guard.py``) matches by file name."""
    touched = set(sp.ev.get(_TOUCHED, []))
    if not touched:
        return
    names = {t.rsplit("/", 1)[-1] for t in touched}
    for key, sig in list(sp.signals.items()):
        if sig.kind != HOOK_BLOCK:
            continue
        hook = _place(str(sig.data.get("hook", "")))
        if hook in touched or ("/" not in hook and hook in names):
            del sp.signals[key]
