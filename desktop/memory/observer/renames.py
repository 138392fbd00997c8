"""Memories follow renames and retire with deleted files (inside the promotion's write).

A session that ran ``mv old new`` / ``git mv`` (observer/file_ops.py parses them)
leaves ``digest.moved``; every live memory naming ``old`` (in its text or its
related files, a folder move included) is rewritten to name ``new``, through
EditMemory so the audit log keeps the old text. A session that deleted a file
leaves ``digest.removed``: what Engram learned on its own about that file (an
observer lesson nobody confirmed or pinned) is retired (deprecated, reason in the audit
log): a lesson about a file that is gone is no longer knowledge. What the user taught,
confirmed or pinned is only marked stale and waits for review; stale memories are never
injected (the injectable filter).
"""

from __future__ import annotations

import json
import logging
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from desktop.memory.observer.signals import USER_RULE, WRONG_PLACE
from desktop.memory.observer.templates import wrong_place_without
from desktop.memory.store.errors import ValidationError
from desktop.memory.store.live import LIVE_MEMORY_SQL
from desktop.memory.store.memory_ops import EditMemory
from desktop.memory.store.writer import Tx
from desktop.memory.types import MemorySource

logger = logging.getLogger("engram.observer")


@dataclass
class RenameStats:
    """How many memories one session's file operations rewrote and retired."""

    rewritten: int = 0
    retired: int = 0


def _under(path: str, old: str) -> str | None:
    """``path`` with the ``old`` prefix (a file or a folder) replaced marker, or None."""
    if path == old:
        return ""
    folder = old.rstrip("/") + "/"
    return path[len(folder):] if path.startswith(folder) else None


def _plausible(path: str) -> bool:
    """A path worth following: no parse debris (``…``, brackets), a folder or a file name."""
    return bool(path) and not re.search(r"[…()\[\]{}<>\"'`*?\s]", path) and ("/" in path or "." in path
                                                                                or path.islower())


def _token(path: str) -> re.Pattern[str]:
    """``path`` as a whole path token in text (not ``venv`` inside ``.venv``).

    A bare name (``venv``) counts only as a folder in a path (``venv/bin``): as a word it is
    more likely prose ("and") or parse debris than the deleted folder. Paths are the project's,
    from its root, so the token starts a path: the root's ``entire`` (a built binary) is not the
    folder in ``cmd/entire/cli`` (deleting the one retired a lesson naming the other).
    """
    bare = path.rstrip("/")
    end = "(?=/)" if "/" not in bare and "." not in bare else "(?=/|(?![\\w-]))"
    return re.compile(rf"(?:(?<![\w./-])|(?<=\./)){re.escape(bare)}{end}")


def _rows(tx: Tx, needle: str) -> list[tuple[int, str, list[str], bool]]:
    """Live memories naming ``needle`` in their text or files, and whether each is Engram's own
    unconfirmed lesson: observer-learned, not pinned or verified, and not the user's own words
    (a user's instruction about a deleted file waits for the user, like anything they taught)."""
    # A "wrong place" lesson is about a path that holds nothing useful: moving or deleting it
    # leaves the lesson true (agents keep looking there), so it is never rewritten or retired.
    rows = cast(list[tuple[int, str, str, str, int, int, str | None]], tx.execute(
        "SELECT id, content, related_files, source, user_verified, pinned, json_extract(metadata, '$.signal')"
        f" FROM memories WHERE {LIVE_MEMORY_SQL}"
        " AND (instr(related_files, ?) > 0 OR instr(content, ?) > 0)"
        " AND coalesce(json_extract(metadata, '$.signal'), '') <> ?", (needle, needle, WRONG_PLACE)).fetchall())
    return [(int(r[0]), str(r[1]), list(json.loads(r[2] or "[]")),
             r[3] == MemorySource.OBSERVER_INFERRED.value and not r[4] and not r[5] and r[6] != USER_RULE)
            for r in rows]


