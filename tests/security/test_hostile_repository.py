"""A repository an agent works in never decides which code Engram runs (issue 27, item 1).

The repository below ships its own ``desktop`` package: with ``python -m desktop.cli.main`` run
in its folder (the old hook fallback, the warm service's start and the MCP launch fallback),
Python imported that package first and ran it as the user. Each test drives a real process in
the repository's folder and checks that the planted code never ran.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from desktop.composition import Engram
from desktop.settings import Settings

REPO = Path(__file__).resolve().parents[2]
#: Directories with no ``engram`` and no Python of ours: the old code fell back to ``python -m``.
BARE_PATH = "/usr/bin:/bin"


def hostile_repository(root: Path, marker: Path) -> Path:
    """A project folder whose ``desktop`` package writes ``marker`` when imported."""
    payload = f"open({str(marker)!r}, 'a').write('ran\\n')\n"
    for pkg in ("desktop", "desktop/cli", "desktop/agents", "desktop/agents/hooks"):
        (root / pkg).mkdir(parents=True, exist_ok=True)
        (root / pkg / "__init__.py").write_text(payload, encoding="utf-8")
    (root / "desktop" / "cli" / "main.py").write_text(payload + "def main(argv=None):\n    return 0\n",
                                                      encoding="utf-8")
    (root / "app.py").write_text("print('hello')\n", encoding="utf-8")
    return root


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(repository, marker file, data folder), the repository already an Engram project."""
    marker = tmp_path / "planted-code-ran"
    repo = hostile_repository(tmp_path / "repo", marker)
    data = tmp_path / "d"
    Engram(Settings(data_dir=data)).open_project(repo, remember=False).close()
    return repo, marker, data


def clean_env(**extra: str) -> dict[str, str]:
    """The agent's environment: no engram on PATH, no runtime folder, nothing of the test's."""
    env = {k: v for k, v in os.environ.items() if k not in ("ENGRAM_HOOK_NO_SERVICE", "XDG_RUNTIME_DIR")}
    env.update({"PATH": BARE_PATH, "PYTHONPATH": str(REPO), **extra})
    return env


def test_hook_installed_for_a_repository_runs_engram_not_the_repositorys_code(
        hostile: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Install the hooks, then fire one as Claude Code does (bash, cwd = the repository):
    neither the hook nor the warm service it starts imports the repository's package."""
    from desktop.agents.hooks import install as hk
    from desktop.agents.hooks.client import socket_path

    repo, marker, data = hostile
    monkeypatch.setenv("PATH", BARE_PATH)
    hk.install("claude-code", "project", repo, repo / "home", data)
    settings = json.loads((repo / ".claude" / "settings.local.json").read_text(encoding="utf-8"))
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    payload = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "UserPromptSubmit", "prompt": "hello"}
    env = clean_env(ENGRAM_SERVE_IDLE="5")
    done = subprocess.run(["bash", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                          cwd=repo, env=env, timeout=60)
    assert done.returncode == 0
    assert not marker.exists(), "the repository's desktop package ran"
    path = socket_path(data)
    deadline = time.monotonic() + 30
    while not path.exists() and time.monotonic() < deadline:  # the service the hook started
        time.sleep(0.1)
    assert path.exists(), "the hook did not start Engram's warm service"
    again = subprocess.run(["bash", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                           cwd=repo, env=env, timeout=60)
    assert again.returncode == 0
    assert not marker.exists(), "the repository's desktop package ran"
    log = (data / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert "hook service listening" in log


def test_the_hook_command_ignores_a_pythonpath_naming_the_repository(hostile: tuple[Path, Path, Path],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook runs isolated and without ``site`` (half the start time): ``PYTHONPATH`` naming the
    repository, or ``.``, chooses nothing; the full runner still finds Engram's dependencies."""
    from desktop.agents.hooks import install as hk

    repo, marker, data = hostile
    command = hk.hook_command("claude-code", "session-start", data)
    assert " -I -S " in command and command.split(" ")[3].endswith("/desktop/cli/engram_hook.py")
    payload = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"}
    env = clean_env(PYTHONPATH=os.pathsep.join([str(repo), "."]), ENGRAM_HOOK_NO_SERVICE="1")
    done = subprocess.run(["bash", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                          cwd=repo, env=env, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
    assert not marker.exists(), "the repository's desktop package ran"
    log = (data / "logs" / "hooks.log").read_text(encoding="utf-8")  # the full runner answered (site set up)
    assert "hook claude-code/session-start session=s1" in log


def test_mcp_launch_command_ignores_the_working_folder(hostile: tuple[Path, Path, Path],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The command written into an MCP client's configuration, run from the repository."""
    from desktop.agents.mcp_server import launch_command

    repo, marker, data = hostile
    monkeypatch.setenv("PATH", BARE_PATH)
    command, args = launch_command(repo, data)
    assert Path(command).is_absolute()
    prefix = args[: args.index("mcp")]
    done = subprocess.run([command, *prefix, "--version"], capture_output=True, text=True, cwd=repo,
                          env=clean_env(), timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("engram"), done.stderr[-500:]
    assert not marker.exists(), "the repository's desktop package ran"


def test_interpreter_fallback_never_puts_the_working_folder_first(hostile: tuple[Path, Path, Path],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a console script (a source checkout), the interpreter runs with -P; a relative
    PYTHONPATH entry (``.``) is dropped from what Engram spawns."""
    from desktop.agents import launch

    repo, marker, _data = hostile
    monkeypatch.setattr(launch, "_console_script", lambda: None)
    argv = launch.engram_argv()
    assert argv[0] == str(Path(sys.executable).absolute()) and "-P" in argv
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([".", str(REPO), ""]))
    env = launch.spawn_environment()
    assert env["PYTHONPATH"] == str(REPO)
    done = subprocess.run([*argv, "--version"], capture_output=True, text=True, cwd=repo, env=env, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("engram"), done.stderr[-500:]
    assert not marker.exists()


def test_frozen_app_runs_the_command_line_headless(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bundle's own executable with --cli answers as ``engram`` (no window)."""
    from desktop.agents import launch

    monkeypatch.setattr(sys, "frozen", True, raising=False)
    argv = launch.engram_argv()
    assert argv == [str(Path(sys.executable).resolve()), launch.CLI_FLAG]
    sys.path.insert(0, str(REPO / "packaging"))
    try:
        import engram_entry
    finally:
        sys.path.remove(str(REPO / "packaging"))
    with pytest.raises(SystemExit) as stop:
        engram_entry.run(["engram-desktop", launch.CLI_FLAG, "--version"])
    assert stop.value.code == 0
