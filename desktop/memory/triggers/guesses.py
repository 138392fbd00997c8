"""A guess about to miss where an earlier session's guess missed too (issues 25 and 26).

One session that looked for a path that was not there, then found what it wanted, is not yet a
lesson: stored after one session, two blind judges labelled such lessons weak or noise (0 useful of
20), since one listing settles each. It is still evidence for one moment: an agent about to look for
something not on disk in that same place. Then the hook says, live and without storing anything,
that the place missed before too and what it holds now, read from disk. A wrong place seen in a
second session becomes a stored lesson (``observer/trigger_lessons``) and fires by itself.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any, Final

from desktop.memory.lifecycle.folder_listing import listing
from desktop.memory.observer.signals import WRONG_PLACE
from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.triggers.model import LOOK_TOOLS, CallShape, on_disk

MAX_PATHS: Final = 4


def _places(path: str) -> list[str]:
    """The wrong-place keys that cover ``path``: itself, and each folder above it (a guess in it)."""
    keys = [f"{WRONG_PLACE}:{path}"]
    folder = posixpath.dirname(path)
    while folder:
        keys += [f"{WRONG_PLACE}:{folder}/*", f"{WRONG_PLACE}:{folder}"]
        folder = posixpath.dirname(folder)
    return keys


def _quoted(path: str) -> str:
    """A path an agent gave, as one quoted line (no backtick or line break of its own), redacted."""
    return redact_then_cut(" ".join(path.split()).replace("`", "'"), 160, "…")


def guess_note(conn: Any, call: CallShape, root: Path | None, near: str = "") -> str:
    """One line before a look at something not on disk, in a place an earlier session's look missed
    and that is not yet a lesson; '' otherwise. ``near``: the name the call looks for."""
    if root is None or call.tool not in LOOK_TOOLS:
        return ""
    for path in call.paths[:MAX_PATHS]:
        if on_disk(root, path):
            continue
        keys = _places(path)
        marks = ",".join("?" * len(keys))
        rows = conn.execute(
            f"SELECT signal_key, session_count FROM observer_signal_counts WHERE signal_key IN ({marks}) "
            "AND memory_id IS NULL AND session_count >= 1 ORDER BY length(signal_key) DESC LIMIT 1", keys).fetchall()
        if not rows:
            continue
        place = str(rows[0][0]).removeprefix(f"{WRONG_PLACE}:").removesuffix("/*")
        held = listing(root, place, near)
        if not held:
            continue
        n = int(rows[0][1])
        return (f"Engram: `{_quoted(path)}` is not on disk, and a look in `{_quoted(place)}` found nothing in {n} "
                f"earlier session{'s' if n > 1 else ''} too. {held}")
    return ""
