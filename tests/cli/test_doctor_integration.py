"""`engram doctor` checks the integration read-only (issue 28, item 5): it creates nothing, and on a broken
setup names each problem with the command that fixes it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.agents.hooks import install as hk

REPO = Path(__file__).resolve().parents[2]


def _tree(root: Path) -> dict[str, float]:
    # ~/.cache/Microsoft/DeveloperTools: onnxruntime writes a device id when the model check loads it
    return {str(p.relative_to(root)): p.stat().st_mtime for p in root.rglob("*")
            if p.relative_to(root).parts[0] != ".cache"} if root.exists() else {}


def _doctor(cwd: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-P", "-m", "desktop.cli.main", "doctor", *extra], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home, bindir = tmp_path / "home", tmp_path / "bin"
    home.mkdir()
    bindir.mkdir()
    for name in ("claude", "codex", "gemini"):  # found on PATH; doctor never runs them
        (bindir / name).write_text("#!/bin/sh\nexit 99\n", encoding="utf-8")
        (bindir / name).chmod(0o755)
    return {"HOME": str(home), "PATH": f"{bindir}:/usr/bin:/bin", "PYTHONPATH": str(REPO),
            "ENGRAM_DATA_DIR": str(tmp_path / "data"), "XDG_RUNTIME_DIR": str(tmp_path / "run"),
            "CODEX_HOME": str(home / ".codex")}


def test_doctor_in_an_empty_folder_creates_nothing(tmp_path: Path, env: dict[str, str]) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    done = _doctor(folder, env, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["project"] is None
    assert not (tmp_path / "data").exists() and list(folder.iterdir()) == []
    assert {c["code"] for c in report["integration"]} >= {"cli_found", "hooks_missing", "mcp_missing"}


def test_doctor_names_every_problem_of_a_broken_setup_and_changes_nothing(tmp_path: Path,
                                                                         env: dict[str, str]) -> None:
    home, project = Path(env["HOME"]), tmp_path / "shop"
    project.mkdir()
    # Claude Code: the plugin is enabled, but `engram` (what it runs) is not on PATH
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"engram@engram": True}}))
    # Gemini CLI: hooks from another Engram install, an MCP entry whose command is gone
    hk.install("gemini", "user", project, home, Path("/elsewhere/data"))
    gemini = home / ".gemini" / "settings.json"
    data = json.loads(gemini.read_text(encoding="utf-8"))
    data["mcpServers"] = {"engram": {"command": "/opt/old-engram/bin/engram", "args": ["mcp"]}}
    gemini.write_text(json.dumps(data), encoding="utf-8")
    # Codex: Engram's hooks, but hooks switched off, and the old flag line
    hk.install("codex", "user", project, home)
    (home / ".codex" / "config.toml").write_text("[features]\nhooks = false\n", encoding="utf-8")
    # the hook service: a socket left by a killed `engram serve`
    from desktop.agents.hooks.client import socket_path

    Path(env["XDG_RUNTIME_DIR"]).mkdir(mode=0o700)
    os.environ["XDG_RUNTIME_DIR"], saved = env["XDG_RUNTIME_DIR"], os.environ.get("XDG_RUNTIME_DIR")
    try:
        path = socket_path(Path(env["ENGRAM_DATA_DIR"]))
    finally:
        if saved is None:
            del os.environ["XDG_RUNTIME_DIR"]
        else:
            os.environ["XDG_RUNTIME_DIR"] = saved
    path.parent.mkdir(mode=0o700)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # bound, never listening: what a killed service leaves
    os.chmod(path, 0o600)
    before = {"home": _tree(home), "project": _tree(project)}
    done = _doctor(project, env)
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "Claude Code hooks: the plugin runs `engram`, which is not on PATH" in out
    assert "Gemini CLI hooks: Engram's hooks in" in out and "run another Engram or data folder" in out
    assert "fix: engram hooks install --agent gemini --scope user" in out
    assert "Gemini CLI mcp: the MCP entry runs a command that does not exist: " in out
    assert "/opt/old-engram/bin/engram mcp" in out and "fix: engram setup --agent gemini" in out
    assert "Codex hooks: hooks are turned off in" in out and "fix: delete `hooks = false`" in out
    assert "Codex mcp: no Engram MCP server" in out
    assert "hook service: a socket is left from a hook service that is gone" in out
    assert {"home": _tree(home), "project": _tree(project)} == before  # read-only
    assert not (tmp_path / "data").exists()
