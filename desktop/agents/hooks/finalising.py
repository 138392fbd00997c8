"""The next session waits for the last one to be learned (a little).

A session end is finished by a detached process (``runner.detach``): the agent may not wait
for the import and the promotion. But a user who starts a new session at once would then meet
an Engram that has not yet learned what the last session showed, and the first calls of the new
session are where a repeated mistake is most often made. So each detached finalisation holds a
shared lock on ``<data>/run/finalising.lock`` for as long as it runs (taken by the hook before
the child starts, inherited by it), and a session start waits, within a part of its budget, to
take the lock exclusively: that happens when no finalisation is running any more. POSIX only
(``fcntl``); elsewhere nothing waits.
"""

from __future__ import annotations

import contextlib
import os
import time

TYPE_CHECKING = False  # not typing's, and paths are strings: the hook client imports this module
if TYPE_CHECKING:
    from pathlib import Path

WAIT_S = 3.5
#: Of its budget, what a session start may wait for the last session's finalisation.
WAIT_FOR_LEARNING_S = 2.5


def _lock_path(data_dir: str | Path) -> str:
    return os.path.join(data_dir, "run", "finalising.lock")


def hold(data_dir: str | Path) -> int | None:
    """A file descriptor holding a shared lock, for the detached child to inherit; None if none."""
    try:
        import fcntl
    except ImportError:
        return None
    path = _lock_path(data_dir)
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
    except OSError:
        os.close(fd)
        return None
    return fd


def wait_for_pending(data_dir: str | Path, seconds: float = WAIT_S) -> float:
    """Wait (at most ``seconds``) until no finalisation holds the lock; returns the seconds waited."""
    try:
        import fcntl
    except ImportError:
        return 0.0
    path = _lock_path(data_dir)
    if not os.path.exists(path):
        return 0.0
    started = time.monotonic()
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return 0.0
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(fd, fcntl.LOCK_UN)
                break
            except OSError:
                if time.monotonic() - started >= seconds:
                    import logging  # only here: the hook client imports this module and no logging

                    logging.getLogger("engram.hooks").info(
                        "a finalisation still runs after %.1f s; starting without it", seconds)
                    break
                time.sleep(0.05)
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    return time.monotonic() - started
