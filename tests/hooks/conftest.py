"""Fixtures of the hook tests: the real agent CLIs (pinned, installed with npm when missing),
an ``engram`` command on PATH that runs this tree, and a project with memories."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

from desktop.composition import Engram
from desktop.memory.store.memory_ops import NewMemory
from desktop.settings import Settings

REPO = Path(__file__).resolve().parents[2]
CLI_CACHE = Path(os.environ.get("ENGRAM_TEST_CLI_DIR") or Path.home() / ".cache" / "engram-test-cli")
PINS = {"claude": "@anthropic-ai/claude-code@2.1", "codex": "@openai/codex@0.169", "gemini": "@google/gemini-cli@0.61"}


def agent_cli(name: str) -> Path:
    """The pinned CLI ``name``, installed into the cache with npm the first time.

    Without npm or the package, a developer's run skips; CI (``CI=true``) fails instead, so a
    broken install step can never pass as a green run that tested no real CLI.
    """
    exe = CLI_CACHE / "node_modules" / ".bin" / name
    if exe.exists():
        return exe
    npm = shutil.which("npm")
    if npm is None:
        _missing("npm is not installed (scripts/bootstrap.sh installs node and npm)")
    CLI_CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run([npm, "install", "-s", "--prefix", str(CLI_CACHE), PINS[name]], capture_output=True,
                   timeout=600, check=False)
    if not exe.exists():
        _missing(f"could not install {PINS[name]} from npm")
    return exe


def _missing(reason: str) -> NoReturn:
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture
def engram_bin(tmp_path: Path) -> Path:
    """A folder with an ``engram`` script that runs this source tree (put first on PATH)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    script = folder / "engram"
    script.write_text(f"#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} -P -m desktop.cli.main \"$@\"\n",
                      encoding="utf-8")
    script.chmod(0o755)
    return folder


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """Engram's data folder for the test."""
    return tmp_path / "data"


@pytest.fixture
def hook_env(engram_bin: Path, data_dir: Path, tmp_path: Path) -> dict[str, str]:
    """Environment of a hook or agent run: this tree's engram first on PATH, a private HOME."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "GEMINI_"))}
    env.update({"PATH": f"{engram_bin}{os.pathsep}{env.get('PATH', '')}", "HOME": str(home),
                "ENGRAM_DATA_DIR": str(data_dir), "ENGRAM_HOOK_NO_SERVICE": "1", "PYTHONPATH": str(REPO),
                "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
    return env


@pytest.fixture
def payments_dir(tmp_path: Path) -> Path:
    """A git repository with a payments module."""
    root = tmp_path / "shop"
    (root / "core").mkdir(parents=True)
    (root / "core" / "payments.py").write_text("def charge(amount):\n    return amount * 100\n", encoding="utf-8")
    (root / "core" / "refunds.py").write_text("def refund(order):\n    return order.total\n", encoding="utf-8")
    git = ["git", "-c", "user.email=t@example.org", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=root, check=True)
    return root


@pytest.fixture
def memories(payments_dir: Path, data_dir: Path) -> Iterator[dict[str, int]]:
    """Memories of the payments project: pinned, a file gotcha, a prompt-relevant one, a candidate."""
    project = Engram(Settings(data_dir=data_dir)).open_project(payments_dir, remember=False)

    def add(content: str, **fields: Any) -> int:
        return int(project.memories.add(NewMemory(content=content, **fields)).result(10).id)
    try:
        ids = {
            "pinned": add("All money amounts are integer cents; never use floats for prices.", type="decision",
                          pinned=True, confidence=0.9),
            "gotcha": add("charge() multiplies by 100: callers pass euros, not cents, or customers pay 100x.",
                          type="gotcha", related_files=["core/payments.py"], confidence=0.9),
            "prompt": add("The refund webhook retries three times, so the refund handler must be idempotent.",
                          type="gotcha", confidence=0.9),
            "candidate": add("The refund webhook secret rotates every refund cycle on Mondays.", type="note",
                             candidate=True, confidence=0.9),
        }
        yield ids
    finally:
        project.close()


def run_hook(env: dict[str, str], event: str, payload: Any, *, agent: str = "claude-code",
             extra: list[str] | None = None, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """``engram hook EVENT`` as an agent runs it: the payload on stdin, the output captured."""
    data = payload if isinstance(payload, str | bytes) else json.dumps(payload)
    return subprocess.run([shutil.which("engram", path=env["PATH"]) or "engram", "hook", event, "--agent", agent,
                           *(extra or [])], input=data if isinstance(data, str) else data.decode(),
                          capture_output=True, text=True, env=env, timeout=timeout, cwd=env["HOME"])


def db_rows(data_dir: Path, root: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of a query on the project's database (a fresh read connection)."""
    project = Engram(Settings(data_dir=data_dir)).open_project(root, remember=False)
    try:
        return [tuple(r) for r in project.db.reads.conn().execute(sql, params).fetchall()]
    finally:
        project.close()


def assert_session_recorded(data_dir: Path, root: Path, session_id: str, agent: str, rule: str,
                            wait: float = 90) -> None:
    """The hooked session left its record (session_metrics) and taught what the user said (``rule``).

    A session-end hook hands its work to a process of its own (the agent may exit at once), so the
    record may arrive a little after the agent returned.
    """
    deadline = time.monotonic() + wait
    while True:
        sessions = db_rows(data_dir, root, "SELECT agent FROM session_metrics WHERE session_id = ?", (session_id,))
        if sessions or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert sessions == [(agent,)], sessions
    learned = [r[0] for r in db_rows(data_dir, root, "SELECT content FROM memories WHERE source = 'observer_inferred'")]
    assert any(rule in text for text in learned), learned


@pytest.fixture
def project(payments_dir: Path, data_dir: Path) -> Iterator[Any]:
    """The payments repository opened as an Engram project (not remembered in the recent list)."""
    proj = Engram(Settings(data_dir=data_dir)).open_project(payments_dir, remember=False)
    yield proj
    proj.close()
