"""Fixtures for the desktop tests: a window on a small project with code and sample memories."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.composition import Engram
from desktop.settings import Settings

FIXTURE = Path(__file__).resolve().parents[1] / "graph" / "fixtures" / "python"

@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """A small Python project with a CLAUDE.md."""
    root = tmp_path / "shopfront"
    shutil.copytree(FIXTURE, root)
    (root / "CLAUDE.md").write_text("# Rules\n- Never call the payment gateway from tests.\n"
                                    "- Run `make test` before pushing.\n- We chose integer cents for money.\n",
                                    encoding="utf-8")
    return root


@pytest.fixture
def win(qtbot, tmp_path: Path, project_dir: Path) -> Iterator[object]:  # type: ignore[no-untyped-def]
    """A MainWindow with the project open (no automatic onboarding)."""
    from desktop.ui.main_window import MainWindow

    window = MainWindow(Engram(Settings(data_dir=tmp_path / "data")), onboarding=False, background=False)
    qtbot.addWidget(window)
    window.show()
    window.open_project(project_dir)
    qtbot.waitUntil(lambda: window.project is not None and window.panel is not None, timeout=15_000)
    yield window
    window.close_project()
    window.wait_closed()


@pytest.fixture
def tour_win(qtbot, tmp_path: Path) -> Iterator[object]:  # type: ignore[no-untyped-def]
    """A MainWindow on the guided tour's sample project (the only place the scripted agent runs)."""
    from desktop.ui.main_window import MainWindow

    window = MainWindow(Engram(Settings(data_dir=tmp_path / "data")), onboarding=False, background=False)
    qtbot.addWidget(window)
    window.show()
    window.open_tour()
    qtbot.waitUntil(lambda: window.project is not None and window.panel is not None, timeout=15_000)
    yield window
    window.close_project()
    window.wait_closed()


@pytest.fixture(autouse=True)
def _no_modal_message_boxes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """A message box would block the test forever; record it instead and answer No."""
    from PySide6.QtWidgets import QMessageBox

    shown: list[tuple[str, str]] = []

    def record(kind: str):  # type: ignore[no-untyped-def]
        def box(_parent, title, text, *a, **k):  # type: ignore[no-untyped-def]
            shown.append((kind, str(text)))
            return QMessageBox.StandardButton.No
        return box
    for kind in ("warning", "critical", "information", "question"):
        monkeypatch.setattr(QMessageBox, kind, record(kind))
    return shown
