"""Opening a project in the app brings its code graph up to date and watches it (not only onboarding)."""

from __future__ import annotations

from pathlib import Path

from desktop.composition import Engram
from desktop.settings import Settings


def _count(win, sql: str) -> int:  # type: ignore[no-untyped-def]
    return int(win.project.db.reads.conn().execute(sql).fetchall()[0][0])


def test_reopened_project_is_indexed_watched_and_its_memories_anchored(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                       project_dir: Path) -> None:
    from desktop.ui.main_window import MainWindow

    window = MainWindow(Engram(Settings(data_dir=tmp_path / "data")), onboarding=False, background=True)
    qtbot.addWidget(window)
    window.show()
    window.open_project(project_dir)
    qtbot.waitUntil(lambda: window.project is not None and window.panel is not None, timeout=15_000)
    try:
        qtbot.waitUntil(lambda: _count(window, "SELECT count(*) FROM graph_files") > 0, timeout=60_000)
        graph = window.project.graph
        assert graph.watcher.running
        source = next(p for p in sorted(project_dir.rglob("*.py")))
        rel = source.relative_to(project_dir).as_posix()
        mid = window.project.memories.add("this module is imported everywhere", related_files=[rel]
                                          ).result(10).id
        qtbot.waitUntil(lambda: bool(window.project.memories.get(mid).code_anchors), timeout=10_000)
        # The watcher re-indexes an edited file without any user action.
        (project_dir / "added_later.py").write_text("def fresh():\n    return 1\n", encoding="utf-8")
        qtbot.waitUntil(lambda: _count(window, "SELECT count(*) FROM graph_files WHERE file_path = "
                                               "'added_later.py'") == 1, timeout=20_000)
    finally:
        window.close_project()
        window.wait_closed()
