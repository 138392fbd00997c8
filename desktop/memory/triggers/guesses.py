"""A guess about to miss where an earlier session's guess missed too (issues 25 and 26).

One session that looked for a path that was not there, then found what it wanted, is not yet a
lesson: stored after one session, two blind judges labelled 20 such lessons weak or noise (0 and 1
useful), since one listing settles each. It is still evidence for one moment: an agent about to look for
something not on disk in that same place. Then the hook says, live and without storing anything,
that the place missed before too and what it holds now, read from disk. A wrong place seen again in
another session (the same path, or the same file found next) becomes a stored lesson
(``observer/wrong_places``) and fires by itself.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any, Final

from desktop.memory.lifecycle.folder_listing import listing
from desktop.memory.observer.signal_kinds import WRONG_PLACE
from desktop.memory.privacy.boundary import quotable_path
from desktop.memory.triggers.model import LOOK_TOOLS, CallShape, on_disk

MAX_PATHS: Final = 4


def _places(path: str) -> list[str]:
    """The places a look at ``path`` guesses in: itself, and each folder above it, deepest first."""
    out = [path]
    folder = posixpath.dirname(path)
    while folder:
        out.append(folder)
        folder = posixpath.dirname(folder)
    return out


def _missed(conn: Any, places: list[str]) -> dict[str, int]:
    """Sessions an earlier look missed in, per place, for places not yet a lesson: the place itself,
    or a file name guessed in it (``x/*``, ``x/*>found.go``: each file found next is its own key).
    One indexed read for all of a call's places."""
    keys = [f"{WRONG_PLACE}:{p}" for p in places]
    where = " OR ".join("signal_key = ? OR signal_key = ? OR (signal_key >= ? AND signal_key < ?)" for _ in keys)
    params = [v for k in keys for v in (k, f"{k}/*", f"{k}/*>", f"{k}/*?")]  # '?' sorts right after '>'
    rows = conn.execute(f"SELECT signal_key, session_count FROM observer_signal_counts WHERE memory_id IS NULL "
                        f"AND ({where})", params).fetchall()
    out: dict[str, int] = {}
    for key, count in rows:
        place = str(key).removeprefix(f"{WRONG_PLACE}:").split("/*", 1)[0]
        out[place] = out.get(place, 0) + int(count or 0)
    return out


def guess_note(conn: Any, call: CallShape, root: Path | None, near: str = "") -> str:
    """One line before a look at something not on disk, in a place an earlier session's look missed
    and that is not yet a lesson; '' otherwise. ``near``: the name the call looks for.

    The database is asked first: on a hot path (every read and search), a look where nobody missed
    before costs one indexed read, not a check on disk (a glob pattern's would walk the tree)."""
    if root is None or call.tool not in LOOK_TOOLS or not call.paths:
        return ""
    paths = list(call.paths[:MAX_PATHS])
    missed = _missed(conn, list(dict.fromkeys(p for path in paths for p in _places(path))))
    if not missed:
        return ""
    for path in paths:
        found = next(((p, missed[p]) for p in _places(path) if missed.get(p)), None)
        if found is None or on_disk(root, path):
            continue
        place, n = found
        held = listing(root, place, near)
        if not held:
            continue
        return (f"Engram: `{quotable_path(path)}` is not on disk, and a look in `{quotable_path(place)}` found "
                f"nothing in {n} earlier session{'s' if n > 1 else ''} too. {held}")
    return ""
