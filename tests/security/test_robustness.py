"""A full disk and a hung service (issue 27, items 19 and 20), with real processes.

The full disk is a real one: a 4 MB tmpfs holding the data folder, filled to the last byte
(``mount`` needs root, as the suite has in CI; elsewhere the test skips). The hung service is
a real ``engram serve`` stopped with SIGSTOP, and a real deadlock inside an in-process service.
Both failed on the code before the fix (checked with ``git stash``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.agents.hooks import client, service
from desktop.agents.hooks.protocol import from_dict
from desktop.composition import Engram
from desktop.settings import Settings
from tests.hooks.conftest import run_hook
from tests.security.conftest import DETACHED_ENV
from tests.security.transcript import ClaudeTranscript

REPO = Path(__file__).resolve().parents[2]
IDEMPOTENT = "so the refund handler must be idempotent"  # the memory the refund prompt should get


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MB filesystem, mounted for the test (unmounted after)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], capture_output=True,
                          check=False)
    if done.returncode != 0:
        pytest.skip("cannot mount a small filesystem here (needs root)")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, check=False)


def _fill(folder: Path) -> None:
    """Write zeros until the filesystem has no byte left."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (65536, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)


def _engram(*args: str, env: dict[str, str] | None = None, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-P", "-m", "desktop.cli.main", *args], capture_output=True, text=True,
                          input=stdin, timeout=60, cwd=str(REPO), env={**os.environ, **(env or {}),
                                                                      "PYTHONPATH": str(REPO)})


def test_item19_full_disk_add_is_one_line_and_a_hook_says_nothing(full_disk: Path, payments_dir: Path,
                                                                  hook_env: dict[str, str], tmp_path: Path) -> None:
    data = full_disk / "data"
    old = _engram("add", "The build needs node 20", "--project", str(payments_dir), "--data-dir", str(data))
    assert old.returncode == 0, old.stderr
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    _fill(full_disk)
    for project in (payments_dir, fresh):  # an existing project, and one opened for the first time
        done = _engram("add", "The deploy needs make release " + "x" * 3000, "--project", str(project),
                       "--data-dir", str(data))
        assert done.returncode != 0 and done.stdout == ""
        assert len(done.stderr.splitlines()) == 1 and "disk is full" in done.stderr, done.stderr
    env = {**hook_env, "ENGRAM_DATA_DIR": str(data)}
    said = ClaudeTranscript("f-1", payments_dir).user("Never deploy on Fridays.").say("Noted.").write(
        tmp_path / "f-1.jsonl")
    for event, fields in (("prompt", {"hook_event_name": "UserPromptSubmit", "prompt": "which node does it need?"}),
                          ("stop", {"hook_event_name": "Stop", "last_assistant_message": "[Memory #1: node] ok"}),
                          ("session-end", {"hook_event_name": "SessionEnd", "transcript_path": str(said)})):
        out = run_hook({**env, DETACHED_ENV: "1"} if event == "session-end" else env, event,
                       {"session_id": "f-1", "cwd": str(payments_dir), **fields}, extra=["--data-dir", str(data)])
        assert out.returncode == 0 and out.stderr == "", (event, out.stderr[:300])
    (full_disk / "filler").unlink()
    kept = _engram("list", "--project", str(payments_dir), "--data-dir", str(data))
    assert "node 20" in kept.stdout  # what was stored before is intact


def _wait_socket(data: Path, timeout: float = 20.0) -> Path:
    path = client.socket_path(data)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            sock = client._connect(path, 0.5, 2.0)
            if sock is not None:
                sock.close()
                return path
        time.sleep(0.1)
    raise AssertionError("no hook service answered")


def test_item20_a_stopped_service_is_noticed_answered_around_and_replaced(
        payments_dir: Path, data_dir: Path, hook_env: dict[str, str], payment_memories: dict[str, int],
        tmp_path: Path) -> None:
    assert payment_memories["prompt"]
    env = {k: v for k, v in hook_env.items() if k != "ENGRAM_HOOK_NO_SERVICE"}
    env["ENGRAM_SERVE_IDLE"] = "60"
    engram = shutil.which("engram", path=env["PATH"]) or "engram"
    first = subprocess.Popen([engram, "serve", "--data-dir", str(data_dir), "--idle", "60", "--no-warm-search"],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    replacement: int | None = None
    try:
        path = _wait_socket(data_dir)
        ask = {"session_id": "w-1", "cwd": str(payments_dir), "hook_event_name": "UserPromptSubmit",
               "prompt": "Is the refund webhook handler idempotent when the webhook retries?"}
        warm = run_hook(env, "prompt", ask)
        assert IDEMPOTENT in warm.stdout  # answered by the service
        os.kill(first.pid, signal.SIGSTOP)  # hung: the kernel still accepts connections on its socket
        started = time.monotonic()
        said = run_hook(env, "prompt", {**ask, "session_id": "w-2"})
        took = time.monotonic() - started
        assert said.returncode == 0 and said.stderr == ""
        assert IDEMPOTENT in said.stdout  # answered inline, not lost
        assert took < 2.8, took  # the prompt budget is 3 s: the probe took a fraction of it
        assert first.wait(10) == -signal.SIGKILL  # the stuck service was replaced...
        path = _wait_socket(data_dir)  # ...by a new one, started by the hook, on the same socket
        replacement = int(client.pid_path(path).read_text())
        assert replacement != first.pid
        # What a stop/session-end hook learns is not lost either while a service hangs.
        os.kill(replacement, signal.SIGSTOP)
        lesson = ClaudeTranscript("w-3", payments_dir).user(
            "Never call charge() with euros in core/payments.py; it takes cents.").say("Understood.").write(
            tmp_path / "w-3.jsonl")
        end = {"session_id": "w-3", "cwd": str(payments_dir), "hook_event_name": "SessionEnd",
               "transcript_path": str(lesson)}
        run_hook({**env, DETACHED_ENV: "1"}, "session-end", end, extra=["--budget", "15"])
        project = Engram(Settings(data_dir=data_dir)).open_project(payments_dir, remember=False)
        try:
            assert any("charge() with euros" in m.content for m in project.memories.list(limit=50))
        finally:
            project.close()
    finally:
        for pid in (first.pid, replacement):
            if pid:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        first.wait(10)
        latest = client.pid_path(client.socket_path(data_dir))
        if latest.exists():  # the service the last hook started
            try:
                os.kill(int(latest.read_text()), signal.SIGKILL)
            except (OSError, ValueError):
                pass


def test_item20_a_service_stuck_on_a_request_says_so_and_is_asked_no_more(
        payments_dir: Path, data_dir: Path, payment_memories: dict[str, int]) -> None:
    hooks = service.HookService(data_dir, idle=60, warm_search=False, stuck_after=0.5)
    server = threading.Thread(target=hooks.serve, daemon=True)
    server.start()
    path = _wait_socket(data_dir)
    payload = {"session_id": "d-1", "cwd": str(payments_dir), "prompt": "refund webhook handler idempotent?"}
    call = from_dict("claude-code", "prompt", payload)
    box: dict[str, Any] = {}
    with hooks._lock:  # a request that deadlocks inside the service (the project is opened under this lock)
        victim = threading.Thread(target=lambda: box.setdefault("r", client.ask(data_dir, call, None, timeout=30)),
                                  daemon=True)
        victim.start()
        time.sleep(0.8)
        started = time.monotonic()
        assert client.ask(data_dir, call, None, timeout=3.0) is None  # stuck: the hook answers inline
        assert time.monotonic() - started < 1.0
    victim.join(30)
    hooks.stop()
    server.join(10)
    assert not path.exists()
