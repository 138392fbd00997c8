"""Where a session's shell is, and the relative path that will not resolve from there (issue 25).

Claude Code runs a session's shell commands in one shell, so a ``cd`` (alone or in ``cd x &&
...``) moves every later command. Agents forget it: ``go test ./cmd/...`` from a package folder
fails with "directory not found", a repeated failure across sessions. The hooks follow the
folder (``hook_sessions``) and, before a command, check its relative paths: one that does not
exist from the shell's folder but does from the project root is named, with where the shell is.
Nothing is guessed: both facts are checked on disk at that moment.
"""

from __future__ import annotations

import json
import posixpath
from pathlib import Path
from typing import Any, Final

from desktop.memory.observer.command_shape import Command, resolve_dir
from desktop.memory.store.writer import FnOp, Tx
from desktop.memory.text.lazy_re import lazy

#: Agents whose shell keeps its folder between commands (Codex and Gemini start a shell per call).
PERSISTENT_SHELL: Final = frozenset({"claude-code"})
_RESET: Final = lazy(r"Shell cwd was reset to (/[^\n]+)")
_PATHISH: Final = lazy(r"^\.{0,2}/?[\w@.+-]+(?:/[\w@.+*-]*)+$")
_CWD: Final = lazy(r'"cwd":\s*"((?:[^"\\]|\\.)*)"')
#: How much of the transcript's end is read for its last ``cwd``, in turn (a message holding a long
#: tool output can be large; a few of them fit in the second).
TRANSCRIPT_TAILS: Final = (16 * 1024, 256 * 1024)


def _relative_to(folder: str, root: Path) -> str | None:
    try:
        rel = Path(folder).resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return None
    return "" if rel == "." else rel


def recorded_folder(transcript_path: str, root: Path) -> str | None:
    """The folder Claude Code's transcript last recorded the session in (each message carries its
    ``cwd``; a ``cd`` shows on the next one, and a resumed session's shell is back at the project),
    project-relative ('' = the root, or outside the project); None when the transcript says nothing."""
    found: list[str] = []
    try:
        # The path comes from the payload: only a regular file is read (a FIFO would block the
        # open, a device never end), and only its end.
        if not transcript_path or not Path(transcript_path).is_file():
            return None
        with open(transcript_path, "rb") as f:
            size = f.seek(0, 2)
            for tail in TRANSCRIPT_TAILS:  # the last message is usually short: its end first
                f.seek(max(0, size - tail))
                # escaped quotes inside a tool's output never match ``"cwd":"``
                found = _CWD.findall(f.read(tail).decode("utf-8", "replace"))
                if found or tail >= size:
                    break
    except OSError:
        return None
    if not found:
        return None
    try:
        folder = json.loads(f'"{found[-1]}"')
    except ValueError:
        return None
    rel = _relative_to(folder, root)
    return "" if rel is None else rel


def shell_folder(db: Any, session_id: str, root: Path, payload_cwd: str, transcript_path: str = "") -> str:
    """The project-relative folder the session's shell is in ('' = the root): the agent's own word
    (a payload ``cwd`` below the root, else its transcript's record), else the folder the hooks
    followed from its ``cd`` commands."""
    if payload_cwd:
        rel = _relative_to(payload_cwd, root) or ""
        if rel:
            return rel  # the agent says so itself
    recorded = recorded_folder(transcript_path, root)
    if recorded is not None:
        return recorded
    rows = db.reads.conn().execute("SELECT shell_cwd FROM hook_sessions WHERE session_id = ?",
                                   (session_id,)).fetchall()
    return str(rows[0][0]) if rows else ""


def moved_to(command: Command, current: str, root: Path) -> str | None:
    """The folder a command leaves the shell in, when it changed it and the folder exists."""
    target = command.leaves_cwd or command.cwd
    if not target:
        return None
    new = resolve_dir(current, target)
    if new.startswith("/"):
        try:
            new = Path(new).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            return None  # left the project: nothing to say about project paths from there
    new = "" if new in (".", "") else new
    return new if (root / new).is_dir() else None


