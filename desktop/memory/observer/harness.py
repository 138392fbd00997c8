"""What never becomes a memory: agent-harness protocol errors, agent mutterings, outside paths.

The agent harness (Claude Code, Codex, Gemini CLI) reports its own bookkeeping
failures as tool errors: an edit before a read, a stale read, a string the edit
tool could not find, a user declining a tool, an output over the token limit.
They say nothing about the project, and their "resolution" is whatever the agent
did next. ``is_harness_error`` recognises them per agent (a registry, so a new
harness message is one line here) and the detectors drop them before they count.

``is_noise`` is the last check on every memory a session would store (statistics as
sentences, outside paths, tool-type sequences), whichever path produced it.

``shorten_command`` is the one place a command becomes memory text: secrets are
redacted first, the ``cd <project> &&`` prefix goes, and a long command is cut at
a word boundary (never mid-token) keeping its head, the part that matters.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from desktop.memory.observer.signal_kinds import COMMAND_LESSONS
from desktop.memory.privacy.secrets import redact
from desktop.memory.types import MemorySource

if TYPE_CHECKING:
    from desktop.memory.store.memory_ops import NewMemory

#: Protocol errors per agent: the harness's words, matched case-insensitively at any position
#: of the first lines of the tool output.
HARNESS_ERRORS: Final[dict[str, tuple[str, ...]]] = {
    "claude-code": (
        "File has not been read yet", "File has been modified since read", "String to replace not found",
        "No changes to make: old_string and new_string are exactly the same",
        "Found \\d+ matches of the string to replace", "user doesn't want to proceed",
        "tool use was rejected", "The user rejected", "Sibling tool call errored",
        "Request interrupted by user", "exceeds maximum allowed tokens", "File does not exist",
        "File content \\(\\d+ tokens\\) exceeds", "EISDIR: illegal operation on a directory",
        "was blocked\\. For security, Claude Code may only", "InputValidationError",
        "Operation blocked by hook", "blocked by hook", "Permission to use \\w+ has been denied",
        "Claude requested permissions", "This command requires approval", "<tool_use_error>",
        "Cancelled: parallel tool call", "old_string not found",
    ),
    "codex": (
        "patch rejected", "apply_patch verification failed", "Failed to find expected lines",
        "exec command rejected by user", "sandbox denied", "aborted by user", "approval required",
        "invalid patch", "Failed to apply patch",
    ),
    "gemini-cli": (
        "Failed to edit, could not find the string to replace", "Failed to edit, 0 occurrences found",
        "Failed to edit, expected \\d+ occurrences", "File path must be absolute",
        "User did not allow tool call", "Tool call cancelled", "No changes to apply",
        "Path must be within one of the workspace directories", "File not found\\.",
        "Error: Command execution cancelled",
    ),
    "engram": ("The user did not allow this \\w+ call",),
}
_COMBINED: Final = re.compile("|".join(f"(?:{p})" for ps in HARNESS_ERRORS.values() for p in ps), re.I)


def is_harness_error(output: str, agent: str = "") -> bool:
    """True when a tool error is the agent harness's own protocol error, not the project's.

    Every output is checked against every agent's registry (``agent`` is accepted for the
    callers' sake): a terminal log's agent is only guessed, and the messages are distinctive
    enough not to collide. One search over the union, on every tool error.
    """
    return bool(_COMBINED.search(output[:600]))


_CD_PREFIX: Final = re.compile(r"^\s*cd\s+(\"[^\"]+\"|'[^']+'|\S+)\s*&&\s*")
_TRAILING_NOISE: Final = re.compile(r"\s*(?:2>&1|\|\s*(?:head|tail|less|cat)\b[^|]*)\s*$")


def strip_project_cd(command: str, cwd: str) -> tuple[str, str]:
    """Drop a leading ``cd DIR &&``; return the command and DIR relative to the project ('' = root)."""
    m = _CD_PREFIX.match(command)
    if not m:
        return command.strip(), ""
    target = m.group(1).strip("\"'").rstrip("/")
    rest = command[m.end():].strip()
    root = cwd.rstrip("/")
    if root and (target == root or target == "."):
        return rest, ""
    if root and target.startswith(root + "/"):
        return rest, target[len(root) + 1:]
    if target.startswith("/") or target.startswith("~") or target.startswith(".."):
        return command.strip(), "?"  # another folder: keep the cd, it is part of the lesson
    return rest, target


def shorten_command(command: str, limit: int = 120) -> str:
    """A command fit for memory text: secrets redacted, pager pipes dropped, cut at a word boundary."""
    text, _ = redact(" ".join(command.split()))
    prev = None
    while prev != text:
        prev, text = text, _TRAILING_NOISE.sub("", text)
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit // 3:
        cut = cut[:space]
    # An unbalanced quote would read as a cut mid-string: stop before the word that opened it.
    for q in ("\"", "'", "`"):
        if cut.count(q) % 2:
            cut = cut[:cut.rfind(q)].rstrip()
    return cut.rstrip(" &|;") + " …"


def outside_project(path: str) -> bool:
    """True for absolute paths (the importers make project files relative), home and temp paths."""
    return path.startswith(("/", "~", "$HOME", "..")) or bool(re.match(r"^[A-Za-z]:[\\/]", path))


# "read → grep → read": the agent's tool types, not knowledge (some synthesis paths render them).
_TOOL_SEQUENCE: Final = re.compile(r"\b(?:read|grep|glob|edit|write|bash|other|todowrite|task)\s*(?:→|->|>)\s*"
                                   r"(?:read|grep|glob|edit|write|bash|other|todowrite|task)\b", re.I)

#: Statistics rendered as sentences ("`a` and `b` are usually worked on together", "sessions in
#: `x` need `y`"): the observer tables already hold them for prefetch; as memory text a reader
#: found none of 42 useful before issue 13 (bench/memory_quality, labels.tsv), so the template
#: synthesis's versions are not stored. A model's synthesis names other signals and is kept.
STATISTICS_AS_TEXT: Final = frozenset({"co_access", "prefetch_pattern", "weekly_synthesis", "workflow_recipe"})


#: A home or temporary folder in a command: the shell of one machine at one moment.
_MACHINE_PATH: Final = re.compile(r"(?<![\w/.-])(?:~(?:/|$)|\$\{?HOME\b|\$\{?TMPDIR\b|/Users/|/home/|/tmp/|"
                                  r"/private/tmp/|/var/folders/|[A-Za-z]:\\Users\\)")
#: The commands a lesson's text gives (backticked); its quoted error may name any path.
_COMMAND_SPAN: Final = re.compile(r"`([^`\n]+)`")


def is_noise(item: NewMemory) -> bool:
    """Memory text that must never be stored, whichever path produced it (issue 13, item 2)."""
    if item.source == MemorySource.OBSERVER_INFERRED.value and item.metadata.get("signal") in STATISTICS_AS_TEXT:
        return True
    if any(outside_project(f) for f in item.related_files):
        return True  # home folders, /tmp logs, another checkout: not this project's knowledge
    if (item.source == MemorySource.OBSERVER_INFERRED.value and item.metadata.get("signal") in COMMAND_LESSONS
            and any(_MACHINE_PATH.search(m.group(1)) for m in _COMMAND_SPAN.finditer(item.content))):
        # "run it as `source $HOME/.local/bin/env && uvx …`": how one machine's shell was set up just
        # after an install (four blind labels, two rounds: noise, "a home-folder path outside the project").
        return True
    return bool(_TOOL_SEQUENCE.search(item.content))
