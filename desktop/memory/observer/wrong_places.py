"""Wrong places (issue 25): a search or read under a path found nothing (or the path did not exist),
and a few steps later the thing was found elsewhere; the lesson fires before the next look there.

A file name guessed in the right folder (the next file read beside it was the one wanted) is a
lesson about the folder: it fires before a look there at any name that is not on disk. A folder
guessed where files carry its name as a prefix (``strategy/manual_commit`` beside
``manual_commit_*.go``) is told as that prefix. All state lives in ``Scratchpad.ev`` (JSON-safe,
bounded); every handler does bounded work.
"""

from __future__ import annotations

import itertools
import posixpath
import re
from pathlib import Path
from typing import Any, Final

from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.signals import WRONG_PLACE, Signal, excerpt
from desktop.memory.observer.tool_names import glob_folder
from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.triggers.model import PATH, Trigger

LOOK_WINDOW: Final = 8
#: What a wrong-place key ends with when the agent listed the folder instead of finding one file.
LISTED: Final = "(listed)"
MAX_MISSES: Final = 4
_EMPTY: Final = re.compile(r"^\s*(?:No (?:files|matches) found\.?|Found 0 (?:files|matches)\.?|0 matches?\.?|"
                           r"No such file or directory|)\s*$", re.I)
_MISSING: Final = re.compile(r"does not exist|no such file or directory|not found|ENOENT|cannot find the path",
                             re.I)


def look_of(tool: str, args: dict[str, Any], root: str) -> dict[str, str] | None:
    """Where a Read/Grep/Glob/LS call looks (project-relative, '' for the whole project) and for what."""
    raw = args.get("file_path") if tool == "Read" else args.get("path")
    if tool != "Read" and not raw:
        raw = root or "."
    pattern = str(args.get("pattern") or "")
    folder = glob_folder(pattern) if tool == "Glob" else ""
    if folder and isinstance(raw, str):  # ``cmd/cli/commands/*.go`` looks in ``cmd/cli/commands``
        raw = folder if folder.startswith("/") or raw in (".", "./") else posixpath.join(raw, folder)
        pattern = pattern[len(folder):].lstrip("/")
    if not isinstance(raw, str) or not raw:
        return None
    path = raw.rstrip("/")
    if root and path.startswith(root.rstrip("/") + "/"):
        path = path[len(root.rstrip("/")) + 1:]
    if path in (".", root.rstrip("/")):
        path = ""  # the whole project
    elif path.startswith(("/", "~", "..")):
        return None  # outside the project
    what = posixpath.basename(path) if tool == "Read" else pattern
    return {"path": path, "what": redact_then_cut(what, 80), "tool": tool}


def on_look_result(sp: Scratchpad, look: dict[str, str], output: str, is_error: bool, step: int,
                   event: str) -> None:
    """Remember a look that found nothing; turn a later find of the same thing into a lesson."""
    misses: list[dict[str, Any]] = sp.ev.setdefault("misses", [])
    empty = is_error or bool(_EMPTY.match(output[:200]))
    if empty:
        if (is_error and not _MISSING.search(output[:300])) or not look["path"]:
            return  # another kind of failure, or nothing found anywhere: not a wrong place
        misses[:] = [m for m in misses if step - int(m["step"]) <= LOOK_WINDOW and m["path"] != look["path"]]
        misses.append({**look, "step": step, "event": event, "missing": is_error})
        del misses[:-MAX_MISSES]
        return
    if not misses:
        return
    for miss in list(misses):
        if step - int(miss["step"]) > LOOK_WINDOW:
            misses.remove(miss)
            continue
        if _lists_folder_of(miss, look):
            misses.remove(miss)
            _guess_listed(sp, miss, step, event)
            continue
        found = _found_for(miss, look, output, sp.cwd)
        if found and not found.startswith(miss["path"] + "/") and found != miss["path"]:
            misses.remove(miss)
            _wrong_place(sp, miss, found, step, event)


def _lists_folder_of(miss: dict[str, Any], look: dict[str, str]) -> bool:
    """True for a listing (``ls``, LS, a Glob of everything) of the folder a missing file was guessed in."""
    return (miss["tool"] == "Read" and bool(miss.get("missing")) and look["tool"] == "Glob"
            and look["what"] in ("", "*") and bool(look["path"])
            and look["path"] == posixpath.dirname(str(miss["path"])))


def _guess_listed(sp: Scratchpad, miss: dict[str, Any], step: int, event: str) -> None:
    """A file name guessed in a folder, then the folder listed instead of the file read: the folder
    holds other names than agents guess. The key stays apart from a find of one file (sessions must
    agree that it was listed), and the live guess note (``triggers/guesses``) reads its count."""
    folder = posixpath.dirname(str(miss["path"]))
    trig = Trigger(PATH, folder.split("/", 1)[0], path=folder, missing=True)
    sp.add_signal(Signal(WRONG_PLACE, f"{WRONG_PLACE}:{folder}/*>{LISTED}", step, [],
                         {"path": str(miss["path"]), "missing": True, "what": miss["what"], "found": folder + "/",
                          "triggers": [trig.as_json()], "events": [miss["event"], event]},
                         [f"Read {miss['path']}: not on disk; listed {folder}/"]))