def reset_to(output: str, root: Path) -> str | None:
    """The folder Claude Code says it put the shell back in after this call ("Shell cwd was reset
    to /project"), project-relative ('' = the root); None when it did not say so. Seen after 356
    calls in 100 real sessions: ignoring it would warn about a folder the shell already left."""
    found = _RESET.findall(output[-2000:])
    if not found:
        return None
    try:
        rel = Path(found[-1].strip()).resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return ""  # put back outside the project: nothing relative to say from there
    return "" if rel == "." else rel


def remember_folder(db: Any, session_id: str, folder: str) -> Any:
    """Record the shell's folder for the session's next events."""
    def write(tx: Tx) -> None:
        tx.execute("INSERT INTO hook_sessions(session_id, shell_cwd, updated_at) VALUES (?,?,?) "
                   "ON CONFLICT(session_id) DO UPDATE SET shell_cwd = excluded.shell_cwd, "
                   "updated_at = excluded.updated_at", (session_id, folder, tx.now))
    return db.writer.submit(FnOp("hook_shell_folder", write))


def forget_folder(db: Any, session_id: str) -> None:
    """A session (re)starts in a fresh shell at the project: a resumed session's old ``cd`` no longer
    holds (a compaction keeps the same shell, so it does not call this)."""
    known = db.reads.conn().execute("SELECT 1 FROM hook_sessions WHERE session_id = ? AND shell_cwd <> ''",
                                    (session_id,)).fetchall()
    if not known:
        return

    def write(tx: Tx) -> None:
        tx.execute("UPDATE hook_sessions SET shell_cwd = '', updated_at = ? WHERE session_id = ?", (tx.now, session_id))
    db.writer.submit(FnOp("hook_shell_folder_reset", write)).result(5)


def stray_paths(command: Command, folder: str, root: Path) -> list[str]:
    """Relative paths of ``command`` that do not exist from ``folder`` but do from the root (a
    ``cd x`` first: ``x`` itself, since what follows runs from wherever that lands)."""
    if not folder:
        return []  # at the root
    if command.cwd:
        target = command.cwd.rstrip("/")
        return [target] if _strays(target, folder, root) else []
    out: list[str] = []
    for seg in command.segments:
        if "-C" in seg.args[:-1]:
            continue  # git, make, tar, go, ninja: ``-C DIR`` resolves its paths from DIR, not the shell's folder
        for arg in seg.args:
            if _PATHISH.match(arg) and _strays(arg, folder, root):
                out.append(arg)
    return list(dict.fromkeys(out))[:2]


def _strays(path: str, folder: str, root: Path) -> bool:
    clean = path.rstrip("/").removesuffix("/...")
    if not clean or clean.startswith(("/", "~", "$")) or "*" in clean or clean in (".", ".."):
        return False
    return not (root / folder / clean).exists() and (root / clean).exists()


def stray_tool_paths(args: dict[str, Any], folder: str, root: Path) -> list[str]:
    """The relative ``path`` a search or listing tool was given, when it does not exist from the
    shell's folder (which the tool resolves it from) but does from the root."""
    raw = args.get("path")
    if not folder or not isinstance(raw, str):
        return []
    return [raw] if _strays(raw, folder, root) else []


def stray_warning(folder: str, paths: list[str]) -> str:
    """One line about the shell's folder and the paths that will not resolve from it."""
    named = ", ".join(f"`{p}`" for p in paths)
    up = posixpath.relpath(".", folder)
    return (f"Engram: the shell's working directory persists between Bash calls (and relative tool paths resolve "
            f"from it), and it is now `{folder}/`; {named} does not exist from there (it does from "
            f"the project root). Use an absolute path, or `cd {up}` first.")
