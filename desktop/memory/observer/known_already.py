"""What the agent is already told: a lesson that repeats the project's own agent instructions,
or a memory that repeats what the user has just typed.

Claude Code reads CLAUDE.md, Codex AGENTS.md, Gemini CLI GEMINI.md (and Cursor its rules) into
every session. A recipe learned from sessions that runs exactly a command those files already
give tells the next agent nothing it was not told; stored, it only crowds out what it was not
told. So a learned recipe whose command (each step of it) the instructions already contain is
not stored. Nor is a recipe that is only the toolchain's default, run from the project root
(``go build ./...``, ``pytest -xvs``): any agent runs it unprompted. Blind judges labelled all four
such recipes of two projects weak, in every round ("what any agent would try first"), while
the same tools with the project's options, setup or folder (``pytest --spec``,
``source .venv/bin/activate && mypy .``) were useful. A person's own rule is always kept (they
said it; they may want it said at the moment it matters).

A check gap ("`make test` passing is not enough: `make test-all` also checks …") is kept: it is
what happened here, and search gives it. But it is not said after the weaker check passed when the
instructions already give the stronger check: the agent read that command at the start of the
session, and hearing it again after every passing run is noise (both blind judges of pair 1: the
project's CLAUDE.md already lists it, and agents mostly ran it anyway).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from desktop.memory.observer.signal_kinds import CHECK_GAP
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.types import MemorySource, MemoryType

#: The instruction files agents load by themselves, relative to the project root.
INSTRUCTION_FILES: Final = ("CLAUDE.md", "AGENTS.md", "GEMINI.md", ".cursorrules", ".claude/CLAUDE.md",
                            ".github/copilot-instructions.md", "CONVENTIONS.md")
MAX_BYTES: Final = 256 * 1024
_SPAN: Final = re.compile(r"`([^`\n]{2,200})`")
_STEPS: Final = re.compile(r"\s*(?:&&|\|\||;)\s*")
#: A learned recipe's text when it is one command run from the project root, nothing set (``templates``).
_ROOT_RECIPE: Final = re.compile(r"[^`]* with `([^`]+)` from the project root\.")
#: A recipe's placeholders for one run's text (``--title …``, ``-f body=…``): not part of what is told.
_PLACEHOLDER_OPT: Final = re.compile(r"\s(?:-{1,2}[\w-]+(?:\s|=)|[\w-]+=)…(?=\s|$)")
_SLOT: Final = re.compile(r"<(?:number|id)>")  # re.escape leaves < and > as they are


def instructions(root: Path) -> str:
    """The text of the project's agent instruction files, whitespace collapsed ('' when none)."""
    parts: list[str] = []
    for name in INSTRUCTION_FILES:
        path = root / name
        try:
            if path.is_file():
                with path.open("rb") as f:  # a hostile repository's file may be any size: read the bound only
                    parts.append(f.read(MAX_BYTES).decode("utf-8", "replace"))
        except OSError:
            continue
    return " ".join(" ".join(parts).split())


def instructions_seen(root: Path | None, cwd: str | None) -> str:
    """The instruction files an agent working in ``cwd`` loaded: those of ``cwd`` and of each folder
    above it up to the project ``root`` (agents read them upwards), and the root's own.

    A session's recorded folder may be a subfolder, or gone (a transcript from another machine):
    the project's root files still count, as the agent read them."""
    folders: list[Path] = []
    if cwd:
        here = Path(cwd)
        if here.is_dir():
            for folder in (here, *here.parents):
                folders.append(folder)
                if root is None or folder == root:
                    break
            if root is not None and root not in folders:  # cwd was outside the project
                folders = folders[:1]
    if root is not None:
        folders.append(root)
    return " ".join(filter(None, (instructions(f) for f in dict.fromkeys(folders))))


def already_told(item: NewMemory, told: str) -> bool:
    """True when a learned recipe's command is already in the agent's instructions."""
    if not told or item.type != MemoryType.WORKFLOW_RECIPE.value:
        return False
    if item.source != MemorySource.OBSERVER_INFERRED.value:
        return False
    commands = [" ".join(m.group(1).split()) for m in _SPAN.finditer(item.content)]
    return bool(commands) and all(_told_command(c, told) for c in commands)


def runs_unprompted(item: NewMemory) -> bool:
    """True when a learned recipe is one toolchain default run from the project root, nothing set:
    what any agent runs without being told (``command_kinds.toolchain_default``)."""
    if item.type != MemoryType.WORKFLOW_RECIPE.value or item.source != MemorySource.OBSERVER_INFERRED.value:
        return False
    return unprompted_recipe(item.content)


def unprompted_recipe(text: str) -> bool:
    """True when a recipe's text (``templates``) runs one toolchain default from the project root."""
    # Only promotion asks this: the prompt hook, which imports this module for ``named_in``, does not
    # pay for the command classifier's patterns (6-10 ms at import).
    from desktop.memory.observer.command_kinds import toolchain_default

    m = _ROOT_RECIPE.fullmatch(text)
    return m is not None and toolchain_default(m.group(1))


def stronger_check_told(signal_key: str, told: str) -> bool:
    """True when ``signal_key`` is a check gap's (``check_gap:A>B``) and its stronger check ``B``
    (``contradictions.advised``) is a command the instructions ``told`` already give."""
    from desktop.memory.observer.contradictions import advised  # the store's imports: only a matched gap pays

    stronger = advised(signal_key) if signal_key.startswith(f"{CHECK_GAP}:") else ""
    return bool(told) and bool(stronger) and _told_command(stronger, told)


def _told_command(command: str, told: str) -> bool:
    """Whether each step of ``command`` (``a && b``) appears in ``told`` as a whole command: the
    instructions may give the steps apart ("activate the venv: …", "type-check: …"), and
    ``make test`` is not told by ``make test:ci``."""
    steps = [" ".join(_PLACEHOLDER_OPT.sub("", p).split()) for p in _STEPS.split(command)]
    steps = [p for p in steps if p]
    return bool(steps) and all(re.search(rf"(?<![\w:./-]){_pattern(p)}(?![\w:./-])", told) for p in steps)


def _pattern(step: str) -> str:
    """A step as a pattern: a recipe's ``<number>`` / ``<id>`` stands for any value the text gives."""
    return _SLOT.sub(r"[^\\s/]+", re.escape(step))


def named_in(content: str, text: str) -> bool:
    """True when ``text`` already holds every name ``content`` gives in code (the repository's
    ``owner/name`` in a prompt linking its pull request): saying it there repeats what was typed."""
    named = [m.group(1).strip().lower() for m in _SPAN.finditer(content)]
    lowered = text.lower()
    return bool(named) and all(n in lowered for n in named)
