"""The data folder can be moved from Settings; it takes effect at the next start."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QPushButton

from desktop.settings import DATA_DIR_ENV, Settings, choose_data_location, default_data_dir
from desktop.ui.dialogs.settings import SettingsDialog


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    return home


def test_chosen_location_is_used_at_next_start_and_can_be_reset(config_home: Path, tmp_path: Path) -> None:
    default = default_data_dir()
    chosen = choose_data_location(tmp_path / "portable" / "engram")
    assert default_data_dir() == chosen and chosen.is_dir()
    assert Settings.load().data_dir == chosen
    assert choose_data_location(None) == default
    assert default_data_dir() == default


def test_environment_variable_still_wins(config_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    choose_data_location(tmp_path / "chosen")
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "from-env"))
    assert default_data_dir() == tmp_path / "from-env"


def test_settings_button_changes_the_location(qtbot, config_home: Path, tmp_path: Path, monkeypatch,  # type: ignore[no-untyped-def]
                                              _no_modal_message_boxes) -> None:
    target = tmp_path / "elsewhere"
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(target))
    dialog = SettingsDialog(Settings(data_dir=tmp_path / "data"), None)
    qtbot.addWidget(dialog)
    button = dialog.findChild(QPushButton, "changeDataFolder")
    assert button is not None
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert default_data_dir() == target.resolve()
    assert _no_modal_message_boxes[-1][0] == "information" and str(target.resolve()) in _no_modal_message_boxes[-1][1]
