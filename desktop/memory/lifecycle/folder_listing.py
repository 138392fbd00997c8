"""What a folder holds now, in one short line (issue 25).

A wrong-place lesson about a path that does not exist ("`x/helpers.go` does not exist") is said when
an agent is about to look for something not on disk there again. What it needs then is what the
folder does hold, read from disk at that moment, never as it was when the lesson was learned: the
lesson stays true while files come and go. The line is short: files that share a name prefix are one
pattern (``manual_commit_*.go``, 9 files), those nearest the guessed name first, and test files beside
code are counted, not named (a guessed helper is rarely a test). Hidden files are left out unless the
guess was a hidden name too, and they are near it.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.text.file_kinds import is_test_file
from desktop.memory.text.lazy_re import lazy

MAX_ITEMS: Final = 6
MAX_ENTRIES: Final = 400
MAX_NAME: Final = 60
#: A group of this many files sharing a name prefix is said as one pattern.
GROUP_AT: Final = 3
_SPLIT: Final = lazy(r"[_\-.]")
_WILD: Final = lazy(r"[*?\[\]{}]")
#: Characters a name must share with the guess to be near it (``s`` of ``strategy.go`` and
#: ``session.go`` is no likeness).
MIN_NEAR: Final = 4
_SAFE: Final = lazy(r"[`\s]")


def existing_folder(root: Path, path: str) -> str | None:
    """The deepest folder of ``path`` (project-relative) that exists under ``root``, '' for the root
    itself; None when the path leaves the project (``..``, an absolute path, a link outside)."""
    if path.startswith(("/", "~")) or ".." in path.split("/"):
        return None
    parts = [p for p in path.strip("/").split("/") if p and p != "."]
    try:
        top = root.resolve()
        while True:
            here = (root.joinpath(*parts)).resolve() if parts else top
            if here.is_dir():
                return "/".join(parts) if here.is_relative_to(top) else None
            if not parts:
                return None
            parts.pop()
    except (OSError, ValueError):
        return None


def _common_start(names: list[str]) -> str:
    """The characters every name starts with (names, not paths: ``a_b`` and ``a_c`` share ``a_``)."""
    if not names:
        return ""
    low, high = min(names), max(names)  # the two most different names bound every other
    n = 0
    while n < len(low) and low[n] == high[n]:
        n += 1
    return low[:n]


def _items(files: list[str]) -> list[tuple[str, int]]:
    """(shown text, how many files it stands for): a pattern for a group sharing a name prefix."""
    groups: dict[tuple[str, str], list[str]] = {}
    for name in files:
        stem, dot, ext = name.rpartition(".") if "." in name[1:] else (name, "", "")
        first = _SPLIT.split(stem, maxsplit=1)[0]
        groups.setdefault((first if first != stem else name, dot + ext), []).append(name)
    out: list[tuple[str, int]] = []
    for (_, ext), names in groups.items():
        # The file named as the prefix itself (``manual_commit.go`` beside ``manual_commit_*.go``)
        # is shown on its own.
        common = _common_start(names)
        alone = [n for n in names if len(names) > GROUP_AT and n == common.rstrip("_-.") + ext]
        rest = [n for n in names if n not in alone]
        common = _common_start(rest)
        cut = max(common.rfind(c) for c in "_-.") + 1  # the shared prefix up to a separator
        if len(rest) >= GROUP_AT and cut > 1:
            out += [(n, 1) for n in alone] + [(f"{common[:cut]}*{ext}", len(rest))]
        else:
            out += [(n, 1) for n in names]
    return out


def _nearness(text: str, guessed: str) -> int:
    """How many leading characters a shown name shares with the guessed one."""
    n = 0
    for a, b in zip(text, guessed, strict=False):
        if a != b:
            break
        n += 1
    return n


def _shown(name: str, guess: str) -> bool:
    """Hidden entries are left out, except those near a hidden name the agent looked for: a guessed
    ``.golangci.yml`` needs to hear of ``.golangci.yaml`` (never of ``.git``)."""
    if not name.startswith("."):
        return True
    return name != ".git" and guess.startswith(".") and _nearness(name, guess) >= MIN_NEAR


def looked_for(args: Mapping[str, object]) -> str:
    """The name a read, search or listing call looks for (its file, folder or pattern's last part,
    wildcards dropped): the listing shows the names nearest it first."""
    for key in ("file_path", "path", "pattern", "dir_path", "absolute_path"):
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return _WILD.sub("", posixpath.basename(value.rstrip("/")))
    return ""


def listing(root: Path, folder: str, guessed: str = "") -> str:
    """"`folder/` holds now: …" for a folder under ``root`` ('' when it is not one or is empty).

    ``guessed`` is the name an agent looked for there: the names nearest it come first.
    """
    where = existing_folder(root, folder)
    if where is None:
        return ""
    guess = _SAFE.sub("", guessed)
    try:
        with os.scandir(root / where if where else root) as it:
            entries = [e for _, e in zip(range(MAX_ENTRIES), it, strict=False) if _shown(e.name, guess)]
        kinds = [(e.name, e.is_dir()) for e in entries]
    except OSError:
        return ""
    # A name is the repository's text: one quoted token, no backtick or line break, secrets masked.
    names = [redact_then_cut(_SAFE.sub("", n), MAX_NAME, "…") for n, _ in kinds]
    folders = sorted(f"{n}/" for n, (_, d) in zip(names, kinds, strict=True) if d and n)
    files = sorted(n for n, (_, d) in zip(names, kinds, strict=True) if not d and n)
    tests = [n for n in files if is_test_file(f"{where}/{n}")]
    if len(tests) == len(files):
        tests = []  # a folder of tests (``tests/``): its helpers are test files too, named like the rest
    items = _items([n for n in files if n not in set(tests)])
    # Names that share a real part of the guess first, then the biggest groups (they say the most
    # about how the folder names things), then by name.
    items.sort(key=lambda it: (-max(0, _nearness(it[0], guess) - MIN_NEAR + 1), -it[1], it[0]))
    shown = [f"`{t}` ({n} files)" if n > 1 else f"`{t}`" for t, n in items[:MAX_ITEMS]]
    shown += [f"`{f}`" for f in folders[:max(0, MAX_ITEMS - len(shown))]]
    rest = sum(n for _, n in items[MAX_ITEMS:]) + max(0, len(folders) - max(0, MAX_ITEMS - len(items)))
    if rest:
        shown.append(f"{rest} more")
    if tests:
        shown.append(f"{len(tests)} test file{'s' if len(tests) > 1 else ''}")
    if not shown:
        return ""
    return f"`{where + '/' if where else './'}` holds now: {', '.join(shown)}."
