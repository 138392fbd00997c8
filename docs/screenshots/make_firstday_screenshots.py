"""Take the screenshots of issue 30's screens (a first day with Engram) from a real run of the app.

Run under Xvfb:
  xvfb-run -a -s "-screen 0 1440x900x24" .venv/bin/python docs/screenshots/make_firstday_screenshots.py
It opens real folders: a code project with the laravel-love repository's CLAUDE.md and
AGENTS.md (tests/lifecycle/rule_fixtures, see SOURCES.md there), a folder of photos, a folder
the process cannot read, and the guided tour; each screen is saved as firstday_<name>.png.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(OUT))

from make_screenshots import settle, wait  # noqa: E402
from PySide6.QtWidgets import QWidget  # noqa: E402

log = logging.getLogger("engram.ui.screenshots")
RULES = ROOT / "tests" / "lifecycle" / "rule_fixtures" / "laravel-love"


def shot(widget: QWidget, name: str) -> None:
    """Grab a widget into docs/screenshots/firstday_<name>.png."""
    settle(0.4)
    widget.grab().save(str(OUT / f"firstday_{name}.png"))
    log.info("saved %s", name)


def code_project(base: Path) -> Path:
    """The graph fixtures (several languages) with a real repository's rule files and one huge file."""
    project = base / "laravel-love-demo"
    shutil.copytree(ROOT / "tests" / "graph" / "fixtures", project)
    for name in ("CLAUDE.md", "AGENTS.md"):
        shutil.copy(RULES / name, project / name)
    (project / "python" / "generated_table.py").write_text("ROW = 1\n" * 160_000, encoding="utf-8")
    return project


def main() -> int:
    """Walk a new user's first day and save each screen."""
    logging.basicConfig(level=logging.INFO)
    base = Path(tempfile.mkdtemp(prefix="engram-firstday-"))
    os.environ["ENGRAM_DATA_DIR"] = str(base / "data")
    from desktop.composition import Engram
    from desktop.memory.graph.report import IndexProgress
    from desktop.memory.store.memory_ops import NewMemory
    from desktop.settings import Settings
    from desktop.ui.app import create_app, install_translators
    from desktop.ui.main_window import MainWindow

    app = create_app(sys.argv)
    install_translators(app, "en")
    engram = Engram(Settings(data_dir=base / "data"))
    win = MainWindow(engram, onboarding=True, background=False)
    win.resize(1280, 820)
    win.show()
    settle()

    # 1. A real code project: indexing progress, what was skipped, whole rules from real files.
    project = code_project(base)
    win.open_project(project)
    wait(lambda: win.flows.onboarding is not None, 30)
    dialog = win.flows.onboarding
    assert dialog is not None
    dialog._progress = IndexProgress("closure", 201_617, 0)  # the phase the issue saw as "201617 of 0"
    dialog._show_progress()
    shot(dialog, "onboarding_progress")
    wait(lambda: dialog.index_finished() and "Indexed" in dialog.index_label.text(), 60)
    wait(lambda: len(dialog.proposed) > 0, 20)
    shot(dialog, "onboarding_indexed")
    dialog.index_next.click()
    settle()
    dialog.resize(900, 620)
    shot(dialog, "onboarding_rules")
    dialog.import_selected()
    wait(lambda: not dialog.isVisible(), 20)
    settle(1.0)
    # 2. The session view with no model: one signal, Start waits.
    shot(win, "no_model")
    # 3. Memories apart from the code index; health that informs.
    svc = win.project.memories
    svc.add(NewMemory(content="To run the tests: docker compose exec php85 composer test (in-memory SQLite)",
                      type="workflow_recipe", source="user_taught", user_verified=True,
                      related_files=["python/shop/cart.py"])).result()
    panel = win.panel
    panel.setCurrentWidget(panel.dashboard)
    panel.dashboard.refresh()
    settle(1.5)
    shot(panel, "health")
    panel.setCurrentWidget(panel.browser)
    panel.browser.apply_filters()
    settle(1.0)
    panel.browser.table.selectRow(0)
    settle(1.0)
    shot(panel, "browse_memories")
    code = panel.browser.type_filter.findData("code")
    panel.browser.type_filter.setCurrentIndex(code)
    settle(1.0)
    shot(panel, "browse_code_index")
    panel.browser.type_filter.setCurrentIndex(0)
    panel.setCurrentWidget(panel.modules)
    panel.modules.refresh()
    settle(1.5)
    shot(panel, "module_map")
    # 4. Teach with a token: refused in the dialog, the text kept.
    from desktop.ui.dialogs.teach import teach_dialog

    teach = teach_dialog(win, "Deploy with the token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")
    teach.show()
    teach.accept()
    shot(teach, "teach_refused")
    teach.reject()
    # 5. No conflicts: said so.
    win.flows.resolve_conflicts()
    wait(lambda: win.flows.conflicts is not None, 10)
    shot(win.flows.conflicts, "conflicts_none")
    win.flows.conflicts.reject()
    # 6. Two windows on one project: the second says so.
    second = MainWindow(Engram(Settings(data_dir=base / "data")), onboarding=False, background=False)
    second.resize(1100, 700)
    second.show()
    second.open_project(project)
    wait(lambda: second.project is not None and second.panel is not None, 30)
    shot(second, "open_elsewhere")
    second.close()
    second.wait_closed()
    # 7. A folder of photos, and a folder Engram cannot read.
    photos = base / "Holiday photos"
    photos.mkdir()
    for n in range(12):
        (photos / f"IMG_{n:04}.jpg").write_bytes(b"\xff\xd8\xff\xe0" + bytes(500))
    win.open_project(photos)
    wait(lambda: win.project is not None and win.project.info.root == photos.resolve(), 30)
    wait(lambda: win.flows.onboarding is not None and win.flows.onboarding.index_finished(), 30)
    settle(1.0)
    shot(win.flows.onboarding, "onboarding_photos")
    win.flows.onboarding.forget_folder.click()
    wait(lambda: win.project is None, 30)
    settle(1.0)
    shot(win, "welcome_after_forget")
    locked = Path("/proc/1/map_files")
    win.open_project(locked)
    wait(lambda: win.project is not None and win.flows.onboarding is not None
         and win.flows.onboarding.index_finished(), 30)
    settle(1.0)
    shot(win.flows.onboarding, "onboarding_unreadable")
    win.flows.onboarding.close()
    # 8. The guided tour: a hint of what to type, the switcher names it, chips that open, feedback.
    win.open_tour()
    wait(lambda: win.project is not None and "tour" in str(win.project.info.root), 30)
    settle(1.0)
    shot(win, "tour_start")
    win.session.submit()
    wait(lambda: not win.session.runner.is_running() and win.flows.summary is not None, 60)
    settle(1.0)
    shot(win, "tour_with_summary")
    summary = win.flows.summary
    if summary is not None:
        shot(summary, "tour_summary")
        summary.later_button.click()
    chip = next(iter(win.session.chips.chips.values()))
    chip.open_clicked.emit(chip.memory_id)
    settle(1.5)
    shot(win, "tour_memory_used")
    # 9. French: the same screens in the other language.
    win.switch_language("fr")
    settle(1.0)
    shot(win, "tour_french")
    from desktop.ui.dialogs.settings import SettingsDialog

    settings = SettingsDialog(win.engram.settings, win.prefs, win)
    settings.show()
    settle(0.6)
    shot(settings, "settings_french")
    settings.reject()
    win.switch_language("en")
    win.close()
    win.wait_closed()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