def _words(text: str) -> set[str]:
    """The words of a search text or file name (3+ letters; regex syntax and extensions dropped)."""
    stem = posixpath.splitext(text)[0] if "." in text and " " not in text else text
    return {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9_]{2,}", stem)}


def _shares(wanted: set[str], name: str) -> bool:
    """True when a file name has a word looked for, or a word one of them begins
    (``manual_commit`` looked for, ``manual_commit_hooks.go`` found)."""
    have = _words(name)
    return bool(wanted & have) or any(h.startswith(w) for w in wanted if len(w) >= 5 for h in have)


def _found_for(miss: dict[str, Any], look: dict[str, str], output: str, root: str) -> str:
    """The file this successful look found that is what ``miss`` looked for, or ''.

    A Read counts when the file's name shares a word with what was looked for (or with the name
    of the path that did not exist); a search's listing counts through the first listed file
    whose name does. After a Read of a file that did not exist, the next file read in the same
    folder counts whatever its name: the agent guessed a name and then found the file it wanted
    beside it (``helpers.go`` missing, ``testenv.go`` read).
    """
    wanted = _words(miss["what"])
    if miss.get("missing"):
        wanted |= _words(posixpath.basename(str(miss["path"])))
    if look["tool"] == "Read":
        if miss["tool"] == "Read" and miss.get("missing") and \
                posixpath.dirname(look["path"]) == posixpath.dirname(str(miss["path"])):
            return look["path"]
        return look["path"] if wanted and _shares(wanted, posixpath.basename(look["path"])) else ""
    if not wanted:
        return ""
    for line in output[:20_000].splitlines()[:400]:
        m = re.match(r"^\s*(?:\./)?([\w@.+/-]+\.\w{1,8})(?::\d+.*)?\s*$", line.strip())
        if m and _shares(wanted, posixpath.basename(m.group(1))):
            found = m.group(1)
            prefix = root.rstrip("/") + "/"
            if root and found.startswith(prefix):
                return found[len(prefix):]
            return "" if found.startswith("/") else found
    return ""


def _a_real_place(target: Path) -> bool:
    """A file, or a folder holding more than a few files: somewhere that is right for other things."""
    try:
        if target.is_file():
            return True
        return target.is_dir() and sum(1 for p in itertools.islice(target.rglob("*"), 64) if p.is_file()) > 3
    except OSError:
        return False


def _name_family(root: str, where: str, found: str) -> list[str]:
    """``["manual_commit.go", "manual_commit_*.go"]`` when ``where`` (``strategy/manual_commit``), looked for
    as a folder, is the prefix of files beside it (two or more on disk, ``found`` one of them; the file
    of the bare name first, when there is one): the code is split by file name, not by folder. Empty
    when it is not, or when the project is not on this disk."""
    base, near = posixpath.basename(where), posixpath.dirname(where)
    ext = posixpath.splitext(found)[1]
    if not root or not base or "." in base or posixpath.dirname(found) != near or not ext or \
            not posixpath.basename(found).startswith(base + "_"):
        return []
    try:
        if (Path(root) / where).exists():
            return []  # a folder of that name is there (a search in it found nothing): it is one
        named = [p for p in itertools.islice((Path(root) / near).glob(f"{base}_*{ext}"), 64) if p.is_file()]
        head = [f"{base}{ext}"] if (Path(root) / near / f"{base}{ext}").is_file() else []
    except OSError:
        return []
    return [*head, f"{base}_*{ext}"] if len(named) >= 2 else []


def _wrong_place(sp: Scratchpad, miss: dict[str, Any], found: str, step: int, event: str) -> None:
    path = str(miss["path"])
    missing = bool(miss["missing"])
    if miss["tool"] == "Read" and posixpath.dirname(found) != posixpath.dirname(path):
        # The file was in another folder: the folder was the wrong place, whatever the name.
        path, missing = posixpath.dirname(path) or path, False
    where = path.rstrip("/")
    if sp.cwd and _a_real_place(Path(sp.cwd) / where):
        return  # one search that found nothing in a folder full of code says nothing about the folder
    folder = posixpath.dirname(where)
    if missing and miss["tool"] == "Read" and folder and folder == posixpath.dirname(found):
        # A file name guessed in the right folder: any look there for a file that is not on disk
        # is the same guess (``logging.go`` one session, ``log.go`` the next).
        trig, key = Trigger(PATH, folder.split("/", 1)[0], path=folder, missing=True), f"{folder}/*"
        if not _shares(_words(str(miss["what"])), posixpath.basename(found)):
            # Found only as the next file read beside the guess, which may be browsing (blind judges:
            # a rewind test "found" in common_test.go). The sessions it needs must agree on the file.
            key = f"{key}>{posixpath.basename(found)}"
    else:
        trig, key = Trigger(PATH, where.split("/", 1)[0], path=where, missing=missing), where
    data = {"path": where, "missing": missing, "what": miss["what"], "found": found,
            "triggers": [trig.as_json()], "events": [miss["event"], event]}
    family = _name_family(sp.cwd, where, found)
    if family:
        data["family"] = family
    sp.add_signal(Signal(WRONG_PLACE, f"{WRONG_PLACE}:{key}", step, [found], data,
                         [f"{miss['tool']} {where} for '{excerpt(miss['what'], 40)}': nothing; found {found}"]))
