"""`engram hooks install|uninstall|status`: merged, idempotent, reversible, for all three agents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.agents.hooks import install as hk
from desktop.agents.hooks.protocol import NATIVE_EVENTS
from desktop.memory.store.errors import ValidationError

USER_SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
    "zeta": 1,
}


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
def test_install_merges_and_uninstall_restores(tmp_path: Path, agent: str) -> None:
    project, home = tmp_path / "p", tmp_path / "h"
    project.mkdir()
    path = hk.settings_path(agent, "project", project, home)
    path.parent.mkdir(parents=True)
    original = json.dumps(USER_SETTINGS, indent=2) + "\n"
    path.write_text(original, encoding="utf-8")

    _, changed = hk.install(agent, "project", project, home)
    assert changed
    data = json.loads(path.read_text(encoding="utf-8"))
    assert list(data) == list(USER_SETTINGS)  # the user's keys, in their order
    assert data["permissions"] == USER_SETTINGS["permissions"] and data["zeta"] == 1
    # the user's own hooks stay first and untouched
    assert data["hooks"]["PostToolUse"][0] == USER_SETTINGS["hooks"]["PostToolUse"][0] or agent == "gemini"
    assert data["hooks"]["Notification"] == USER_SETTINGS["hooks"]["Notification"]
    for event, native in NATIVE_EVENTS[agent].items():
        commands = [h["command"] for g in data["hooks"][native] for h in g["hooks"]]
        assert sum(f"hook {event} --agent {agent}" in c for c in commands) == 1
    st = hk.status(agent, "project", project, home)
    assert st.installed and not st.stale

    before = path.read_bytes()
    _, again = hk.install(agent, "project", project, home)
    assert not again and path.read_bytes() == before  # idempotent

    _, removed = hk.uninstall(agent, "project", project, home)
    assert removed
    assert json.loads(path.read_text(encoding="utf-8")) == USER_SETTINGS
    assert not hk.status(agent, "project", project, home).events


def test_install_into_nothing_and_uninstall_leaves_nothing(tmp_path: Path) -> None:
    project, home = tmp_path / "p", tmp_path / "h"
    project.mkdir()
    path, _ = hk.install("claude-code", "user", project, home)
    assert path == home / ".claude" / "settings.json" and path.exists()
    hk.uninstall("claude-code", "user", project, home)
    assert not path.exists()


def test_codex_needs_no_feature_flag_and_the_deprecated_one_is_taken_out(tmp_path: Path) -> None:
    """Codex 0.124+ runs hooks by default; ``codex_hooks`` is deprecated (Codex warns about it)."""
    project, home = tmp_path / "p", tmp_path / "h"
    toml = project / ".codex" / "config.toml"
    toml.parent.mkdir(parents=True)
    toml.write_text('model = "o4"\n\n[features]\nweb_search = true\n', encoding="utf-8")
    hk.install("codex", "project", project, home)
    assert toml.read_text(encoding="utf-8") == 'model = "o4"\n\n[features]\nweb_search = true\n'
    assert hk.status("codex", "project", project, home).feature == "on"
    hk.uninstall("codex", "project", project, home)
    assert toml.read_text(encoding="utf-8") == 'model = "o4"\n\n[features]\nweb_search = true\n'

    # what an older Engram wrote goes, with its own section
    toml.write_text('model = "o4"\n\n[features]  # added by engram hooks install\n'
                    'codex_hooks = true  # added by engram hooks install\n', encoding="utf-8")
    assert hk.status("codex", "project", project, home).feature == "legacy"
    hk.install("codex", "project", project, home)
    assert toml.read_text(encoding="utf-8") == 'model = "o4"\n'
    assert "codex_hooks" not in toml.read_text(encoding="utf-8")

    for off in ("[features]\nhooks = false\n", "[features]\ncodex_hooks = false\n"):
        toml.write_text(off, encoding="utf-8")
        hk.install("codex", "project", project, home)  # the user's explicit "off" is respected, and reported
        assert toml.read_text(encoding="utf-8") == off
        assert hk.status("codex", "project", project, home).feature == "off"


def test_uninstall_leaves_no_empty_agent_folder(tmp_path: Path) -> None:
    project, home = tmp_path / "p", tmp_path / "h"
    project.mkdir()
    (project / ".gemini").mkdir()
    (project / ".gemini" / "GEMINI.md").write_text("mine\n", encoding="utf-8")
    for agent in ("claude-code", "codex", "gemini"):
        hk.install(agent, "project", project, home)
    for agent in ("claude-code", "codex", "gemini"):
        hk.uninstall(agent, "project", project, home)
    assert not (project / ".claude").exists() and not (project / ".codex").exists()
    assert (project / ".gemini" / "GEMINI.md").read_text(encoding="utf-8") == "mine\n"  # the user's own file stays


def test_gemini_entries_have_names_and_millisecond_timeouts(tmp_path: Path) -> None:
    path, _ = hk.install("gemini", "project", tmp_path, tmp_path / "h")
    data = json.loads(path.read_text(encoding="utf-8"))
    entry = data["hooks"]["BeforeAgent"][0]["hooks"][0]
    assert entry["name"] == "engram-prompt" and entry["timeout"] == 10_000
    assert data["hooks"]["AfterTool"][0]["matcher"] == ".*"


def test_unreadable_settings_are_never_overwritten(tmp_path: Path) -> None:
    path = hk.settings_path("claude-code", "project", tmp_path, tmp_path / "h")
    path.parent.mkdir(parents=True)
    path.write_text("{ not json", encoding="utf-8")
    with pytest.raises(ValidationError):
        hk.install("claude-code", "project", tmp_path, tmp_path / "h")
    assert path.read_text(encoding="utf-8") == "{ not json"


def test_moved_engram_updates_the_entry_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "h"
    path, _ = hk.install("claude-code", "project", tmp_path, home)
    monkeypatch.setattr("desktop.agents.launch.hook_argv", lambda: ["/opt/new/bin/engram"])
    assert hk.status("claude-code", "project", tmp_path, home).stale
    hk.install("claude-code", "project", tmp_path, home)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert [h["command"] for h in data["hooks"]["Stop"][0]["hooks"]] == [
        "/opt/new/bin/engram hook stop --agent claude-code"]
    assert not hk.status("claude-code", "project", tmp_path, home).stale


def test_one_managed_block_and_two_are_repaired(tmp_path: Path) -> None:
    """Export to CLAUDE.md and any other writer of the block write the same block; an old double block is mended."""
    from desktop.memory.lifecycle import formats
    from desktop.memory.lifecycle import managed_block as mb

    path = tmp_path / "CLAUDE.md"
    user = "# Mine\r\nKeep this CRLF line.\r\n"
    path.write_bytes(user.encode())
    assert formats.write_managed_block(path, mb.wrap("## Project memory (Engram)\n\n- exported"))
    assert mb.write_block(path, "agent context")  # the one writer of the block
    text = path.read_bytes().decode()
    assert text.count("engram:begin") == 1 and "agent context" in text and "exported" not in text
    assert text.startswith(user)
    # a file two older writers left with two different blocks
    old = (f"{user}\n<!-- engram:begin (managed by Engram; edits inside this block are replaced) -->\n"
           f"- old export\n<!-- engram:end -->\nmiddle text\n{mb.BEGIN}\n{mb.NOTE}\nold agent\n{mb.END}\ntail\n")
    path.write_text(old, encoding="utf-8", newline="")
    assert mb.write_block(path, "fresh")
    repaired = path.read_bytes().decode()
    assert repaired.count("engram:begin") == 1 and repaired.count("engram:end") == 1
    assert "fresh" in repaired and "old agent" not in repaired and "old export" not in repaired
    assert "middle text\n" in repaired and repaired.endswith("tail\n") and repaired.startswith(user)
    assert formats.extract_managed_block(repaired) == "\nfresh\n"
    assert mb.remove(repaired) == f"{user}\nmiddle text\ntail\n"


def test_new_settings_file_gets_the_usual_mode(tmp_path: Path) -> None:
    import os

    mask = os.umask(0o022)
    try:
        path, _ = hk.install("gemini", "project", tmp_path, tmp_path / "h")
    finally:
        os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o644


def test_a_relative_data_folder_is_written_as_the_absolute_one(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent runs the hook from the project: `--data-dir data` given elsewhere must still
    name the folder the user meant, not `project/data` (a replay learned into an empty one)."""
    monkeypatch.chdir(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    path, _ = hk.install("claude-code", "project", project, tmp_path / "home", Path("data"))
    commands = [h["command"] for groups in json.loads(path.read_text())["hooks"].values()
                for g in groups for h in g["hooks"]]
    assert commands and all(f"--data-dir {tmp_path / 'data'}" in c for c in commands)
    assert hk.status("claude-code", "project", project, tmp_path / "home", Path("data")).installed
