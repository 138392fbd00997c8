"""A new session waits (a little) for the last one to be learned (issue 25, with issue 28's detached
session end): the first calls of a session are where a repeated mistake is most often made."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from desktop.agents.hooks.finalising import hold, wait_for_pending

HOLDER = "import os, sys, time\ntime.sleep(float(sys.argv[1]))\n"


def test_a_session_start_waits_for_a_running_finalisation(tmp_path: Path) -> None:
    fd = hold(tmp_path)
    assert fd is not None
    child = subprocess.Popen([sys.executable, "-c", HOLDER, "1.0"], pass_fds=(fd,))  # like the detached hook
    os.close(fd)  # the parent lets go at once: the child's inherited descriptor holds the lock
    try:
        waited = wait_for_pending(tmp_path, 5.0)
        assert 0.5 < waited < 4.0 and child.poll() is not None
    finally:
        child.wait(10)


def test_it_never_waits_past_its_share_of_the_budget(tmp_path: Path) -> None:
    fd = hold(tmp_path)
    assert fd is not None
    child = subprocess.Popen([sys.executable, "-c", HOLDER, "10"], pass_fds=(fd,))
    os.close(fd)
    try:
        started = time.monotonic()
        wait_for_pending(tmp_path, 0.4)
        assert time.monotonic() - started < 1.5 and child.poll() is None
    finally:
        child.kill()
        child.wait(10)


def test_nothing_to_wait_for(tmp_path: Path) -> None:
    assert wait_for_pending(tmp_path, 5.0) == 0.0
