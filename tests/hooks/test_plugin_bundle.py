"""The plugin bundle (issue 28, item 1) is generated from the hook event table, holds no machine path, and
each agent's own validator accepts it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from desktop.agents.hooks.protocol import NATIVE_EVENTS
from desktop.agents.plugins.bundle import build, hooks_config, portable_command
from tests.hooks.conftest import agent_cli


def test_every_event_of_the_table_is_in_each_plugin(tmp_path: Path) -> None:
    root = build(tmp_path / "bundle")
    files = {"claude-code": root / "claude-code" / "hooks" / "hooks.json",
             "codex": root / "codex" / "hooks" / "hooks.json", "gemini": root / "gemini" / "hooks" / "hooks.json"}
    for agent, path in files.items():
        hooks = json.loads(path.read_text(encoding="utf-8"))["hooks"]
        assert set(hooks) == set(NATIVE_EVENTS[agent].values()), agent
        for event, native in NATIVE_EVENTS[agent].items():
            commands = [h["command"] for g in hooks[native] for h in g["hooks"]]
            assert f"engram hook {event} --agent {agent}" in commands, (agent, native, commands)
    assert hooks_config("gemini")["hooks"]["AfterTool"][0]["hooks"][0]["timeout"] >= 1000  # Gemini: milliseconds


def test_the_bundle_holds_no_machine_path(tmp_path: Path) -> None:
    root = build(tmp_path / "bundle")
    text = "".join(p.read_text(encoding="utf-8") for p in root.rglob("*") if p.is_file())
    assert str(tmp_path) not in text and str(Path.home()) not in text and "/" + "work" not in text
    assert "--data-dir" not in text and "--project" not in text
    manifests = [json.loads(p.read_text(encoding="utf-8")) for p in root.rglob("*.json")]
    mcp = [m["mcpServers"]["engram"] for m in manifests if "engram" in (m.get("mcpServers") or {})]
    assert mcp and all(entry == {"command": "engram", "args": ["mcp"]} for entry in mcp)


def test_portable_command_keeps_only_the_hook_part() -> None:
    assert portable_command("'/opt/My App/engram-desktop' --cli hook prompt --agent gemini") == \
        "engram hook prompt --agent gemini"


def test_each_agents_validator_accepts_it(tmp_path: Path) -> None:
    root = build(tmp_path / "bundle")
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "DISABLE_AUTOUPDATER": "1"}
    for argv in ([str(agent_cli("claude")), "plugin", "validate", "--strict", str(root)],
                 [str(agent_cli("claude")), "plugin", "validate", "--strict", str(root / "claude-code")],
                 [str(agent_cli("gemini")), "extensions", "validate", str(root / "gemini")]):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, (argv, done.stdout[-800:], done.stderr[-800:])
