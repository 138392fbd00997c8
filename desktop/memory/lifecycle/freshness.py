"""Is a memory still true of the code, at the moment it is about to be said? (issue 25)

The idle staleness check (``staleness.check_staleness``) lowers confidence and flags memories
for review, but it runs when the app is idle, and a hook may say a memory in between. So every
door that hands memories to an agent passes them through :func:`as_of_now` first: a memory
anchored to code that changed since it was learned is said with that fact in front of it, and
one whose code is gone is not said at all. Files are hashed once per (size, mtime), so a warm
service re-reads a file only after it changed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Final

from desktop.memory.lifecycle.staleness import anchor_hash, split_anchor
from desktop.memory.types import Memory

MAX_FILES_NOTED: Final = 2
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


def as_of_now(memories: Iterable[Memory], root: Path | None) -> list[Memory]:
    """The memories as they may be said now: unchanged code as they are, changed code with a
    note in front ("possibly stale"), deleted code left out. Without a root, as they are."""
    items = list(memories)
    if root is None:
        return items
    out: list[Memory] = []
    for m in items:
        if not m.code_anchors or m.type == "code":
            out.append(m)
            continue
        changed, gone = changed_anchors(m, root)
        if gone:
            continue
        if changed:
            names = ", ".join(changed[:MAX_FILES_NOTED]) + (" …" if len(changed) > MAX_FILES_NOTED else "")
            m = replace(m, content=f"(Possibly stale: {names} changed since this was learned.) {m.content}")
        out.append(m)
    return out
