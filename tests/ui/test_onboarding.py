"""First-run onboarding, rule-file import, card review, import/export/delete everything."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from PySide6.QtCore import Qt
from ui_helpers import seed

from desktop.agents.providers import DEFAULT_OLLAMA_MODEL
from desktop.memory.lifecycle.rule_files import find_rule_files, rule_type, scan_rule_files
from desktop.memory.store.rows import MemoryQuery
from desktop.ui.dialogs.onboarding import Onboarding

RULES = Path(__file__).resolve().parents[1] / "lifecycle" / "rule_fixtures"


def test_rule_files_found_and_typed(tmp_path: Path) -> None:
    for rel in ("CLAUDE.md", "AGENTS.md", "GEMINI.md", ".cursorrules", ".cursor/rules/style.mdc",
                ".github/copilot-instructions.md"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("- Never commit directly to main.\n", encoding="utf-8")
    assert len(find_rule_files(tmp_path)) == 6
    assert rule_type("Never call the gateway from tests") == "gotcha"
    assert rule_type("Run `make test` before pushing") == "workflow_recipe"
    assert rule_type("We chose integer cents for money") == "decision"
    assert rule_type("Prefer dataclasses over dicts") == "preference"
    # Five files say the same rule: it is proposed once.
    assert [m.content for m in scan_rule_files(tmp_path)] == ["Never commit directly to main."]


def test_onboarding_indexes_imports_and_confirms_what_was_kept(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    dialog = Onboarding(win.project, win.tasks, win.graph, llm_configured=False, parent=win)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.start()
    assert dialog.no_llm.isVisible() and "Ollama" in dialog.no_llm.text()
    # The chat model the Ollama provider uses by default, not an embedding model (which sets up no agent).
    assert f"ollama pull {DEFAULT_OLLAMA_MODEL}" in dialog.no_llm.text() and "embedding" not in dialog.no_llm.text()
    qtbot.waitUntil(lambda: dialog.index_finished() and len(dialog.proposed) == 3, timeout=20_000)
    qtbot.waitUntil(lambda: "Indexed" in dialog.index_label.text(), timeout=5000)
    report = dialog._report
    files, modules = report.indexed + report.unchanged, report.modules
    assert dialog.index_label.text().startswith(f"Indexed {files} file{'s' * (files != 1)} "
                                                f"in {modules} module{'s' * (modules != 1)}.")
    assert not dialog.forget_folder.isVisible()
    dialog.index_next.click()
    assert dialog.pages.currentIndex() == 1 and dialog.rules_list.count() == 3
    assert "CLAUDE.md" in dialog.rules_title.text() and dialog.rules_list.item(0).toolTip() == "CLAUDE.md › Rules"
    dialog.rules_list.item(1).setCheckState(Qt.CheckState.Unchecked)   # per-item choice
    dialog.import_selected()
    # What the person kept ticked is confirmed there and then: no second review of the same rules.
    svc = win.project.memories
    qtbot.waitUntil(lambda: len(svc.list(MemoryQuery(sources=["imported"]))) == 2 and all(
        m.user_verified and m.confidence >= 0.8 for m in svc.list(MemoryQuery(sources=["imported"]))),
        timeout=5000)
    assert not dialog.isVisible() and dialog.pages.currentIndex() != 2
    assert svc.counts().needs_review == 0


def test_onboarding_flag_and_rules_of_a_real_repository(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    # The laravel-love repository's own CLAUDE.md (an include line) and AGENTS.md (a commented shell block).
    for name in ("CLAUDE.md", "AGENTS.md"):
        shutil.copy(RULES / "laravel-love" / name, Path(win.project.info.root) / name)
    win.flows.start_onboarding()
    dialog = win.flows.onboarding
    qtbot.waitUntil(lambda: len(dialog.proposed) > 20, timeout=20_000)
    texts = [m.content for m in dialog.proposed]
    assert not any(t.startswith("@") or "This file provides guidance" in t for t in texts)
    assert "Run all tests (uses in-memory SQLite): `docker compose exec php85 composer test`" in texts
    dialog.index_next.click()
    dialog.import_selected()
    qtbot.waitUntil(lambda: win.prefs.onboarding_done, timeout=5000)
    assert win.project.memories.counts().memories == len(texts)


def test_onboarding_says_when_a_folder_has_no_code(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from desktop.composition import Engram
    from desktop.settings import Settings
    from desktop.ui.main_window import MainWindow

    photos = tmp_path / "Holiday photos"
    photos.mkdir()
    for n in range(3):
        (photos / f"IMG_{n}.jpg").write_bytes(b"\xff\xd8\xff\xe0" + bytes(200))
    window = MainWindow(Engram(Settings(data_dir=tmp_path / "data")), onboarding=True, background=False)
    qtbot.addWidget(window)
    window.show()
    window.open_project(photos)
    qtbot.waitUntil(lambda: window.flows.onboarding is not None and window.flows.onboarding.index_finished(),
                    timeout=15_000)
    dialog = window.flows.onboarding
    qtbot.waitUntil(lambda: "No source code here" in dialog.index_label.text(), timeout=5000)
    assert "3 files" in dialog.index_label.text() and dialog.forget_folder.isVisible()
    assert photos in window.engram.registry.recent()
    dialog.forget_folder.click()        # nothing to index: close it and take it off the recent list
    qtbot.waitUntil(lambda: window.project is None and photos not in window.engram.registry.recent(),
                    timeout=10_000)
    qtbot.waitUntil(lambda: window.welcome.recent.count() == 0, timeout=5000)
    window.wait_closed()


def test_app_works_without_llm_or_graph(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    dialog = Onboarding(win.project, win.tasks, None, llm_configured=False)
    qtbot.addWidget(dialog)
    dialog.start()
    assert "not available" in dialog.index_label.text() and dialog.index_finished()


def test_export_import_and_delete_everything(qtbot, win, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    seed(win)
    out = {fmt: tmp_path / f"export.{fmt}" for fmt in ("json", "markdown", "claude-md", "agents-md")}
    for fmt, path in out.items():
        win.flows.export_to(fmt, str(path))
    qtbot.waitUntil(lambda: all(p.exists() and p.stat().st_size for p in out.values()), timeout=5000)
    assert len(json.loads(out["json"].read_text())["memories"]) == 7
    block = out["claude-md"].read_text()
    assert "## Project memory (Engram)" in block and "### Gotchas" in block
    win.flows.delete_everything()
    qtbot.waitUntil(lambda: win.project.memories.count() == 0, timeout=10_000)
    win.flows.import_from(out["json"])
    qtbot.waitUntil(lambda: win.project.memories.count() == 7, timeout=10_000)
    win.flows.import_from(out["agents-md"])             # AGENTS.md parses back into the same memories
    qtbot.waitUntil(lambda: "already known" in win.statusBar().currentMessage(), timeout=10_000)
    assert win.project.memories.count() == 7


def test_review_memories_card_by_card(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    from desktop.memory.store.memory_ops import NewMemory

    svc = win.project.memories
    ids = [r.id for r in svc.add_many([NewMemory(content=f"Learned fact number {n} about the cart", type="pattern",
                                                 needs_review=True, source="observer_inferred")
                                       for n in range(3)]).result()]
    win.flows.review_pending()
    qtbot.waitUntil(lambda: win.flows.onboarding is not None and bool(win.flows.onboarding.seeded), timeout=5000)
    dialog = win.flows.onboarding
    assert dialog.card_title.text().startswith("<b>1/3")
    dialog.forget.click()
    dialog.confirm_all.click()
    qtbot.waitUntil(lambda: all(svc.get(i).user_verified for i in ids if not svc.get(i).deprecated)
                    and sum(svc.get(i).deprecated for i in ids) == 1, timeout=5000)
