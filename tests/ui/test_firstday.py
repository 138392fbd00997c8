"""A first day with Engram (issue 30), from the app's door: no lost input, no contradictions, no silence."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from ui_helpers import seed

from desktop.composition import Engram
from desktop.memory.projects import InstanceLock
from desktop.settings import Settings
from desktop.ui.dialogs.conflicts import ConflictsDialog
from desktop.ui.dialogs.teach import teach_dialog

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_teach_refuses_a_secret_in_the_dialog_and_keeps_the_text(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    dialog = teach_dialog(win, f"Deploy with {TOKEN}")
    qtbot.addWidget(dialog)
    dialog.show()
    assert not hasattr(dialog, "confidence")  # no number to type: taught memories start where taught ones do
    dialog.accept()
    assert dialog.isVisible() and dialog.content.toPlainText() == f"Deploy with {TOKEN}"
    said = dialog.error.text()
    assert dialog.error.isVisible() and said.count("looks like a secret") == 1 and TOKEN not in said
    dialog.content.setPlainText("Deploy with the token from the vault")
    dialog.accept()
    assert not dialog.isVisible()


def test_teach_and_friends_are_off_without_a_project(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from desktop.ui.main_window import MainWindow

    window = MainWindow(Engram(Settings(data_dir=tmp_path / "data")), onboarding=False, background=False)
    qtbot.addWidget(window)
    assert not window.menus.teach_action.isEnabled() and not window.menus.conflicts_action.isEnabled()


def test_empty_conflicts_say_nothing_disagrees(qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog = ConflictsDialog([])
    qtbot.addWidget(dialog)
    dialog.show()
    assert not dialog.heading.isVisible() and dialog.empty.isVisible()


def test_language_switch_keeps_the_session(qtbot, tour_win) -> None:  # type: ignore[no-untyped-def]
    win = tour_win
    win.session.submit()
    qtbot.waitUntil(lambda: bool(win.session.chips.chips) and not win.session.runner.is_running(), timeout=20_000)
    chips = sorted(win.session.chips.chips)
    win.session.input.setPlainText("half-typed next task")
    win.switch_language("fr")
    try:
        assert sorted(win.session.chips.chips) == chips and "Working on" in win.session.output.toPlainText()
        assert win.session.input.toPlainText() == "half-typed next task"
    finally:
        win.switch_language("en")


def test_tour_agent_feedback_hint_switcher_and_chip_body(qtbot, tour_win) -> None:  # type: ignore[no-untyped-def]
    win = tour_win
    assert win.menus.switcher.currentText() == "Guided tour (sample project)"  # not the previous project
    assert win.session.input.toPlainText() and "Try a task" in win.session.input.placeholderText()
    win.session.submit()
    qtbot.waitUntil(lambda: bool(win.session.metrics.get("used")), timeout=20_000)
    used = win.session.metrics["used"]
    svc = win.project.memories
    for mid in used:  # the same feedback path as every agent: times used, and a history entry
        assert svc.get(mid).access_count >= 1 and any(h["action"] == "use" for h in svc.history(mid))
    learned = [svc.get(i).content for i in win.session.metrics["learned"]]
    assert all("touched" not in text and "no file was changed" in text for text in learned)
    chip = win.session.chips.chips[used[0]]
    qtbot.mouseClick(chip, Qt.MouseButton.LeftButton, pos=QPoint(4, chip.height() // 2))  # the body
    qtbot.waitUntil(lambda: win.browser.selected() is not None and win.browser.selected().id == used[0],
                    timeout=5000)


def test_panel_choice_survives_opening_a_project_and_window_fits(qtbot, win, project_dir) -> None:  # type: ignore[no-untyped-def]
    seed(win)
    assert win.minimumSizeHint().width() <= 1024  # the panel never widens the window past a small screen
    win.toggle_memory_panel()
    assert not win.memory_dock.isVisible()
    win.open_project(project_dir)
    qtbot.waitUntil(lambda: win.project is not None and win.panel is not None, timeout=15_000)
    qtbot.wait(200)
    assert not win.memory_dock.isVisible()


def test_second_window_on_a_project_is_told(qtbot, win, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert not win.elsewhere.isVisible()
    other = InstanceLock(win.project.info.db_path)
    assert not other.acquire()  # this window holds it
    from desktop.ui.main_window import MainWindow

    second = MainWindow(Engram(Settings(data_dir=win.engram.settings.data_dir)), onboarding=False, background=False)
    qtbot.addWidget(second)
    second.show()
    second.open_project(Path(win.project.info.root))
    qtbot.waitUntil(lambda: second.project is not None and second.panel is not None, timeout=15_000)
    assert second.elsewhere.isVisible() and "another Engram window" in second.elsewhere.text()
    second.close_project()
    second.wait_closed()


def test_recent_project_can_be_removed(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    root = Path(win.project.info.root)
    win.close_project()
    win.wait_closed()
    recent = win.welcome.recent
    assert recent.count() == 1
    recent.setCurrentRow(0)
    win.welcome.remove_recent.trigger()
    qtbot.waitUntil(lambda: recent.count() == 0 and root not in win.engram.registry.recent(), timeout=5000)
