"""Engram's own log files: redacted like stored text, private to the user, scrubbed by every delete.

A log line quotes what went wrong, and what went wrong often carries the payload: a hook
payload with the prompt the user pasted a key into, an agent's error with its proxy URL and
password. So every line passes the same secret scanner as the database (after formatting,
traceback included), the files are created 0600 in a 0700 folder (and tightened when an
older Engram left them readable), a failing write is dropped silently (a hook must never
print), and "delete all" and "forget --leaked" scrub them like the database.
"""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from desktop.memory.privacy.secrets import redact

LOGS_FOLDER: Final = "logs"
_SUFFIXES: Final = (".log",)


def logs_dir(data_dir: Path) -> Path:
    """Where Engram's log files live in a data folder."""
    return Path(data_dir) / LOGS_FOLDER


class RedactingFormatter(logging.Formatter):
    """A formatter whose output (message, arguments, traceback) has every secret redacted."""

    def format(self, record: logging.LogRecord) -> str:
        """The formatted record, redacted as a whole (a secret can sit in the traceback)."""
        return redact(super().format(record))[0]


class PrivateFileHandler(logging.FileHandler):
    """Appends to a file only this user can read; a write that fails (disk full) is dropped silently."""

    def _open(self) -> io.TextIOWrapper:
        """The file, created 0600 (and made 0600 if it exists), opened for appending."""
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.fchmod(fd, 0o600)  # an older Engram created it 0644
        return os.fdopen(fd, "a", encoding=self.encoding or "utf-8", errors=self.errors)

    def handleError(self, record: logging.LogRecord) -> None:
        """Drop the record: logging's default prints a traceback to stderr, which a hook must not."""


def private_log_handler(data_dir: Path, name: str) -> logging.Handler:
    """A handler appending redacted lines to ``<data>/logs/<name>`` (0600 in a 0700 folder).

    A folder that cannot be made (read-only, full disk) gives a handler that drops everything.
    """
    try:
        folder = logs_dir(data_dir)
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(folder, 0o700)
        handler: logging.Handler = PrivateFileHandler(folder / name, encoding="utf-8", delay=False)
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(RedactingFormatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
    return handler


def scrub_logs(data_dir: Path | None, needles: Iterable[str] | None = None) -> int:
    """Scrub Engram's log files; returns how many lines (or whole files) went.

    ``needles`` None (delete all): every log file is emptied. Otherwise every line holding
    one of the needles, in any case, is removed. Never raises (a log is not worth failing a
    delete over); the file keeps its 0600 mode.
    """
    if data_dir is None:
        return 0
    folder = logs_dir(data_dir)
    words = [n.casefold() for n in (needles or ()) if n and len(n) >= 4]
    removed = 0
    try:
        files = [p for p in folder.iterdir() if p.is_file() and p.suffix in _SUFFIXES]
    except OSError:
        return 0
    for path in files:
        try:
            if needles is None:
                removed += 1
                _rewrite(path, "")
                continue
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
            kept = [ln for ln in lines if not any(w in ln.casefold() for w in words)]
            if len(kept) != len(lines):
                removed += len(lines) - len(kept)
                _rewrite(path, "".join(kept))
        except OSError:
            logging.getLogger("engram.privacy").warning("could not scrub %s", path.name)
    return removed


def _rewrite(path: Path, text: str) -> None:
    """Replace a file's text in place (the same inode: a handler that holds it open keeps working)."""
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)
