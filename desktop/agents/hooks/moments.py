"""What a hook says around one tool call: before it runs, after it worked, after it failed.

Before a call, the lessons whose trigger it matches (``desktop.memory.triggers.warn``, the core's
one implementation) and the gotchas of the file it reads or edits, each at most once a session,
in one or two lines each. After a failure, the lesson that knows this failure, at once; after a
check passed, the stronger check that failed after it passed before. Every
warning is recorded with its call, so the session's later failures decide whether it helped.

Claude Code and Codex read context before a call; Gemini CLI can only refuse one there, so it is
refused only when its shape failed exactly so before (the warning is its reason), and the rest
is said after the call, when Gemini does read context.
"""

from __future__ import annotations

import logging
import posixpath
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from desktop.agents.hooks import ledger
from desktop.agents.hooks.protocol import HookCall
from desktop.memory.observer.command_shape import parse
from desktop.memory.observer.tool_names import command_text
from desktop.memory.privacy.boundary import quotable_path, redact_then_cut
from desktop.memory.triggers.model import EDIT_TOOLS, WRITE_TRIGGERS, CallShape, shape_of
from desktop.memory.triggers.warn import LINE_CHARS, MAX_WARNINGS, Outcomes, Warning, warnings_for
from desktop.memory.types import Memory

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.hooks")

LOOK_OR_EDIT: Final = frozenset({"Read", "Edit", "Write", "MultiEdit", "NotebookEdit"})
#: Tools whose relative ``path`` Claude Code resolves from the shell's folder.
SEARCH_TOOLS: Final = frozenset({"Grep", "Glob", "LS"})
MAX_GOTCHAS: Final = 2


def call_shape(call: HookCall, root: Path) -> tuple[CallShape, list[str]]:
    """The call's shape for triggers, and the project files it reads or edits."""
    from desktop.agents.hooks.live import tool_files
    from desktop.memory.observer.tool_names import glob_folder, normalize_args

    tool, files = tool_files(call, root)
    args = normalize_args(tool, call.tool_input)
    paths = list(files)
    scope = args.get("path")
    scope = scope if isinstance(scope, str) else ""
    pattern = str(args.get("pattern") or "")
    if tool == "Glob":  # a pattern's literal folders narrow the search: ``cmd/cli/commands/*.go``
        scope = posixpath.join(scope, glob_folder(pattern))
    if scope:
        rel = _relative(scope, root)
        if rel and rel not in paths:
            paths.append(rel)
    if tool == "Glob" and pattern and not pattern.startswith("/"):  # what it looks for (names not on disk)
        whole = _relative(posixpath.join(str(args.get("path") or ""), pattern), root)
        if whole and whole not in paths:
            paths.append(whole)
    return shape_of(tool, args, paths, raw_tool=call.tool_name), files


def _relative(path: str, root: Path) -> str:
    p = Path(path)
    if not p.is_absolute():
        return path.removeprefix("./").rstrip("/") if path not in (".", "./") else ""
    try:
        return p.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return ""


def _evidence(m: Memory) -> str:
    """Where a lesson comes from, in a few words (counted, never estimated)."""
    if m.source in ("user_taught", "imported") or m.metadata.get("signal") == "user_rule":
        return "your rule"
    # A lesson that waited for a second session is created by that one: the sessions it counted
    # before it was stored are in its metadata.
    counted = m.metadata.get("sessions")
    sessions = max(len(m.provenance_session_ids), counted if isinstance(counted, int) else 0)
    return f"seen in {sessions} earlier session{'s' if sessions != 1 else ''}" if sessions else "learned here"


def warning_line(m: Memory) -> str:
    """One memory as one line the agent can cite."""
    text = redact_then_cut(" ".join(m.content.split()), LINE_CHARS, "…")
    return f"[Memory #{m.id}] ({_evidence(m)}) {text}"


def render_block(title: str, memories: list[Memory]) -> str:
    """The lines of a block (the same plain text for every agent: it is short and needs no markup)."""
    if not memories:
        return ""
    return "\n".join([f"Engram memory {title} (cite as [Memory #id] if it helps):",
                      *(f"- {warning_line(m)}" for m in memories)])


