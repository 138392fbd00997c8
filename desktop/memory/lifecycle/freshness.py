"""Is a memory still true of the code, at the moment it is about to be said? (issue 25)

The idle staleness check (``staleness.check_staleness``) lowers confidence and flags memories
for review, but it runs when the app is idle, and a hook may say a memory in between. So every
door that hands memories to an agent passes them through :func:`as_of_now` first: a memory
anchored to code that changed since it was learned is said with that fact in front of it, and
one whose code is gone is not said at all. A memory without anchors that names project files
(```cmd/x/start.go```) is checked too: a file it names that no longer exists is said as gone, and
a "what it looked for was in X" example whose X is gone is left out of the lesson (the wrong place
stays wrong; the example went stale). Files are hashed once per (size, mtime), so a warm service
re-reads a file only after it changed. A lesson about a path that does not exist is said with
what its folder holds now (``folder_listing``): the files there may have changed since. The user's
review of tests is said with the words of it that came back, and not at all before any did
(``triggers/untested.in_users_words``).
"""

from __future__ import annotations

import posixpath
import threading
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Final

from desktop.memory.observer.signal_kinds import REVIEWED_TESTS, WRONG_PLACE
from desktop.memory.text.lazy_re import lazy
from desktop.memory.types import Memory

MAX_FILES_NOTED: Final = 2
#: A code span that is a project file path alone: a folder, a name and an extension, no spaces.
_NAMED_FILE: Final = lazy(r"`((?:[\w@.+-]+/)+[\w@+-][\w@.+-]*\.[A-Za-z]\w{0,7})`")
_cache: dict[tuple[str, int, int], bytes] = {}
_lock = threading.Lock()


def _read(path: Path) -> bytes | None:
    try:
        st = path.stat()
    except OSError:
        return None
    key = (str(path), st.st_size, st.st_mtime_ns)
    with _lock:
        data = _cache.get(key)
    if data is None:
        try:
            data = path.read_bytes()
        except OSError:
            return None
        with _lock:
            if len(_cache) > 512:
                _cache.clear()
            _cache[key] = data
    return data


def changed_anchors(memory: Memory, root: Path) -> tuple[list[str], list[str]]:
    """(files whose anchored code changed, files that are gone) for one memory."""
    # Here: most memories a tool call is warned with have no anchors, and a hook need not load staleness.
    from desktop.memory.lifecycle.staleness import anchor_hash, split_anchor

    changed: list[str] = []
    gone: list[str] = []
    for key, digest in memory.code_anchors.items():
        path, rng = split_anchor(key)
        data = _read(root / path)
        if data is None:
            gone.append(path)
        elif anchor_hash(data, rng) != digest:
            changed.append(path)
    return list(dict.fromkeys(changed)), list(dict.fromkeys(gone))


def as_of_now(memories: Iterable[Memory], root: Path | None, near: str = "") -> list[Memory]:
    """The memories as they may be said now: unchanged code as they are, changed code with a
    note in front ("possibly stale"), deleted code left out. Without a root, as they are.
    ``near``: the name the call about to run looks for (a folder listing shows its likes first)."""
    items = list(memories)
    if any(m.metadata.get("signal") == REVIEWED_TESTS for m in items):  # rare: the module loads only then
        from desktop.memory.triggers.untested import in_users_words

        items = [w for w in (in_users_words(m) for m in items) if w is not None]
    if root is None:
        return items
    out: list[Memory] = []
    for m in items:
        if m.type == "code":
            out.append(m)
            continue
        if not m.code_anchors:
            named = _as_named_files_are(m, root)
            if named is not None:
                out.append(_with_listing(named, root, near))
            continue
        changed, gone = changed_anchors(m, root)
        if gone:
            continue
        if changed:
            names = ", ".join(changed[:MAX_FILES_NOTED]) + (" …" if len(changed) > MAX_FILES_NOTED else "")
            m = replace(m, content=f"(Possibly stale: {names} changed since this was learned.) {m.content}")
        out.append(m)
    return out


def _with_listing(m: Memory, root: Path, near: str) -> Memory:
    """A lesson about a path that does not exist, with what its folder holds now."""
    if m.metadata.get("signal") != WRONG_PLACE:
        return m
    from desktop.memory.lifecycle.folder_listing import listing

    for trig in m.metadata.get("triggers") or []:
        if isinstance(trig, dict) and trig.get("kind") == "path" and trig.get("missing"):
            path = str(trig.get("path") or "")
            line = listing(root, path, near or posixpath.basename(path))
            return replace(m, content=f"{m.content} {line}") if line else m
    return m


def gone_files(memory: Memory, root: Path) -> list[str]:
    """Project files a memory names (as code spans) that no longer exist under ``root``."""
    out: list[str] = []
    for name in dict.fromkeys(_NAMED_FILE.findall(memory.content)):
        if name.startswith(("/", "~", "..")):
            continue
        try:
            if not (root / name).exists():
                out.append(name)
        except OSError:
            continue
    return out


def _as_named_files_are(m: Memory, root: Path) -> Memory | None:
    """A memory without anchors as it may be said, given the files it names (None: not at all)."""
    gone = gone_files(m, root)
    if not gone:
        return m
    if m.metadata.get("signal") == WRONG_PLACE:
        # The example went stale; the wrong place did not (and the place it names is meant not to be there).
        from desktop.memory.observer.templates import wrong_place_without  # rare; loads the observer's tables

        kept = wrong_place_without(m.content, gone)
        return m if kept is None else replace(m, content=kept)
    names = ", ".join(f"`{g}`" for g in gone[:MAX_FILES_NOTED]) + (" …" if len(gone) > MAX_FILES_NOTED else "")
    return replace(m, content=f"(Possibly stale: {names} no longer exists.) {m.content}")
