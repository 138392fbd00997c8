"""The one managed block Engram keeps in CLAUDE.md / AGENTS.md / GEMINI.md.

Every writer (the export command, the external-agent runner, the app) goes
through :func:`write_block`. The block sits between ``<!-- engram:begin -->``
and ``<!-- engram:end -->``; any begin line Engram ever wrote (older versions put
a note inside the begin marker) is recognised. Writing replaces the first block
and removes any further ones, so a file that ended up with two blocks (an export
and an agent run used different markers before) is repaired on the next write.
Bytes outside the markers are preserved exactly (CRLF included); writing the
same content twice does not rewrite the file.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

BEGIN = "<!-- engram:begin -->"
END = "<!-- engram:end -->"
NOTE = "<!-- Managed by Engram: edits inside this block are replaced. Your text outside it is never touched. -->"
_BEGIN_RX = re.compile(r"<!-- engram:begin\b[^\n]*?-->")
_END_RX = re.compile(re.escape(END))


def blocks(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of every complete block in ``text``, in order."""
    out: list[tuple[int, int]] = []
    pos = 0
    while True:
        b = _BEGIN_RX.search(text, pos)
        if b is None:
            return out
        e = _END_RX.search(text, b.end())
        if e is None:
            return out
        out.append((b.start(), e.end()))
        pos = e.end()


def wrap(body: str) -> str:
    """The complete block for ``body`` (no trailing newline)."""
    return f"{BEGIN}\n{NOTE}\n{body.strip()}\n{END}"


def _drop(text: str, start: int, end: int) -> str:
    """``text`` without [start, end) and the line break that followed it."""
    after = text[end:]
    if after.startswith("\r\n"):
        after = after[2:]
    elif after.startswith("\n"):
        after = after[1:]
    return text[:start] + after


def splice(text: str, body: str) -> str:
    """``text`` with its managed block replaced by ``body`` (appended when there is none); extra blocks go."""
    block = wrap(body)
    found = blocks(text)
    if found:
        for start, end in reversed(found[1:]):
            text = _drop(text, start, end)
        start, end = found[0]
        return text[:start] + block + text[end:]
    if not text:
        return block + "\n"
    sep = "" if text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    return f"{text}{sep}{block}\n"


def remove(text: str) -> str:
    """``text`` without any managed block; the user's text around it stays as written."""
    found = blocks(text)
    for start, end in reversed(found):
        before = text[:start]
        text = _drop(text, start, end)
        if not text[start:] and before.endswith("\n\n"):
            text = text[:-1]  # the blank line splice() put before an appended block
    return text


def extract(text: str) -> str | None:
    """The body of the first block (without Engram's note), or None when the file has none."""
    found = blocks(text)
    if not found:
        return None
    start, end = found[0]
    head = _BEGIN_RX.match(text, start)
    inner = text[head.end() if head else start:end - len(END)]
    return inner.replace(NOTE + "\n", "", 1).replace(NOTE, "", 1)


def write_block(path: Path, body: str) -> bool:
    """Write the managed block into ``path`` atomically; False when nothing changed."""
    # bytes, not read_text: universal newlines would silently turn the user's CRLF into LF
    old = path.read_bytes().decode("utf-8", "surrogateescape") if path.exists() else ""
    new = splice(old, body)
    if new == old:
        return False
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape", newline="") as fh:
            fh.write(new)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True
