"""Recipes: how this project is tested, linted, formatted, built, installed, run and deployed, and how
its pull requests are opened and reviewed (``review_commands``).

A recipe is (folder, command as it ran successfully, normalised), learned from the
shell calls of a session:

* the folder is the shell's: a ``cd`` earlier in the session (Claude Code's shell keeps
  its folder between calls) or in the same line (``cd web && npm test``), or the call's
  own working directory (Codex, Gemini CLI); a command run outside the project teaches
  nothing about it;
* the command is the one that ran, its wrappers removed (``timeout 60``, ``time``, a pager
  after a pipe, a ``|| true``), its setup kept (``source .venv/bin/activate &&``), its
  flags kept, and only what selects one run's tests dropped (a test file, ``-k name``,
  ``-run TestX``);
* never from a failed run: the call must succeed, and when its exit status was hidden
  (``| tail``, ``|| true``) its output must show no failure either.

Each recipe has a *purpose*: its kind, its folder and the kind of suite it runs
(integration, e2e, ...). When a later session shows a different working command for
the same purpose (pip -> uv, port 3000 -> 3001), promotion retires the older recipe as
superseded by the newer one (its history kept), so only the current way is injected.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final

from desktop.memory.observer.command_kinds import category, shows_failure
from desktop.memory.observer.events import ToolCall, ToolResult
from desktop.memory.observer.harness import shorten_command
from desktop.memory.observer.review_commands import review_kind, review_recipe
from desktop.memory.observer.run_parts import SUITE, SUITE_NAMES, normalised
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.shell_parse import Segment, is_noise, is_setup, move, parse_line
from desktop.memory.observer.signals import RECIPE, Signal

#: Agents whose shell keeps its working folder from one call to the next.
PERSISTENT_SHELL: Final = frozenset({"claude-code", "engram"})

MAX_COMMAND: Final = 160
_CD_FAILED: Final = re.compile(r"\bcd:.*(?:no such file|not a directory|permission denied)", re.I)


def purpose(kind: str, folder: str, command: str) -> str:
    """What a recipe is for: the same purpose twice is the same recipe, one superseding the other."""
    suites = sorted({SUITE_NAMES.get(m, m) for m in SUITE.findall(command.lower())})
    return f"{kind}@{folder or '.'}" + (f"#{'+'.join(suites)}" if suites else "")


def on_call(sp: Scratchpad, ev: ToolCall, pend: dict[str, Any]) -> None:
    """Read the command line now (the folder it starts in is the shell's at this moment)."""
    command = str(ev.args.get("command", ""))
    if not command.strip():
        return
    shell = sp.ev.setdefault("shell", {"cwd": ""})
    workdir = ev.args.get("workdir") or ev.args.get("directory") or ev.args.get("dir_path")
    start: str | None = shell.get("cwd", "")
    if isinstance(workdir, str) and workdir:  # the call names its own folder
        start = move("", workdir, sp.cwd)
    elif sp.agent not in PERSISTENT_SHELL:
        start = ""
    line = parse_line(command, start, sp.cwd)
    active: list[str] = []
    if sp.agent in PERSISTENT_SHELL:
        pend["cwd"] = [shell.get("cwd", ""), line.cwd_after]
        shell["cwd"] = line.cwd_after  # the shell is there now (put back if the cd failed)
        active = list(shell.get("setup", []))  # a venv activated by an earlier call is still active
        if any(seg.text.startswith("deactivate") for seg in line.segments):
            active = []
        shell["setup"] = list(dict.fromkeys([*active, *(seg.text for seg in line.segments if is_setup(seg))]))[-3:]
    pend["recipes"] = _recipes_of(line.segments, active)


#: Steps that change the tree for the ones after them: "format, then lint" is a workflow of its own.
_PREPARES: Final = frozenset({"format", "install"})


def _recipes_of(segments: list[Segment], active: list[str]) -> list[dict[str, Any]]:
    """The recipe commands of a line, each with the setup before it (the shell's ``active`` setup first).

    A step that changes the tree (formatting, installing) chained with ``&&`` to the command it
    prepares, in one folder, is one workflow (``mise run fmt && mise run lint``); other chains
    (``lint && test``) are their recipes one by one.
    """
    setup: list[str] = [s for s in active if not s.startswith("export ")]
    found: list[dict[str, Any]] = []
    chained = False  # the previous segment was the last recipe found (nothing else ran in between)
    for seg in segments:
        if is_setup(seg):
            if seg.text not in setup:
                setup.append(seg.text)
            continue
        if is_noise(seg):
            continue
        kind = category(seg.text)
        form = normalised(seg.text, kind or "") if kind else None
        review = None if kind else review_kind(seg.text)
        if review is not None:
            # The code host's command works from any folder, whatever was set up for the tools.
            form = review_recipe(seg.text, review)
            if form is not None and seg.cwd is not None:
                found.append({"kind": review, "command": form, "setup": [], "env": [], "masked": seg.masked,
                              "folder": ""})
            chained = False
            continue
        if kind is None or form is None:
            chained = False
            continue
        last = found[-1] if found and chained else None
        if (last is not None and seg.op == "&&" and last["folder"] == seg.cwd and not last["masked"]
                and last["kind"] in _PREPARES and kind not in _PREPARES):
            last.update(kind=f"{last['kind']}+{kind}", command=f"{last['command']} && {form}",
                        env=sorted({*last["env"], *seg.env}), masked=seg.masked)
        else:
            found.append({"kind": kind, "command": form, "setup": list(setup), "env": sorted(set(seg.env)),
                          "masked": seg.masked, "folder": seg.cwd})
        chained = True
    return found


#: Files that make a folder a project of its own: a command run there means that project.
_MANIFESTS: Final = ("package.json", "pyproject.toml", "setup.py", "go.mod", "Cargo.toml", "Makefile", "mise.toml",
                     "pom.xml", "build.gradle", "Gemfile", "composer.json", "CMakeLists.txt", "tox.ini", "deno.json")
_RELATIVE_ARG: Final = re.compile(r"(?:^|\s)\.{1,2}/|(?:^|\s)[\w.-]+/[\w./*-]*")


def _folder_matters(root: str, folder: str, command: str) -> bool:
    """Whether a recipe's folder is part of it: the command names paths relative to it, or the
    folder is a project of its own (a manifest there). Otherwise the shell was only left there by
    an earlier ``cd``, and the recipe is the project's, from its root."""
    if _RELATIVE_ARG.search(command):
        return True
    base = Path(root) / folder if root else None
    if base is None or not base.is_dir():
        return True  # not on this disk (an imported transcript of another machine): keep what ran
    return any((base / name).exists() for name in _MANIFESTS)


def on_result(sp: Scratchpad, ev: ToolResult, pend: dict[str, Any]) -> None:
    """A recipe, when the command worked (and showed no failure where its exit status was hidden)."""
    moved = pend.get("cwd")
    if moved and ev.is_error and _CD_FAILED.search(ev.output[:2000]):
        sp.ev.setdefault("shell", {})["cwd"] = moved[0]  # "cd: no such file or directory": it stayed
    if ev.is_error:
        return
    for rec in pend.get("recipes") or []:
        if rec["folder"] is None:
            continue  # run outside the project: not this project's recipe
        if rec["masked"] and shows_failure(ev.output):
            continue  # "go test ./... | tail" exits 0 whatever the tests did: the output says they failed
        command = " && ".join([*rec["setup"], rec["command"]])
        text = shorten_command(command, MAX_COMMAND)
        if text.endswith("…") and text != shorten_command(command, 10 * MAX_COMMAND):
            continue  # too long to state whole: a cut recipe is not one (a placeholder "…" is no cut)
        if rec["folder"] and not _folder_matters(sp.cwd, rec["folder"], rec["command"]):
            rec = {**rec, "folder": ""}  # the shell happened to be there (a cd for something else)
        goal = purpose(rec["kind"], rec["folder"], rec["command"])
        # One key per purpose and way: a way counts once it worked in two sessions, and the newest
        # way to be stored retires the older ones of its purpose (``supersede``).
        sp.add_signal(Signal(RECIPE, f"{RECIPE}:{goal}:{text}", ev.step, [],
                             {"category": rec["kind"], "command": text, "folder": rec["folder"], "env": rec["env"],
                              "purpose": goal, "events": [str(pend.get("event", ev.event_key))]},
                             [shorten_command(command, 160)]))