class ToolMoments:
    """The before/after/failed answers for one open project."""

    def __init__(self, project: Project, root: Path, memory: Any, threshold: float) -> None:
        """``memory`` is the event's StoreMemoryAccess; ``threshold`` the trust level's floor."""
        self.project = project
        self.root = root
        self.memory = memory
        self.threshold = threshold
        self.outcomes = Outcomes(project.db)

    def _warnings(self, shape: CallShape, exclude: set[int], output: str | None = None, *,
                  passed: bool = False, limit: int = MAX_WARNINGS) -> list[Warning]:
        return warnings_for(self.project.db.reads.conn(), self.project.memories, shape, self.root, exclude=exclude,
                            output=output, passed=passed, limit=limit)

    def _gotchas(self, files: list[str], exclude: set[int]) -> list[Memory]:
        if not files:
            return []
        from desktop.memory.trust import injectable

        found = self.memory.gotchas_for(files, exclude=exclude, limit=MAX_GOTCHAS, min_confidence=self.threshold)
        return [m for m in found if injectable(m)]

    def before(self, call: HookCall) -> str:
        """Lessons for the call about to run (Gemini: a refusal, only for an exact known failure)."""
        shape, files = call_shape(call, self.root)
        shown = set(ledger.shown_ids(self.project.db, call.session_id)) - self.outcomes.rearmed(call.session_id)
        warned = self._warnings(shape, shown)
        if call.agent == "gemini":
            warned = [w for w in warned if w.exact][:1]
            return self._say(call, "before_tool", warned, [], "before this call (refused: it failed this way before)")
        gotchas = self._gotchas(files, shown | {w.memory.id for w in warned}) if shape.tool in LOOK_OR_EDIT else []
        said = self._say(call, "before_tool", warned, gotchas, "for this tool call")
        stray = self._stray(call, shape)
        guess = "" if warned else self._guess(call, shape)
        return "\n".join(t for t in (stray, said, guess) if t)

    def _guess(self, call: HookCall, shape: CallShape) -> str:
        """A look at something not on disk where an earlier session's look missed too (not yet a lesson)."""
        from desktop.memory.lifecycle.folder_listing import looked_for
        from desktop.memory.triggers.guesses import guess_note

        return guess_note(self.project.db.reads.conn(), shape, self.root, looked_for(call.tool_input))

    def _stray(self, call: HookCall, shape: CallShape) -> str:
        """The shell's folder, when a relative path of this command (or of a search or listing,
        which resolves from the same folder) will not resolve from it."""
        from desktop.agents.hooks.shell_folder import (
            PERSISTENT_SHELL,
            shell_folder,
            stray_paths,
            stray_tool_paths,
            stray_warning,
        )

        if call.agent not in PERSISTENT_SHELL:
            return ""
        # A read-only shell command (``cat x``, ``grep -r y x/``) is shaped as a read or search:
        # its words still resolve from the shell's folder.
        typed = call.tool_input.get("command")
        command = shape.command or (parse(command_text(typed)) if isinstance(typed, str) else None)
        if command is None and shape.tool not in SEARCH_TOOLS:
            return ""
        folder = shell_folder(self.project.db, call.session_id, self.root, call.cwd, call.transcript_path)
        if not folder:
            return ""
        paths = stray_paths(command, folder, self.root) if command is not None else \
            stray_tool_paths(dict(call.tool_input), folder, self.root)
        return stray_warning(folder, paths) if paths else ""

    def _follow_folder(self, call: HookCall, shape: CallShape, output: str) -> None:
        """A ``cd`` in a command moves the session's shell, and Claude Code may move it back (it
        says so in the call's output): remember where it is now."""
        from desktop.agents.hooks.shell_folder import (
            PERSISTENT_SHELL,
            moved_to,
            remember_folder,
            reset_to,
            shell_folder,
        )

        if call.agent not in PERSISTENT_SHELL or shape.command is None:
            return
        folder = shell_folder(self.project.db, call.session_id, self.root, call.cwd, call.transcript_path)
        new = reset_to(output, self.root)
        if new is None:
            new = moved_to(shape.command, folder, self.root)
        if new is not None and new != folder:
            remember_folder(self.project.db, call.session_id, new).result(5)

    def after(self, call: HookCall, *, failed: bool) -> str:
        """After a call: a failure's known lesson at once; what Gemini could not hear before."""
        from desktop.agents.hooks.live import output_of

        shape, files = call_shape(call, self.root)
        output = output_of(call)[0]
        self._follow_folder(call, shape, output)
        if not failed and shape.command is not None:
            from desktop.memory.triggers.untested import failed_unseen

            failed = failed_unseen(call.tool_input.get("command"), output)
        if failed:
            self._mark_repeated(call, shape, output)
        # Most calls succeed and match no "passing is not enough" lesson: look that up first, so the
        # hot path (Claude Code and Codex after a successful call) reads nothing else.
        gaps = [] if failed else self._warnings(shape, set(), output, passed=True, limit=8)
        untested = "" if failed else self._untested_after(call, shape, files, output)
        if not failed and not gaps and not untested and call.agent != "gemini":
            return ""
        shown = set(ledger.shown_ids(self.project.db, call.session_id)) - self.outcomes.rearmed(call.session_id)
        if failed:  # an edit that failed wrote nothing: what it would have written is no moment
            known = [w for w in self._warnings(shape, shown, output) if w.trigger.kind not in WRITE_TRIGGERS]
            said = self._say(call, "tool_failed", known, [], "about this failure")
            # Gemini CLI reads nothing before a call: a guess that missed hears, right after, that it missed before
            guess = self._guess(call, shape) if call.agent == "gemini" and not known else ""
            return "\n".join(t for t in (said, guess) if t)
        passed = _one_gap(gaps, shown)
        habit = self._tests_habit(shown | {w.memory.id for w in passed}) if untested else []
        if call.agent != "gemini":
            parts = [self._say(call, "after_tool", passed, [], "now that this check passed"),
                     self._say(call, "after_tool", habit, [],
                               f"now that this check passed, with `{quotable_path(untested)}` changed and no test "
                               "since")]
            return "\n".join(t for t in parts if t)
        warned = passed + habit + self._warnings(shape, shown | {w.memory.id for w in passed + habit}, output)
        gotchas = self._gotchas(files, shown | {w.memory.id for w in warned}) if shape.tool in LOOK_OR_EDIT else []
        said = self._say(call, "after_tool", warned, gotchas, "for the call just made")
        guess = "" if warned else self._guess(call, shape)  # Gemini CLI reads nothing before a call
        return "\n".join(t for t in (said, guess) if t)

    def _untested_after(self, call: HookCall, shape: CallShape, files: list[str], output: str) -> str:
        """After a call that succeeded: an edit updates the session's untested change; a check that
        passed returns that change ('' when there is none, or the call was no check)."""
        from desktop.memory.triggers.untested import check_passed, note_edit, untested_change

        if shape.tool in EDIT_TOOLS:
            wrote = note_edit(self.project.db, call.session_id, files)
            if wrote is not None:
                wrote.result(5)  # the session's next check must find it
            return ""
        typed = call.tool_input.get("command")
        if shape.command is None or typed is None:
            return ""
        untested = untested_change(self.project.db.reads.conn(), call.session_id)  # mostly '': nothing to parse
        return untested if untested and check_passed(command_text(typed), output) else ""

    def _tests_habit(self, exclude: set[int]) -> list[Warning]:
        """The user's habit of asking for tests, when this session has not heard it yet. It is a
        warning like a lesson's: the user asking for tests later in the session is its repeat."""
        from desktop.memory.triggers.untested import HABIT_TRIGGER, tests_habit

        found = tests_habit(self.project.db.reads.conn(), self.project.memories, self.threshold, exclude)
        return [Warning(m, HABIT_TRIGGER) for m in found]

    def _mark_repeated(self, call: HookCall, shape: CallShape, output: str) -> None:
        """A failure matching a lesson this session was warned about: the warning did not help."""
        marked = self.outcomes.failed_again(self.project.memories, shape, self.root, output, call.session_id,
                                            call.tool_use_id)
        if marked is not None:
            marked.result(5)

    def _say(self, call: HookCall, event: str, warned: list[Warning], gotchas: list[Memory], title: str) -> str:
        from desktop.memory.lifecycle.folder_listing import looked_for
        from desktop.memory.lifecycle.freshness import as_of_now

        memories = as_of_now([w.memory for w in warned], self.root, looked_for(call.tool_input)) + gotchas
        # (gotchas came through the door, already as of now)
        warned = [w for w in warned if any(m.id == w.memory.id for m in memories)]
        if not memories:
            return ""
        summary = _call_summary(call, self.root)
        ledger.record_shown(self.project.db, call.session_id, call.agent, event, [m.id for m in memories],
                            summary).result(5)
        if warned:  # waited for (ms): the call's own failure, next, must find the warning recorded
            self.outcomes.warned(call.session_id, call.agent, [w.memory.id for w in warned], call.tool_use_id,
                                 summary).result(5)
        return render_block(title, memories)


def _one_gap(gaps: list[Warning], shown: set[int]) -> list[Warning]:
    """"This check passing is not enough": one stronger check, the best evidenced, once a session;
    after a second lesson of that kind, the same advice again is noise (judged so)."""
    if any(w.memory.id in shown for w in gaps):
        return []
    return sorted(gaps, key=lambda w: (-len(w.memory.provenance_session_ids), -w.memory.confidence))[:1]


def _call_summary(call: HookCall, root: Path) -> str:
    """The call in a few redacted words (the ledger's detail column), the project's own paths
    relative to it (the Agents tab shows the first 80 characters)."""
    args = call.tool_input
    what = args.get("command") or args.get("file_path") or args.get("path") or args.get("pattern") or ""
    text = " ".join(str(what).split()).replace(f"{root}/", "")
    return redact_then_cut(f"{call.tool_name} {text}", 200)
