"""The app's team door: Settings → Team connects, the dashboard shows sync, the browser says who shared."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QDialog

from desktop.composition import Engram
from desktop.memory.team import service as team
from desktop.memory.team.state import read_state
from desktop.settings import Settings
from tests.team.helpers import sync

FIXTURE = Path(__file__).resolve().parents[1] / "graph" / "fixtures" / "python"


@pytest.fixture
def win(qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from desktop.ui.main_window import MainWindow

    root = tmp_path / "shopfront"
    shutil.copytree(FIXTURE, root)
    window = MainWindow(Engram(Settings(data_dir=tmp_path / "data")), onboarding=False, background=False)
    qtbot.addWidget(window)
    window.show()
    window.open_project(root)
    qtbot.waitUntil(lambda: window.project is not None and window.panel is not None, timeout=15_000)
    yield window
    window.close_project()
    window.wait_closed()


def test_connect_from_settings_then_see_a_teammates_memory(qtbot: Any, win: Any, make_client: Any,
                                                           admin_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from desktop.ui.dialogs.settings import SettingsDialog
    from desktop.ui.panel.detail import render_detail

    alice = make_client("alice")
    created = team.init_team(alice.db, admin_url, "acme", member="alice",
                             project_key=team.default_project_key(win.project.info.root))

    def fake_exec(dialog: SettingsDialog) -> int:
        panel = dialog.team_panel
        assert panel is not None
        qtbot.waitUntil(lambda: "Not connected" in panel.state_label.text(), timeout=5000)
        panel.url.setText(created.join_url)
        panel.test_button.click()
        qtbot.waitUntil(lambda: "this is team acme" in panel.message.text(), timeout=10_000)
        panel.name.setText("bob")
        panel.join_button.click()
        qtbot.waitUntil(lambda: "Connected to team acme" in panel.state_label.text(), timeout=10_000)
        assert panel.url.text() == ""  # the URL (with its password) now lives only in the keyring
        panel.type_boxes["preference"].setChecked(True)
        return QDialog.DialogCode.Accepted.value
    monkeypatch.setattr(SettingsDialog, "exec", fake_exec)
    win.flows.settings()
    project = win.project
    assert project.team_if_started() is not None  # background sync started
    qtbot.waitUntil(lambda: "preference" in read_state(project.db.reads.conn()).shared_types, timeout=5000)

    alice.memories.add("Never run the payment migrations twice", type="gotcha").result()
    sync(alice)
    deadline = time.monotonic() + 20
    found: list[Any] = []
    while not found and time.monotonic() < deadline:
        qtbot.wait(100)
        found = project.memories.list(limit=50)
        found = [m for m in found if m.content == "Never run the payment migrations twice"]
    assert found, "the teammate's memory never arrived"
    who = team.shared_by(project.db.reads.conn(), [found[0].id])[found[0].id]
    assert who == "alice"
    assert "shared by alice" in render_detail(found[0], [], None, "", [], who)

    # The browser's Team button keeps one of Bob's own memories personal.
    own = project.memories.add("Bob's scratch note about the cart", type="gotcha").result().id
    qtbot.waitUntil(lambda: win.browser.model.rowCount() >= 2, timeout=10_000)
    win.browser.show_memory(own)
    qtbot.waitUntil(lambda: win.browser.selected() is not None and win.browser.selected().id == own, timeout=10_000)
    menu = win.browser.share_button.menu()
    assert menu is not None
    menu.actions()[1].trigger()  # Keep personal
    qtbot.waitUntil(lambda: project.db.reads.conn().execute(
        "SELECT shared FROM team_share WHERE memory_id = ?", (own,)).fetchall() == [(0,)], timeout=10_000)

    dash = win.panel.dashboard
    dash.refresh_team()
    qtbot.waitUntil(lambda: dash.team_line.isVisibleTo(dash) and "Team acme" in dash.team_line.text(),
                    timeout=10_000)

    # Leaving from the app stops the sync, through the core's leave_team (the one `engram team leave` calls).
    engine = project.team_if_started()
    assert engine is not None and engine._thread is not None and engine._thread.is_alive()
    thread = engine._thread

    def leave(dialog: SettingsDialog) -> int:
        panel = dialog.team_panel
        assert panel is not None
        qtbot.waitUntil(panel.leave_button.isEnabled, timeout=5000)
        panel.leave_button.click()
        qtbot.waitUntil(lambda: "Left the team" in panel.message.text(), timeout=20_000)
        return QDialog.DialogCode.Accepted.value
    monkeypatch.setattr(SettingsDialog, "exec", leave)
    win.flows.settings()
    assert project.team_if_started() is None and not thread.is_alive()
    assert not read_state(project.db.reads.conn()).joined


def test_citation_chip_names_the_teammate(qtbot: Any) -> None:
    from desktop.ui.session.citations import CitationBar

    bar = CitationBar()
    qtbot.addWidget(bar)
    bar.add(7, "use argon2", shared_by="alice")
    bar.add(8, "mine")
    assert "Shared by alice" in bar.chips[7].toolTip()
    assert "Shared by" not in bar.chips[8].toolTip()
