"""Issue 26: the model that writes memories is opt-in, in onboarding and in Settings, with its cost stated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.settings import Settings
from desktop.ui.dialogs.onboarding import Onboarding
from desktop.ui.dialogs.settings import SettingsDialog


@pytest.fixture
def fake_codex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `codex` executable alone on PATH: the only agent CLI found."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "codex"
    exe.write_text("#!/bin/sh\necho codex-cli 0.169\n", encoding="utf-8")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(bindir))
    return exe


def test_onboarding_offers_the_cli_found_rules_only_by_default(qtbot, win, fake_codex) -> None:  # type: ignore[no-untyped-def]
    dialog = Onboarding(win.project, win.tasks, None, llm_configured=True, parent=win)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.start()
    qtbot.waitUntil(lambda: dialog.memory_model.isVisible(), timeout=5000)
    chooser = dialog.memory_model
    assert list(chooser.buttons) == ["codex-cli"] and chooser.rules_only.isChecked()
    assert "6,000 tokens per finished session" in chooser.buttons["codex-cli"].text()  # the cost, stated
    dialog.index_next.click()  # nothing chosen: nothing changes
    win.tasks.wait_idle(5000)
    assert win.engram.settings.memory_model == "auto"


def test_onboarding_choice_is_saved_for_every_door(qtbot, win, fake_codex) -> None:  # type: ignore[no-untyped-def]
    dialog = Onboarding(win.project, win.tasks, None, llm_configured=True, parent=win)
    qtbot.addWidget(dialog)
    dialog.start()
    qtbot.waitUntil(lambda: "codex-cli" in dialog.memory_model.buttons, timeout=5000)
    dialog.memory_model.buttons["codex-cli"].setChecked(True)
    dialog.index_next.click()
    win.tasks.wait_idle(5000)
    saved = json.loads((win.engram.settings.data_dir / "settings.json").read_text(encoding="utf-8"))
    assert saved["memory_model"] == "codex-cli"
    assert Settings.load(win.engram.settings.data_dir).memory_model == "codex-cli"  # what a hook reads


def test_onboarding_without_agent_cli_shows_no_choice(qtbot, win, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    dialog = Onboarding(win.project, win.tasks, None, llm_configured=True, parent=win)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.start()
    win.tasks.wait_idle(5000)
    qtbot.wait(50)
    assert not dialog.memory_model.isVisible() and dialog.memory_model.chosen() is None


def test_settings_states_the_cost_and_applies_the_choice(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    settings = Settings(data_dir=tmp_path / "data")
    dialog = SettingsDialog(settings, None)
    qtbot.addWidget(dialog)
    assert dialog.memory_model.currentData() == "auto"
    assert "nothing is spent" in dialog.memory_cost.text()
    dialog.memory_model.setCurrentIndex(dialog.memory_model.findData("claude-cli"))
    assert "at most 6,000 tokens goes to Claude Code" in dialog.memory_cost.text()
    dialog.memory_model.setCurrentIndex(dialog.memory_model.findData("none"))
    assert "no request is sent" in dialog.memory_cost.text()
    dialog.memory_model.setCurrentIndex(dialog.memory_model.findData("gemini-cli"))
    dialog.apply_to(settings)
    assert settings.memory_model == "gemini-cli"
