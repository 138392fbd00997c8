"""Take the screenshots in docs/screenshots/ from a real run of the app.

Run under Xvfb:  xvfb-run -a -s "-screen 0 1440x900x24" .venv/bin/python docs/screenshots/make_screenshots.py
It builds a demo project (the code-graph fixtures plus a CLAUDE.md), seeds sample
memories, runs the offline scripted agent, and grabs each view with QWidget.grab().
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QCoreApplication  # noqa: E402
from PySide6.QtGui import QColor, QPalette  # noqa: E402
from PySide6.QtWidgets import QWidget  # noqa: E402

log = logging.getLogger("engram.ui.screenshots")

CLAUDE_MD = """# Project rules
- Never call the payment gateway from tests; use the FakeGateway fixture.
- Run the whole suite with `make test` before pushing.
- We chose integer cents for money instead of floats.
- Prefer dataclasses over dicts for domain objects.
"""

MEMORIES = [
    ("gotcha", "Discounts are applied before tax in cart.py; applying them after tax double-counts VAT.",
     ["python/shop/cart.py"], 0.92),
    ("decision", "Money is stored as integer cents everywhere (no floats), see models.py.",
     ["python/shop/models.py"], 0.95),
    ("dead_end", "Tried caching cart totals in a module-level dict: broke concurrent checkouts. Do not retry.",
     ["python/shop/cart.py"], 0.85),
    ("workflow_recipe", "To add a payment method: 1) subclass Gateway 2) register it in checkout 3) add a fake.",
     [], 0.82),
    ("error_pattern", "Checkout tests hang without REDIS_URL; export it or use the in-memory session store.",
     ["python/tests/test_cart.py"], 0.88),
    ("module_insight", "The TypeScript client mirrors shop models; change both when a field is added.",
     ["ts/src/index.ts"], 0.81),
    ("preference", "Keep functions under 40 lines; extract helpers instead of adding flags.", [], 0.9),
    ("requirement", "Prices shown to users must always include VAT.", ["python/shop/cart.py"], 0.97),
]


def wait(cond: Callable[[], bool], timeout: float = 20.0, *, quiet: bool = False) -> bool:
    """Process events until `cond` holds."""
    end = time.time() + timeout
    while time.time() < end:
        QCoreApplication.processEvents()
        if cond():
            return True
        time.sleep(0.01)
    if not quiet:
        log.warning("timed out waiting")
    return False


def settle(seconds: float = 0.4) -> None:
    """Let timers, pool answers and paints run."""
    wait(lambda: False, seconds, quiet=True)


def shot(widget: QWidget, name: str) -> None:
    """Grab a widget into docs/screenshots/<name>.png."""
    settle(0.3)
    widget.grab().save(str(OUT / f"{name}.png"))
    log.info("saved %s", name)


def build_demo(base: Path) -> Path:
    """The demo project folder: fixture sources in several languages and a CLAUDE.md."""
    project = base / "shopfront"
    shutil.copytree(ROOT / "tests" / "graph" / "fixtures", project)
    (project / "CLAUDE.md").write_text(CLAUDE_MD, encoding="utf-8")
    return project


def seed(win: object) -> None:
    """Sample memories, one needing review and a conflicting pair."""
    from desktop.memory.store.memory_ops import NewMemory

    project = win.project  # type: ignore[attr-defined]
    items = [NewMemory(content=c, type=t, related_files=f, confidence=conf, source="user_taught")
             for t, c, f, conf in MEMORIES]
    items.append(NewMemory(content="Cart totals are recomputed on every request; no cache.", type="pattern",
                           source="observer_inferred", needs_review=True, confidence=0.7,
                           related_files=["python/shop/cart.py"]))
    results = project.memories.add_many(items).result()
    old = project.memories.add(NewMemory(content="Sessions expire after 24 hours.", type="decision",
                                         confidence=0.8)).result()
    new = project.memories.add(NewMemory(content="Sessions expire after 2 hours since the security review.",
                                         type="decision", confidence=0.85,
                                         relations=[{"type": "contradicts", "id": old.id}])).result()
    project.memories.edit(old.id, {"relations": [{"type": "contradicts", "id": new.id}]}).result()
    project.memories.edit(results[0].id, {"content": MEMORIES[0][1] + " (checked in review)"}).result()


def main() -> int:
    """Run the app on the demo project and save every view."""
    logging.basicConfig(level=logging.INFO)
    base = Path(tempfile.mkdtemp(prefix="engram-shots-"))
    os.environ["ENGRAM_DATA_DIR"] = str(base / "data")
    from desktop.composition import Engram
    from desktop.settings import Settings
    from desktop.ui.app import create_app, install_translators
    from desktop.ui.main_window import MainWindow

    app = create_app(sys.argv)
    install_translators(app, "en")
    engram = Engram(Settings(data_dir=base / "data"))
    win = MainWindow(engram, onboarding=False)
    win.resize(1440, 880)
    win.show()
    settle()
    shot(win, "welcome")
    # Session with citations, tool calls and chips: the guided tour's sample project, the only
    # place the scripted (model-free) agent runs; a user's project needs a real model.
    win.open_tour()
    wait(lambda: win.project is not None and win.panel is not None)
    settle()
    win.session.provider.setCurrentIndex(max(0, win.session.provider.findData("scripted")))
    win.session.input.setPlainText("Fix the checkout discount bug in cart.py")
    win.session.submit()
    wait(lambda: not win.session.runner.is_running(), 30)
    wait(lambda: win.flows.summary is not None, 10)
    settle(0.6)
    win.session.tools.expandAll()
    summary = win.flows.summary
    if summary is not None:
        summary.resize(760, 620)
        shot(summary, "session_summary")
        summary.rows[0].ok.click() if summary.rows else None
        summary.save_button.click()
    shot(win, "session")

    tour_root = win.project.info.root
    win.open_project(build_demo(base))
    wait(lambda: win.project is not None and win.panel is not None and win.project.info.root != tour_root)
    seed(win)
    graph = win.graph
    graph.index()
    settle()

    panel = win.panel
    panel.setCurrentWidget(panel.dashboard)
    panel.dashboard.refresh()
    settle(1.0)
    shot(win, "dashboard")
    panel.setCurrentWidget(panel.modules)
    settle(0.8)
    if panel.modules.cards:
        panel.modules.cards[0].toggle.setChecked(True)
    panel.modules.target.setText("python/shop/models.py")
    panel.modules.run_impact()
    settle(0.8)
    shot(win, "module_map")
    panel.setCurrentWidget(panel.browser)
    win.browser.search.setText("cart discount")
    settle(0.8)
    wait(lambda: win.browser.model.row_of(1) is not None, 10)
    win.browser.table.selectRow(win.browser.model.row_of(1) or 0)
    wait(lambda: "Provenance" in win.browser.detail.toPlainText(), 30)
    shot(win, "browser")
    panel.setCurrentWidget(panel.ask)
    panel.ask.question.setText("how is money stored?")
    panel.ask.ask()
    wait(lambda: panel.ask.answer is not None, 30)
    shot(win, "ask_memory")

    from desktop.ui.dialogs.correction import CorrectionDialog

    memory = win.project.memories.get(1)
    dialog = CorrectionDialog(memory, win)
    dialog.set_kind("incorrect")
    dialog.text.setPlainText("Discounts are applied after tax since v2; cart.py rounds per line.")
    dialog.show()
    shot(dialog, "correction_dialog")
    dialog.close()

    from desktop.ui.adapters.lifecycle import find_conflicts
    from desktop.ui.dialogs.conflicts import ConflictsDialog

    conflicts = ConflictsDialog(find_conflicts(win.project), win)
    conflicts.show()
    shot(conflicts, "conflicts")
    conflicts.close()

    from desktop.ui.dialogs.onboarding import Onboarding

    onboarding = Onboarding(win.project, win.tasks, graph, llm_configured=False, parent=win)
    onboarding.show()
    onboarding.start()
    wait(lambda: onboarding.index_finished() and bool(onboarding.proposed), 20)
    settle(0.5)
    shot(onboarding, "onboarding_indexing")
    onboarding.index_next.click()
    settle()
    shot(onboarding, "onboarding_rules")
    onboarding.import_selected()
    wait(lambda: onboarding.pages.currentIndex() == 2, 10)
    shot(onboarding, "onboarding_review")
    onboarding.confirm_remaining()

    from desktop.ui.dialogs.settings import SettingsDialog

    settings = SettingsDialog(engram.settings, win.prefs, win)
    settings.set_keyring_available(False)
    settings.show()
    shot(settings, "settings_models")
    settings.tabs.setCurrentIndex(3)
    shot(settings, "settings_trust")
    settings.tabs.setCurrentIndex(1)
    shot(settings, "settings_data")
    settings.close()

    win.switch_language("fr")
    settle(1.0)
    win.panel.setCurrentWidget(win.panel.dashboard)
    settle(1.0)
    shot(win, "french")
    win.switch_language("en")

    dark = QPalette()
    for role, colour in ((QPalette.ColorRole.Window, "#1f2228"), (QPalette.ColorRole.WindowText, "#e6e6e6"),
                         (QPalette.ColorRole.Base, "#16181d"), (QPalette.ColorRole.AlternateBase, "#23262d"),
                         (QPalette.ColorRole.Text, "#e6e6e6"), (QPalette.ColorRole.Button, "#2a2d34"),
                         (QPalette.ColorRole.ButtonText, "#e6e6e6"), (QPalette.ColorRole.Highlight, "#3d6dcc"),
                         (QPalette.ColorRole.PlaceholderText, "#8a8f98"), (QPalette.ColorRole.Mid, "#3a3e46"),
                         (QPalette.ColorRole.Midlight, "#33363d")):
        dark.setColor(role, QColor(colour))
    app.setStyle("Fusion")
    app.setPalette(dark)
    from desktop.ui.theme import apply_theme

    apply_theme(app)
    win.switch_language("en")  # rebuild views so icons pick up the dark palette
    win.panel.setCurrentWidget(win.panel.dashboard)
    settle(1.2)
    shot(win, "dark")
    win.close()
    win.wait_closed()  # the project closes off the GUI thread; let it finish before the app goes
    shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
