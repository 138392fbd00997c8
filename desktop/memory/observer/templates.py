"""Deterministic memory text: one template per signal class, written as useful sentences.

Templates never include counts or step numbers, so the same lesson learned again
renders the same text and the store's fingerprint dedup reinforces it instead of
adding a near copy. Text taken from tool output (an error line) is quoted and
checked for instruction-like wording: tool outputs are data, and a quoted
"remember: always ..." must never read as advice.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from desktop.memory.observer.review_commands import KINDS as REVIEW_KINDS
from desktop.memory.observer.signals import (
    ASKED_TESTS,
    CHECK_GAP,
    CHECK_RULE,
    COMMAND_FIX,
    ERROR_FIX,
    EXPLICIT,
    HOOK_BLOCK,
    PARALLEL_CONFLICT,
    PROJECT_FACT,
    RECIPE,
    REJECTED_FLAG,
    REVIEWED_TESTS,
    REVIEWED_TESTS_LEAD,
    SHELL_ESCAPE,
    SHELL_STRAY,
    STATED_CAUSE,
    TOOL_ARGS,
    TYPE_CLASH,
    USER_RULE,
    WRONG_PLACE,
    Signal,
    excerpt,
)
from desktop.memory.observer.tool_arguments import lesson_text
from desktop.memory.types import MemoryType

#: Wording that tries to instruct the reader. Found in text copied from tool output,
#: it marks the candidate tainted (needs review, lower confidence) whatever its source.
#: A word inside an option or a name (``--disable-all``, ``skip_check=1``) is not prose: it
#: is what a command was given, which lessons about commands quote.
INSTRUCTION_RE: Final = re.compile(
    r"(?<![-\w/.=])(?:remember|always|never|from now on|ignore (?:all|any|the|previous)|you must|you should|"
    r"disable|bypass|skip (?:the )?(?:auth|check|test)|system prompt|instructions?)(?![-\w=])", re.I)


def looks_like_instruction(text: str) -> bool:
    """True when text reads like an instruction to the agent rather than a fact."""
    return bool(INSTRUCTION_RE.search(text))


@dataclass
class Rendered:
    """A memory text and type for one signal, plus whether its words came from tool output."""

    type: str
    content: str
    files: list[str] = field(default_factory=list)
    from_tool_output: bool = False
    tags: list[str] = field(default_factory=list)


class MemoryWriterLLM(Protocol):
    """Optional: writes 1-3 sentence memory text from raw signal data (off by default)."""

    def write(self, kind: str, data: dict[str, Any], draft: str) -> str:
        """Return the memory text for a candidate (``draft`` is the template's text)."""


def wrong_place_without(content: str, gone: list[str]) -> str | None:
    """A wrong-place lesson's text once the example file it names is gone: the folder it names
    stays (the example was one file of it), else the example goes; None when it names none of
    ``gone``. The wrong place stays wrong either way."""
    kept = content
    for g in gone:
        tail = f" (`{g}`)."
        if kept.endswith(tail):
            kept = kept[: -len(tail)] + "."
    head, _, example = kept.rpartition("; ")
    # A gone path counts when the example names it, or a path under it, as a whole (from the
    # project's root: the root's `entire` is not the `cmd/entire/cli/` of an example).
    if head and any(re.search(rf"`{re.escape(g.rstrip('/'))}(?:/[^`]*)?`", example) for g in gone):
        kept = head + "."  # the folder itself is gone too, or the old form named only the file
    return kept if kept != content else None


def _q(path: str) -> str:
    return f"`{path}`"


def _list(paths: list[str], limit: int = 4) -> str:
    shown = [_q(p) for p in paths[:limit]]
    return ", ".join(shown) + (" and others" if len(paths) > limit else "")


#: Signal classes that become memory text. The others (co-access, config touch, backtrack,
#: read-abandon, test order, step overrun, glob-ignore, repeated grep, import chase, web
#: lookups, the agent's self-corrections and dead-end phrases, bare error retries) still feed
#: the cross-session tables and prefetch, but as memory text a reader labelled them weak or
#: noise (bench/memory_quality: 0 useful of 96 before issue 13), so they are never rendered.
#: The agent's stated root causes are not either: of the 8 a reader labelled (labels.tsv, issue 13's
#: "after" run) 1 was useful, 5 weak and 2 noise, so they stay out of what is stored (issue 26).
#: Nor is a large read ("reading X whole costs a lot of context"): 6 of 6 labels weak, in three
#: rounds, and no hook ever said one; an agent reads a part of a large file by itself.
MEMORY_KINDS: Final = frozenset({USER_RULE, COMMAND_FIX, ERROR_FIX, RECIPE, EXPLICIT, HOOK_BLOCK,
                                 PARALLEL_CONFLICT, WRONG_PLACE, CHECK_RULE, CHECK_GAP,
                                 PROJECT_FACT, ASKED_TESTS, REVIEWED_TESTS, SHELL_STRAY, SHELL_ESCAPE,
                                 REJECTED_FLAG, TOOL_ARGS, TYPE_CLASH})
#: What each kind of recipe does, in words true of every tool of the kind: a linter, a type checker
#: and ``pre-commit`` all "check the code" (blind judges of two rounds marked "check lint and types"
#: wrong for ``mypy .`` and for ruff, which checks no types).
_RECIPE_DOES: Final = {"test": "run the tests", "lint": "check the code", "format": "format the code",
                       "build": "build", "install": "install and set up", "migrate": "apply migrations",
                       "deploy": "deploy", "run": "start the app", "pull_request": "open pull requests",
                       "review_reply": "answer a review comment in its own thread"}


def _recipe_verb(category: str) -> str:
    """"Run the tests with", or for a chained workflow "Format the code, then check it, with"."""
    steps = [_RECIPE_DOES.get(c, "run") for c in category.split("+")]
    # The code a step names was named by the step before: "format the code, then check it".
    steps = [s.replace(" the code", " it") if i and steps[i - 1].endswith(" the code") else s
             for i, s in enumerate(steps)]
    if len(steps) == 1:
        return f"{steps[0][0].upper()}{steps[0][1:]} with"
    text = ", then ".join(steps)
    return f"{text[0].upper()}{text[1:]}, with"


def _where(d: dict[str, Any]) -> str:
    parts = []
    if d.get("category") in REVIEW_KINDS:
        return ""  # the code host's command: the folder it ran from is not part of it
    if d.get("folder"):
        parts.append(f"from `{d['folder']}/`")
    else:
        parts.append("from the project root")
    if d.get("env"):
        parts.append("with " + ", ".join(f"`{n}`" for n in d["env"]) + " set")
    return " ".join(parts)


def render(sig: Signal, error: dict[str, Any] | None = None) -> Rendered | None:
    """The memory text for one signal, or None when the class never becomes a memory."""
    k, d, files = sig.kind, sig.data, sig.files
    T = MemoryType
    if k not in MEMORY_KINDS:
        return None
    if k == USER_RULE:
        where = f" (about {_list(files, 3)})" if files else ""
        # What the session then wrote or ran for a rule that names nothing itself (referents.py).
        then = f" The session that heard it then {d['referent']}." if d.get("referent") else ""
        return Rendered(T.PREFERENCE, f"The user's instruction{where}: \"{d['text']}\"{then}", files[:4])
    if k == SHELL_STRAY:
        return Rendered(T.GOTCHA, f"The agent's shell keeps its folder between commands: after an earlier `cd "
                        f"{d['folder']}`, `{excerpt(d['call'], 80)}` failed (\"{excerpt(d['error'], 80)}\") because "
                        f"`{d['path']}` is a path from the project root. Stay at the root, or use absolute paths.",
                        [], from_tool_output=True)
    if k == SHELL_ESCAPE:
        jq = " (jq: `(.a == b) | not` for `.a != b`)" if d.get("jq") else ""
        return Rendered(T.GOTCHA, "The agent's shell tool adds a backslash before a `!` next to a space, even in "
                        f"quotes: `{d['written']}` ran as `{d['ran']}` (\"{excerpt(d['error'], 60)}\"). Keep `!` out "
                        f"of quoted arguments{jq} or use a script file.", [], from_tool_output=True)
    if k == REJECTED_FLAG:
        # The flag, not the one command that was given it (blind judges: a one-off command reads as
        # noise; the program refuses the flag whatever the arguments).
        sub = f" {d['words']}" if d.get("words") else ""
        return Rendered(T.GOTCHA, f"`{d['program']}{sub}` does not take `{d['flag']}`: given it here, it failed "
                        f"with \"{excerpt(d['error'], 80)}\".", [], from_tool_output=True)
    if k == TYPE_CLASH:
        # The type, not the one expression the compiler named (a different one each time).
        where = f" (declared in {_q(d['declared'])})" if d.get("declared") else ""
        return Rendered(T.GOTCHA, f"`{d['type']}`{where} is a type of its own here, not plain `{d['plain']}`: "
                        f"`{d['command']}` failed where one was written for the other "
                        f"(\"{excerpt(d['error'], 140)}\"); "
                        f"keep such values typed as `{d['type']}`, converting only where a `{d['plain']}` is required.",
                        files[:1], from_tool_output=True)
    if k == TOOL_ARGS:
        return Rendered(T.GOTCHA, lesson_text(d), [], from_tool_output=not d.get("declined"))
    if k == ASKED_TESTS:
        # The user's words are the evidence; the habit they show is what to act on, unasked.
        return Rendered(T.PREFERENCE, "Add tests with each code change here, without waiting to be asked: once code "
                        f"had changed without tests, the user asked for them (\"{excerpt(d['text'], 140)}\").", [])
    if k == REVIEWED_TESTS:
        # What the user checks is in their words; other sessions' words are added as it is said
        # (``lifecycle/freshness.as_of_now``).
        return Rendered(T.PREFERENCE, f"{REVIEWED_TESTS_LEAD}\"{excerpt(d['text'], 300)}\"", [])
    if k == PROJECT_FACT:
        if d.get("source") == "user":
            where = f" (about {_list(files, 3)})" if files else ""
            return Rendered(T.NOTE, f"The user stated{where}: \"{d['text']}\"", files[:4])
        # A fact a command's outcome showed: the sentence is built by project_facts from the
        # command and its output, already redacted; tool output stays data, so it is flagged.
        return Rendered(T.REQUIREMENT if d.get("required") else T.NOTE, str(d["text"]), files[:4],
                        from_tool_output=True)
    if k == COMMAND_FIX and d.get("program"):
        return Rendered(T.GOTCHA, f"`{d['program']}` is not found on the PATH here: run it as "
                        f"`{d['prefix']} {d['program']} …`.", [], from_tool_output=True)
    if k == COMMAND_FIX and d.get("past"):
        # A retry that only added a flag got past the error, whatever failed after it: the flag first.
        return Rendered(T.GOTCHA, f"`{d['run']}` on `{d['target']}` needs `{d['flag']}` here: without it, "
                        f"`{d['failed']}` failed with \"{excerpt(d['error'], 120)}\"; with it, the run got past "
                        "that.", [], from_tool_output=True)
    if k == COMMAND_FIX and d.get("flag"):
        instead = (f"; `{d['instead']}` worked in its place" if d.get("instead")
                   else ": leave it out, the run without it worked")
        return Rendered(T.GOTCHA, f"`{d['tool']}` does not take `{d['flag']}` (\"{excerpt(d['error'], 100)}\")"
                        f"{instead}.", [], from_tool_output=True)
    if k == COMMAND_FIX:
        return Rendered(T.GOTCHA, f"`{d['failed']}` fails here with \"{excerpt(d['error'], 120)}\"; "
                        f"`{d['worked']}` works.", [], from_tool_output=True)
    if k == ERROR_FIX:
        edit = f" ({d['edit']})" if d.get("edit") else ""
        return Rendered(T.ERROR_PATTERN, f"`{d['command']}` failed with \"{excerpt(d['error'], 140)}\"; "
                        f"editing {_q(d['file'])}{edit} made it pass.", [d["file"]], from_tool_output=True)
    if k == WRONG_PLACE:
        # No related files: the example found elsewhere may be moved or deleted later, and the
        # lesson about the wrong place stays true (the same key reinforces this text).
        gone = "does not exist" if d.get("missing") else "is the wrong place to look"
        path, found = str(d["path"]), str(d["found"])
        if found.endswith("/"):  # the folder was listed after the guess (``wrong_places._guess_listed``)
            return Rendered(T.GOTCHA, f"{_q(path)} does not exist: sessions guessed that name and had to list "
                            f"{_q(found)} to find what it holds.", [])
        near = posixpath.dirname(found)
        if d.get("family") and near:
            # The name was guessed as a folder where files carry it as a prefix (blind judges: that
            # it is "a file prefix rather than a package" was only implied by one example file).
            family = [str(f) for f in d["family"]]
            named = " and the files ".join(_q(f) for f in family) if len(family) > 1 else f"the files {_q(family[0])}"
            return Rendered(T.GOTCHA, f"{_q(path)} is no folder: the code under that name is in {named} of "
                            f"{_q(near + '/')}.", [])
        if near and near == posixpath.dirname(path) and "." not in posixpath.basename(path):
            # A folder guessed beside the one that holds it: the place is that folder, the file one
            # example of it (blind judges read "was in start.go" as sending every search there).
            return Rendered(T.GOTCHA, f"{_q(path)} {gone}: a session that looked there found nothing; what it "
                            f"looked for was in {_q(near + '/')} (`{found}`).", [])
        return Rendered(T.GOTCHA, f"{_q(path)} {gone}: a session that looked there found nothing; what it "
                        f"looked for was in {_q(found)}.", [])
    if k == CHECK_RULE:
        # Without the reason an accepted fix gave after its annotation: tried in two wordings, four blind
        # judges found it no better than this one (useful 7, 3, 3, 5 of 9 against 6 and 5): it helps
        # where the reason is the cause (t.Chdir), and hurts where its example is gone from the code.
        note = str(d.get("annotation") or "")
        fix = f"; where it is intended, the line is annotated `{note}{' <reason>' if note.endswith('//') else ''}`" \
            if note else ""
        rewrite = d.get("rewrite")
        if not note and isinstance(rewrite, list) and len(rewrite) == 2:
            # Fixed in code: how the flagged line was written instead is the fix an agent can copy.
            fix = f"; a fix here wrote `{excerpt(str(rewrite[0]), 60)}` as `{excerpt(str(rewrite[1]), 160)}`"
        return Rendered(T.ERROR_PATTERN, f"`{d['command']}` reports `{d['rule']}`: \"{excerpt(d['message'], 140)}\""
                        f"{fix}.", [], from_tool_output=True)
    if k == CHECK_GAP:
        # Not the error itself: it is the code's of that day (fixed since), and quoting it made blind
        # judges read the lesson as stale; the gap between the two checks is what stays true.
        # Where it failed (a test file, a package) is kept: it says what the weaker check skips.
        where = f" (in `{d['where']}`)" if d.get("where") else ""
        guard = f" what the {d['guard']} guards" if d.get("guard") else ""
        return Rendered(T.GOTCHA, f"`{d['passed']}` passing is not enough here: `{d['failed']}` also checks"
                        f"{guard}, and has failed{where} after `{d['passed']}` passed; run `{d['failed']}` before "
                        f"calling the work done.", [], from_tool_output=True)
    if k == HOOK_BLOCK:
        # Not the command that tripped it (a different one each time): the rule is the lesson.
        # A hook outside the project (the user's own settings) is named by whose it is, not its path.
        who = f"The project's hook {_q(files[0])}" if files else "The user's own hook"
        return Rendered(T.GOTCHA, f"{who} refuses shell commands that break this rule: \"{d['rule']}\"",
                        files[:1], from_tool_output=True)
    if k == RECIPE:
        verb = _recipe_verb(str(d.get("category") or "run"))
        where = _where(d)
        return Rendered(T.WORKFLOW_RECIPE, f"{verb} `{d['command']}`{' ' if where else ''}{where}.", [])
    if k == STATED_CAUSE:
        label = "Decision" if d.get("kind") == "decision" else "Root cause found"
        where = f" in {_list(files, 3)}" if files else ""
        return Rendered(T.DECISION if d.get("kind") == "decision" else T.GOTCHA,
                        f"{label}{where}: {d['text'].rstrip('.')}.", files[:4])
    if k == PARALLEL_CONFLICT and files:
        return Rendered(T.GOTCHA, f"{_q(files[0])} was edited by several parallel sub-agents at once; "
                        f"coordinate changes to it.", files[:1])
    if k == EXPLICIT:
        kind = d.get("type") if d.get("type") in {t.value for t in MemoryType} else T.NOTE
        return Rendered(str(kind), str(d["content"]), files)
    return None
