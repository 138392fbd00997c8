"""The first usable window, driven as a user would with pytest-qt."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialog, QMessageBox

from desktop.composition import Engram
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.rows import MemoryQuery
from desktop.settings import Settings
from desktop.ui.main_window import MainWindow
from desktop.ui.memory_editor import MemoryEditor


@pytest.fixture
def window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    app = Engram(Settings(data_dir=tmp_path / "data"))
    win = MainWindow(app)
    qtbot.addWidget(win)
    win.show()
    project = tmp_path / "myproject"
    project.mkdir()
    win.open_project(project)
    qtbot.waitUntil(lambda: win.project is not None and win.browser is not None, timeout=10_000)
    yield win
    win.close_project()
    win.wait_closed()


def _rows(win: MainWindow) -> int:
    return win.browser.model.rowCount()  # type: ignore[union-attr]


def _select(qtbot, win: MainWindow, memory_id: int) -> None:  # type: ignore[no-untyped-def]
    model = win.browser.model  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: model.row_of(memory_id) is not None, timeout=5000)
    row = model.row_of(memory_id)
    win.browser.table.selectRow(row)  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: win.browser.selected() is not None and win.browser.selected().id == memory_id,
                    timeout=5000)


def _fill_editor(monkeypatch, text: str) -> None:  # type: ignore[no-untyped-def]
    def fake_exec(dialog: MemoryEditor) -> int:
        dialog.content.setPlainText(text)
        return QDialog.DialogCode.Accepted.value
    monkeypatch.setattr(MemoryEditor, "exec", fake_exec)


def test_open_add_edit_pin_forget_search(qtbot, window: MainWindow, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    win = window
    browser = win.browser
    assert browser is not None and win.memory_dock.isVisible()
    assert win.project is not None

    _fill_editor(monkeypatch, "Run the DB migrations with make migrate")
    qtbot.mouseClick(browser.add_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: _rows(win) == 1, timeout=5000)
    memory_id = browser.model.id_at(0)
    assert memory_id is not None
    assert win.project.memories.get(memory_id).source == "user_taught"

    _select(qtbot, win, memory_id)
    _fill_editor(monkeypatch, "Run the DB migrations with make migrate, never alembic directly")
    qtbot.mouseClick(browser.edit_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "alembic" in win.project.memories.get(memory_id).content, timeout=5000)
    qtbot.waitUntil(lambda: browser.model.memory_at(0) is not None
                    and "alembic" in browser.model.memory_at(0).content, timeout=5000)

    _select(qtbot, win, memory_id)
    qtbot.mouseClick(browser.pin_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.project.memories.get(memory_id).pinned, timeout=5000)
    qtbot.waitUntil(lambda: browser.model.memory_at(0).pinned, timeout=5000)

    # Search narrows the list; a query with no match empties it.
    win.project.memories.add("Sessions are cached in redis for 5 minutes", type="gotcha").result()
    qtbot.waitUntil(lambda: _rows(win) == 2, timeout=5000)
    qtbot.keyClicks(browser.search, "redis")
    qtbot.waitUntil(lambda: _rows(win) == 1, timeout=5000)
    browser.search.clear()
    qtbot.keyClicks(browser.search, "kubernetes")
    qtbot.waitUntil(lambda: _rows(win) == 0, timeout=5000)
    browser.search.clear()
    qtbot.waitUntil(lambda: _rows(win) == 2, timeout=5000)

    _select(qtbot, win, memory_id)
    qtbot.mouseClick(browser.forget_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.project.memories.get(memory_id).deprecated, timeout=5000)
    qtbot.waitUntil(lambda: _rows(win) == 1, timeout=5000)
    history = [h["action"] for h in win.project.memories.history(memory_id)]
    assert history == ["add", "edit", "pin", "forget"]


def test_shortcut_toggles_the_memory_panel(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    win = window
    assert win.memory_dock.isVisible()
    win.activateWindow()
    qtbot.keyClick(win.workspace, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: not win.memory_dock.isVisible(), timeout=3000)
    assert not win.menus.panel_action.isChecked()
    qtbot.keyClick(win.workspace, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: win.memory_dock.isVisible(), timeout=3000)


def test_list_stays_lazy_with_many_memories(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    win = window
    svc = win.project.memories  # type: ignore[union-attr]
    svc.add_many([NewMemory(content=f"bulk memory {i}", type="note") for i in range(5000)]).result()
    qtbot.waitUntil(lambda: _rows(win) == 5000, timeout=10_000)
    model = win.browser.model  # type: ignore[union-attr]
    assert len(model._cache) <= 400  # only the visible pages were fetched
    assert svc.count(MemoryQuery()) == 5000


def test_secret_in_taught_memory_is_refused_with_message(qtbot, window: MainWindow, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: shown.append(a[2]))
    _fill_editor(monkeypatch, "deploy key ghp_Zq8RkT2mWv9XbL4nPc7YdH1sJf6GuA3eKo5i")
    qtbot.mouseClick(window.browser.add_button, Qt.MouseButton.LeftButton)  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: bool(shown), timeout=5000)
    assert "secret" in shown[0]
    assert window.project.memories.count() == 0  # type: ignore[union-attr]
    QApplication.processEvents()


def test_answers_for_a_closed_view_are_dropped_quietly(qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QObject

    from desktop.ui.tasks import Tasks

    tasks = Tasks()
    gone = QObject()
    received = []

    def answer(value: object) -> None:
        gone.objectName()  # raises RuntimeError once the C++ object is deleted
        received.append(value)

    import shiboken6

    shiboken6.delete(gone)
    tasks.run(lambda: 42, answer)
    qtbot.waitUntil(lambda: tasks.pending == 0, timeout=5000)
    assert received == []
    tasks.run(lambda: 7, received.append)
    qtbot.waitUntil(lambda: received == [7], timeout=5000)
