"""Read, Write, Edit, Grep and Glob, confined to the project root."""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.agents.errors import PathOutsideProject
from desktop.agents.tools.confine import ProjectRoot

MAX_READ_LINES = 2000
MAX_LINE_CHARS = 2000
MAX_READ_BYTES = 2_000_000
MAX_GREP_MATCHES = 200
MAX_GLOB_RESULTS = 500


@dataclass
class ToolOutcome:
    """What a tool returns to the model, plus the project-relative files it touched."""

    output: str
    is_error: bool = False
    files: list[str] = field(default_factory=list)
    memory_ids: list[int] = field(default_factory=list)  # memories the output shows (search_memory)


def _arg(args: dict[str, Any], *names: str, default: Any = None) -> Any:
    for n in names:
        if n in args and args[n] is not None:
            return args[n]
    return default


def replace_text(path: Path, text: str) -> None:
    """Give an existing file new text in one step (a new file is simply written).

    Parallel sub-agents may edit the file another one is reading: through a temporary file
    and ``os.replace`` a reader sees the old or the new text, never a truncated file whose
    "edit" would write the truncation back. The file keeps its permissions.
    """
    if not path.is_file():
        path.write_text(text, encoding="utf-8")
        return
    target = path.resolve()  # through a symlink: replace the file it names, not the link
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".engram-tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, stat.S_IMODE(target.stat().st_mode))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_file(root: ProjectRoot, args: dict[str, Any]) -> ToolOutcome:
    """Numbered lines of a text file (``offset`` is 1-based, ``limit`` lines)."""
    path = root.resolve(str(_arg(args, "file_path", "path", default="")))
    rel = root.relative(path)
    if not path.is_file():
        return ToolOutcome(f"File not found: {rel}", True, [rel])
    if path.stat().st_size > MAX_READ_BYTES:
        return ToolOutcome(f"{rel} is larger than {MAX_READ_BYTES} bytes; read it with offset/limit "
                           "via Grep first.", True, [rel])
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        return ToolOutcome(f"{rel} is a binary file.", True, [rel])
    lines = data.decode("utf-8", "replace").splitlines()
    offset = max(1, int(_arg(args, "offset", default=1) or 1))
    limit = min(MAX_READ_LINES, max(1, int(_arg(args, "limit", default=MAX_READ_LINES) or MAX_READ_LINES)))
    chunk = lines[offset - 1: offset - 1 + limit]
    body = "\n".join(f"{i:>6}\t{line[:MAX_LINE_CHARS]}" for i, line in enumerate(chunk, start=offset))
    if offset - 1 + limit < len(lines):
        body += f"\n[... {len(lines) - (offset - 1 + limit)} more lines; use offset to continue]"
    return ToolOutcome(body or "(empty file)", False, [rel])


def write_file(root: ProjectRoot, args: dict[str, Any]) -> ToolOutcome:
    """Create or overwrite a file with ``content``."""
    path = root.resolve(str(_arg(args, "file_path", "path", default="")))
    rel = root.relative(path)
    content = str(_arg(args, "content", default=""))
    if path.is_dir():
        return ToolOutcome(f"{rel} is a folder.", True, [rel])
    path.parent.mkdir(parents=True, exist_ok=True)
    root.resolve(path.parent)  # mkdir may not have created through a symlink outside
    replace_text(path, content)
    return ToolOutcome(f"Wrote {len(content)} characters to {rel}.", False, [rel])


def edit_file(root: ProjectRoot, args: dict[str, Any]) -> ToolOutcome:
    """Replace ``old_string`` with ``new_string`` (unique unless ``replace_all``)."""
    path = root.resolve(str(_arg(args, "file_path", "path", default="")))
    rel = root.relative(path)
    if not path.is_file():
        return ToolOutcome(f"File not found: {rel}", True, [rel])
    old = str(_arg(args, "old_string", default=""))
    new = str(_arg(args, "new_string", default=""))
    text = path.read_text(encoding="utf-8", errors="replace")
    if not old:
        return ToolOutcome("old_string is empty; use Write to create a file.", True, [rel])
    count = text.count(old)
    if count == 0:
        return ToolOutcome(f"old_string was not found in {rel}.", True, [rel])
    if count > 1 and not _arg(args, "replace_all", default=False):
        return ToolOutcome(f"old_string occurs {count} times in {rel}; give more context or replace_all.",
                           True, [rel])
    replace_text(path, text.replace(old, new))
    return ToolOutcome(f"Edited {rel} ({count} replacement{'s' if count > 1 else ''}).", False, [rel])


def glob_files(root: ProjectRoot, args: dict[str, Any]) -> ToolOutcome:
    """Project files matching a glob pattern (``**`` crosses folders)."""
    pattern = str(_arg(args, "pattern", "glob", default="**/*"))
    base = root.resolve(str(_arg(args, "path", default=".")))
    out: list[str] = []
    for p in root.walk_files(base):
        rel_to_base = p.relative_to(base).as_posix()
        if fnmatch.fnmatch(rel_to_base, pattern) or fnmatch.fnmatch(p.name, pattern) or \
                Path(rel_to_base).match(pattern):
            out.append(root.relative(p) if not p.is_symlink() else p.relative_to(root.real).as_posix())
            if len(out) >= MAX_GLOB_RESULTS:
                break
    body = "\n".join(out) if out else f"No files match {pattern}."
    return ToolOutcome(body, False, [])


def grep_files(root: ProjectRoot, args: dict[str, Any]) -> ToolOutcome:
    """Lines matching a regular expression, as ``path:line: text`` (capped)."""
    pattern = str(_arg(args, "pattern", "query", default=""))
    try:
        rx = re.compile(pattern, re.IGNORECASE if _arg(args, "ignore_case", "-i", default=False) else 0)
    except re.error as exc:
        return ToolOutcome(f"Invalid regular expression: {exc}", True)
    base = root.resolve(str(_arg(args, "path", default=".")))
    include = _arg(args, "glob", "include", default=None)
    files = [base] if base.is_file() else root.walk_files(base)
    hits: list[str] = []
    touched: list[str] = []
    for p in files:
        if include and not fnmatch.fnmatch(p.name, str(include)):
            continue
        try:
            real = root.resolve(p)
            if real.stat().st_size > MAX_READ_BYTES:
                continue
            data = real.read_bytes()
        except (OSError, PathOutsideProject):
            continue
        if b"\x00" in data[:4096]:
            continue
        rel = root.relative(real)
        for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if rx.search(line):
                hits.append(f"{rel}:{n}: {line[:300]}")
                if not touched or touched[-1] != rel:
                    touched.append(rel)
                if len(hits) >= MAX_GREP_MATCHES:
                    hits.append(f"[... stopped at {MAX_GREP_MATCHES} matches]")
                    return ToolOutcome("\n".join(hits), False, [])
    return ToolOutcome("\n".join(hits) if hits else f"No matches for {pattern}.", False, [])
