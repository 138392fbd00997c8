"""Evaluation tooling: what a BookMinder session start knew, rebuilt from the replay itself.

The terminal copies carry no repository, so the session-start context prefetch
now uses (``desktop.memory.observer.start_context``) is reconstructed from what
the earlier sessions showed, and only from them:

* **the prompt as the session really started**: the typed prompt (``/hi`` rather than
  the terminal's ``/hi is running…``) plus the command's expansion, as the files
  Claude Code attached with it (``⎿ Read docs/apple_books.md``, the ``@`` lines of
  ``.claude/commands/hi.md``). A Gemini CLI prompt that ``@``-attaches a command file
  gets the expansion last shown for that command;
* **git working state**: files edited or created since the last successful
  ``git commit`` an agent ran are uncommitted; each such commit takes them along, and
  the files of the last five commits are the recently committed ones. Commits and
  edits the user made by hand are invisible here (a pessimistic reconstruction);
* **handoff/progress notes**: the files matching the product's own patterns
  (``TODO.md``, ``docs/*progress*`` …) that a session has touched so far. Their text is
  not in the copies, so the files they name stay unknown (``handoff_named`` is empty).

The same set of files seen so far answers "does this file exist" for names in a prompt.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Final

from bench.bookminder_parser import ParsedSession
from desktop.memory.observer.events import ToolCall, ToolResult, UserMessage
from desktop.memory.observer.start_context import COMMAND_REF, DOCS_HANDOFF, HANDOFF_NAME, StartContext

RECENT_COMMITS: Final = 5
_RUNNING: Final = re.compile(r"^(/[\w:.-]+) is running…\s*")
_COMMAND_FILE: Final = re.compile(r"@?\.claude/commands/([\w:.-]+)\.md")
_EDIT_TOOLS: Final = {"Edit", "MultiEdit", "Write"}


def typed_prompt(text: str) -> str:
    """The prompt as typed: ``/hi is running… args`` was ``/hi args`` (harness lines ``⎿ …`` cut off)."""
    return _RUNNING.sub(lambda m: m.group(1) + " ", text.split("⎿")[0]).strip()


def _is_handoff(path: str) -> bool:
    head, _, name = path.rpartition("/")
    if not head:
        return bool(HANDOFF_NAME.match(name))
    return head == "docs" and name.lower().endswith((".md", ".txt")) and bool(DOCS_HANDOFF.search(name))


class ReplayWorkspace:
    """The project's state between replayed sessions (files, uncommitted edits, commits, commands)."""

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.dirty: OrderedDict[str, None] = OrderedDict()
        self.commits: list[list[str]] = []
        self.expansions: dict[str, list[str]] = {}

    def exists(self, path: str) -> bool:
        """A file some earlier session read, edited or created."""
        return path in self.files

    def context_for(self, s: ParsedSession) -> StartContext:
        """What session ``s`` knew when it started (before any of its own events)."""
        raw = next((e.text for e in s.events if isinstance(e, UserMessage) and e.text.strip()), "")
        attached = next((files for text, files in s.attachments if text == raw), [])
        prompt = typed_prompt(raw)
        names = [f"@{f}" for f in attached]
        lead = _RUNNING.match(raw) or re.match(r"^/([\w:.-]+)", prompt)
        if lead and not attached:  # the copy did not show this run's attachments: the command's last ones
            names = [f"@{f}" for f in self.expansions.get(lead.group(1).lstrip("/"), [])]
        cmd = _COMMAND_FILE.search(prompt)
        if cmd and not attached:
            names = [f"@{f}" for f in self.expansions.get(cmd.group(1), [])]
        for ref in COMMAND_REF.findall(prompt[1:] if prompt.startswith("/") else prompt):
            path = f".claude/commands/{ref}.md"
            if path in self.files:  # "Execute /hi": the agent reads the command's file and runs it
                names += [path, *(f"@{f}" for f in self.expansions.get(ref, []))]
        recent = [p for files in reversed(self.commits[-RECENT_COMMITS:]) for p in files]
        return StartContext(prompt=prompt, expansion=" ".join(names), uncommitted=tuple(self.dirty),
                            committed=tuple(dict.fromkeys(recent)),
                            handoff=tuple(sorted(p for p in self.files if _is_handoff(p))))

    def learn(self, s: ParsedSession) -> None:
        """Apply session ``s``: files it touched, its edits, its successful commits, its command expansions."""
        for text, files in s.attachments:
            m = _RUNNING.match(text)
            if m and files:
                self.expansions[m.group(1).lstrip("/")] = list(files)
        commands: dict[str, str] = {}
        for e in s.events:
            if isinstance(e, ToolCall):
                paths = [p for p in e.file_paths if "*" not in p and not p.startswith("/") and p not in ("", ".")]
                self.files.update(paths)
                if e.tool in _EDIT_TOOLS:
                    for p in paths:
                        self.dirty[p] = None
                command = str(e.args.get("command") or "")
                if re.search(r"\bgit\s+commit\b", command):
                    commands[e.call_id] = command
            elif isinstance(e, ToolResult) and e.call_id in commands and not e.is_error and self.dirty:
                self.commits.append(list(self.dirty))
                self.dirty.clear()
