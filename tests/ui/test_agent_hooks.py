"""Onboarding and Settings offer Engram's hooks for the agents really found on PATH."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialog

from desktop.agents.hooks.protocol import NATIVE_EVENTS
from desktop.ui.dialogs.onboarding import Onboarding
from desktop.ui.dialogs.settings import SettingsDialog


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `claude` executable (a tiny shell script) alone on PATH: only Claude Code is found."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "claude"
    exe.write_text("#!/bin/sh\necho 2.1.0\n", encoding="utf-8")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(bindir))
    return exe


def _engram_events(settings_file: Path) -> list[str]:
    if not settings_file.exists():
        return []
    hooks = json.loads(settings_file.read_text(encoding="utf-8")).get("hooks", {})
    return [native for native, groups in hooks.items() for g in groups for h in g["hooks"]
            if " hook " in h["command"] and "--agent claude-code" in h["command"]]


def test_onboarding_installs_hooks_for_agents_found(qtbot, win, fake_claude) -> None:  # type: ignore[no-untyped-def]
    settings_file = Path(win.project.info.root) / ".claude" / "settings.local.json"
    dialog = Onboarding(win.project, win.tasks, None, llm_configured=True, parent=win)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.start()
    qtbot.waitUntil(lambda: dialog.hooks.isVisible(), timeout=5000)
    assert list(dialog.hooks.boxes) == ["claude-code"]  # codex and gemini are not on PATH
    assert dialog.hooks.boxes["claude-code"].isChecked()  # ticked by default
    assert not settings_file.exists()
    with qtbot.waitSignal(dialog.status_message, timeout=5000) as sig:
        dialog.index_next.click()
    assert "Claude Code" in sig.args[0]
    assert set(_engram_events(settings_file)) == set(NATIVE_EVENTS["claude-code"].values())
    assert not (Path(win.project.info.root) / ".codex").exists()


def test_onboarding_unticked_agent_is_left_alone(qtbot, win, fake_claude) -> None:  # type: ignore[no-untyped-def]
    dialog = Onboarding(win.project, win.tasks, None, llm_configured=True, parent=win)
    qtbot.addWidget(dialog)
    dialog.start()
    qtbot.waitUntil(lambda: "claude-code" in dialog.hooks.boxes, timeout=5000)
    dialog.hooks.boxes["claude-code"].setChecked(False)
    dialog.index_next.click()
    win.tasks.wait_idle(5000)
    assert not (Path(win.project.info.root) / ".claude" / "settings.local.json").exists()


def test_onboarding_without_agents_shows_no_hooks(qtbot, win, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    dialog = Onboarding(win.project, win.tasks, None, llm_configured=True, parent=win)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.start()
    win.tasks.wait_idle(5000)
    qtbot.wait(50)
    assert not dialog.hooks.isVisible() and not dialog.hooks.boxes


def test_settings_shows_status_installs_and_removes(qtbot, win, fake_claude, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    root = Path(win.project.info.root)
    settings_file = root / ".claude" / "settings.local.json"
    settings_file.parent.mkdir()
    settings_file.write_text(json.dumps({"permissions": {"allow": ["Bash(make test)"]}}), encoding="utf-8")
    seen: list[str] = []

    def fake_exec(dialog: SettingsDialog) -> int:
        panel = dialog.hooks_panel
        assert panel is not None
        qtbot.waitUntil(lambda: "claude-code" in panel.rows, timeout=5000)
        label, install, remove = panel.rows["claude-code"]
        assert list(panel.rows) == ["claude-code"]
        assert label.text() == "Not installed" and install.isEnabled() and not remove.isEnabled()
        install.click()
        qtbot.waitUntil(lambda: label.text() == "Installed for this project", timeout=5000)
        assert len(_engram_events(settings_file)) == len(NATIVE_EVENTS["claude-code"])
        seen.append(panel.message.text())
        assert remove.isEnabled() and not install.isEnabled()
        remove.click()
        qtbot.waitUntil(lambda: label.text() == "Not installed", timeout=5000)
        seen.append(panel.message.text())
        return QDialog.DialogCode.Rejected.value
    monkeypatch.setattr(SettingsDialog, "exec", fake_exec)
    win.flows.settings()
    assert "added to" in seen[0] and "removed from" in seen[1]
    assert _engram_events(settings_file) == []
    # the user's own key stays where it was
    assert json.loads(settings_file.read_text(encoding="utf-8")) == {"permissions": {"allow": ["Bash(make test)"]}}