def implied_moves(removed: list[str], created: list[str]) -> list[tuple[str, str]]:
    """Write-new + delete-old: a deleted file whose name was written fresh elsewhere in the same
    session moved there (one candidate only; two new files of that name are ambiguous)."""
    by_name: dict[str, list[str]] = {}
    for path in created:
        by_name.setdefault(posixpath.basename(path), []).append(path)
    out = []
    for old in removed:
        news = [p for p in by_name.get(posixpath.basename(old), []) if p != old]
        if len(news) == 1 and "." in posixpath.basename(old):
            out.append((old, news[0]))
    return out


def apply_file_ops(tx: Tx, moved: list[tuple[str, str]], removed: list[str],
                   created: Sequence[str] = ()) -> RenameStats:
    """Rewrite memories naming moved paths; retire (or, for the user's, mark stale) those naming deleted ones."""
    st = RenameStats()
    implied = implied_moves(removed, list(created))
    moved = [*moved, *implied]
    removed = [p for p in removed if p not in {old for old, _ in implied}]
    for old, new in moved:
        if old == new or not _plausible(old) or not _plausible(new):
            continue
        rx = _token(old)
        for mid, content, files, _ in _rows(tx, old):
            if not rx.search(content) and all(_under(f, old) is None for f in files):
                continue
            new_files = []
            for f in files:
                rest = _under(f, old)
                new_files.append(f if rest is None else (new if rest == "" else f"{new.rstrip('/')}/{rest}"))
            changes: dict[str, Any] = {"content": rx.sub(new.rstrip("/"), content)}
            if new_files != files:
                changes["related_files"] = new_files
            try:
                EditMemory(mid, changes, actor="observer", reason=f"renamed {old} to {new}").apply(tx)
                st.rewritten += 1
            except ValidationError:  # the renamed text already exists: this copy is redundant
                tx.execute("UPDATE memories SET stale_at = ? WHERE id = ?", (tx.now, mid))
                st.retired += 1
    for path in removed:
        if not _plausible(path):
            continue
        rx = _token(path)
        for mid, content, files, learned in _rows(tx, path):
            if not (any(_under(f, path) is not None for f in files) or rx.search(content)):
                continue
            if learned:
                tx.audit("deprecate", mid, actor="observer", reason=f"{path} was deleted", detail={"path": path})
                tx.execute("UPDATE memories SET deprecated = 1, deprecated_at = ?, deprecated_reason = ?,"
                           " updated_at = ? WHERE id = ?", (tx.now, f"{path} was deleted", tx.now, mid))
            else:
                tx.audit("stale", mid, actor="observer", reason=f"{path} was deleted", detail={"path": path})
                tx.execute("UPDATE memories SET stale_at = ?, needs_review = 1, updated_at = ? WHERE id = ?"
                           " AND stale_at IS NULL", (tx.now, tx.now, mid))
            tx.changed("memory", "updated", [mid])
            st.retired += 1
    st.rewritten += _drop_gone_examples(tx, [p for p in removed if _plausible(p)])
    if st.rewritten or st.retired:
        logger.info("file operations: %d memories rewritten, %d retired", st.rewritten, st.retired)
    return st


def _drop_gone_examples(tx: Tx, removed: list[str]) -> int:
    """A wrong-place lesson stays, but the example file it names, once deleted, leaves its text
    (blind judges read a deleted example as the lesson being stale). Returns how many changed."""
    changed = 0
    for path in removed:
        rows = cast(list[tuple[int, str]], tx.execute(
            f"SELECT id, content FROM memories WHERE {LIVE_MEMORY_SQL} AND instr(content, ?) > 0"
            " AND json_extract(metadata, '$.signal') = ? AND source = ?",
            (path, WRONG_PLACE, MemorySource.OBSERVER_INFERRED.value)).fetchall())
        for mid, content in rows:
            kept = wrong_place_without(str(content), [path])
            if kept is None:
                continue
            try:
                EditMemory(int(mid), {"content": kept}, actor="observer", reason=f"{path} was deleted").apply(tx)
                changed += 1
            except ValidationError:  # the same lesson without its example exists already
                continue
    return changed
