"""First-run onboarding, rule-file import, card review, import/export/delete everything."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt
from ui_helpers import seed

from desktop.agents.providers import DEFAULT_OLLAMA_MODEL
from desktop.memory.store.rows import MemoryQuery
from desktop.ui.adapters.portable import classify_rule, find_rule_files, parse_rules
from desktop.ui.dialogs.onboarding import Onboarding


def test_rule_files_found_and_typed(tmp_path: Path) -> None:
    for rel in ("CLAUDE.md", "AGENTS.md", ".cursorrules", ".cursor/rules/style.mdc", ".github/copilot-instructions.md"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("- Never commit directly to main.\n", encoding="utf-8")
    assert len(find_rule_files(tmp_path)) == 5
    assert classify_rule("Never call the gateway from tests") == "gotcha"
    assert classify_rule("Run `make test` before pushing") == "workflow_recipe"
    assert classify_rule("We chose integer cents for money") == "decision"
    assert classify_rule("Prefer dataclasses over dicts") == "preference"
    items = parse_rules("# Build\n- Run `make test` before pushing.\n\nA paragraph rule that spans\ntwo lines.\n",
                        "CLAUDE.md")
    assert [i.type for i in items] == ["workflow_recipe", "note"] and items[0].tags == ["imported-rules", "build"]
    assert items[1].content == "A paragraph rule that spans two lines."


def test_onboarding_indexes_imports_and_reviews(qtbot, win) -> None:  # type: ignore[no-untyped-def]
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
    assert dialog.index_label.text() == (f"Indexed {files} file{'s' * (files != 1)} "
                                         f"in {modules} module{'s' * (modules != 1)}.")
    dialog.index_next.click()
    assert dialog.pages.currentIndex() == 1 and dialog.rules_list.count() == 3
    dialog.rules_list.item(1).setCheckState(Qt.CheckState.Unchecked)   # per-item review
    dialog.import_selected()
    qtbot.waitUntil(lambda: dialog.pages.currentIndex() == 2, timeout=5000)
    assert len(dialog.seeded) == 2 and dialog.card_title.text().startswith("<b>1/2")
    dialog.card_text.setPlainText("Never call the payment gateway from tests; use FakeGateway.")
    dialog.confirm.click()
    assert dialog.card_title.text().startswith("<b>2/2")
    dialog.forget.click()
    svc = win.project.memories
    first, second = dialog.seeded
    qtbot.waitUntil(lambda: svc.get(second.id).deprecated and svc.get(first.id).user_verified, timeout=5000)
    assert "FakeGateway" in svc.get(first.id).content and svc.get(first.id).source == "imported"
    assert svc.count(MemoryQuery(sources=["imported"], statuses=["active", "deprecated"])) == 2


def test_confirm_all_remaining_and_onboarding_flag(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    win.flows.start_onboarding()
    dialog = win.flows.onboarding
    qtbot.waitUntil(lambda: len(dialog.proposed) == 3, timeout=20_000)
    dialog.index_next.click()
    dialog.import_selected()
    qtbot.waitUntil(lambda: dialog.pages.currentIndex() == 2, timeout=5000)
    dialog.confirm_all.click()
    imported = MemoryQuery(sources=["imported"])
    qtbot.waitUntil(lambda: all(m.user_verified for m in win.project.memories.list(imported)), timeout=5000)
    assert win.prefs.onboarding_done


def test_app_works_without_llm_or_graph(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    dialog = Onboarding(win.project, win.tasks, None, llm_configured=False)
    qtbot.addWidget(dialog)
    dialog.start()
    assert "not available" in dialog.index_label.text() and dialog.index_finished()


def test_export_import_and_delete_everything(qtbot, win, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    seed(win)
    out = {fmt: tmp_path / f"export.{fmt}" for fmt in ("json", "markdown", "claude", "agents")}
    for fmt, path in out.items():
        win.flows.export_to(fmt, str(path))
    qtbot.waitUntil(lambda: all(p.exists() and p.stat().st_size for p in out.values()), timeout=5000)
    assert len(json.loads(out["json"].read_text())["memories"]) == 7
    assert out["claude"].read_text().startswith("# CLAUDE.md") and "## Gotcha" in out["claude"].read_text()
    win.flows.delete_everything()
    qtbot.waitUntil(lambda: win.project.memories.count() == 0, timeout=10_000)
    win.flows.import_from(out["json"])
    qtbot.waitUntil(lambda: win.project.memories.count() == 7, timeout=10_000)
    win.flows.import_from(out["agents"])             # AGENTS.md parses back into typed memories
    qtbot.waitUntil(lambda: win.project.memories.count() > 7, timeout=10_000)
