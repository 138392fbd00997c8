"""The agent session view: the tour's scripted agent, streaming, chips, folding, flag, teach entry points;
the scripted agent never runs on (or writes to) a user's project, and with no model the view says how to connect one."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog
from ui_helpers import seed

from desktop.memory.citations import find_citations
from desktop.ui.dialogs.correction import CorrectionDialog
from desktop.ui.memory_editor import MemoryEditor
from desktop.ui.session.citations import FOLD_AFTER, CitationBar


def _run(qtbot, win, prompt: str) -> None:  # type: ignore[no-untyped-def]
    win.session.input.setPlainText(prompt)
    qtbot.mouseClick(win.session.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.session.metrics.get("session_id") is not None, timeout=15_000)


def test_scripted_session_streams_cited_answer_with_chips(qtbot, tour_win, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    ids = seed(tour_win)
    monkeypatch.setattr(tour_win.flows, "_summarise", lambda *a: None)
    _run(qtbot, tour_win, "fix the cart discount")
    view = tour_win.session
    assert view.provider.currentData() == "scripted"
    assert "Working on: fix the cart discount" in view.output.toPlainText()
    assert len(view.chips.chips) >= 6
    assert view.chips.folded() and view.chips.fold_button.isVisible()
    assert "Used" in view.chips.fold_button.text()
    dead_end = ids[2]
    assert view.chips.chips[dead_end].dead_end and view.chips.chips[dead_end].property("deadEnd")
    assert not view.chips.chips[ids[0]].dead_end
    assert view.tools.topLevelItemCount() >= 2          # search_memory and analyze_impact, folded
    assert not view.tools.topLevelItem(0).isExpanded()
    view.chips.fold_button.click()
    assert not view.chips.folded()
    assert view.metrics["learned"]                       # confirm_each: one candidate proposed
    learned = tour_win.project.memories.get(view.metrics["learned"][0])
    assert learned.candidate and learned.source == "agent_explicit"


def test_fold_threshold_is_five(qtbot) -> None:  # type: ignore[no-untyped-def]
    bar = CitationBar()
    qtbot.addWidget(bar)
    for i in range(FOLD_AFTER):
        bar.add(i + 1, f"memory {i}")
    assert not bar.folded()
    bar.add(99, "one more")
    assert bar.folded()
    assert bar.fold_button.text() == "Used 6 memories"


def test_flag_on_chip_opens_correction_and_applies_it(qtbot, tour_win, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    ids = seed(tour_win)
    monkeypatch.setattr(tour_win.flows, "_summarise", lambda *a: None)
    _run(qtbot, tour_win, "cart discount")
    chip = tour_win.session.chips.chips[ids[0]]

    def fake_exec(dialog: CorrectionDialog) -> int:
        dialog.set_kind("outdated")
        dialog.text.setPlainText("Discounts are applied after tax since v2")
        return QDialog.DialogCode.Accepted.value
    monkeypatch.setattr(CorrectionDialog, "exec", fake_exec)
    chip.flag.click()
    qtbot.waitUntil(lambda: tour_win.project.memories.get(ids[0]).deprecated, timeout=15_000)
    old = tour_win.project.memories.get(ids[0])
    new_id = next(r["id"] for r in old.relations if r["type"] == "superseded_by")
    assert "after tax" in tour_win.project.memories.get(new_id).content
    assert tour_win.flows.flags_this_session == 1


def test_remember_command_teaches_immediately(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    win.session.input.setPlainText("/remember The staging DB is read-only on Fridays")
    win.session.submit()
    qtbot.waitUntil(lambda: win.project.memories.count() == 1, timeout=5000)
    m = win.project.memories.list()[0]
    assert m.source == "user_taught" and "Fridays" in m.content


def test_actually_banner_and_teach_from_output_and_file(qtbot, win, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    seen = []

    def fake_exec(dialog: MemoryEditor) -> int:
        seen.append((dialog.content.toPlainText(), dialog.files.text()))
        if not dialog.content.toPlainText():
            dialog.content.setPlainText("cart.py is the pricing entry point")
        return QDialog.DialogCode.Accepted.value
    monkeypatch.setattr(MemoryEditor, "exec", fake_exec)
    win.session.input.setPlainText("Actually the cart uses euros, not dollars")
    assert win.session.banner.isVisible()
    win.session.banner_teach.click()
    assert seen[-1][0].startswith("Actually the cart")
    win.session.teach_requested.emit("selected agent output", [])
    assert seen[-1][0] == "selected agent output"
    index = win.session.fs.index(str(win.project.info.root / "shop" / "cart.py"))
    assert win.session.file_path_at(index) == "shop/cart.py"
    win.session.teach_requested.emit("", ["shop/cart.py"])
    assert seen[-1][1] == "shop/cart.py"
    qtbot.waitUntil(lambda: win.project.memories.count() == 3, timeout=5000)


def test_stop_ends_a_running_session(qtbot, tour_win, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    seed(tour_win)
    monkeypatch.setattr(tour_win.flows, "_summarise", lambda *a: None)
    monkeypatch.setattr("desktop.ui.adapters.agent.SessionRequest.delay", 0.3)
    tour_win.session.input.setPlainText("a long cart task")
    tour_win.session.submit()
    qtbot.waitUntil(lambda: tour_win.session.stop_button.isEnabled(), timeout=5000)
    tour_win.session.stop_button.click()
    qtbot.waitUntil(lambda: tour_win.session.metrics.get("cancelled") is True, timeout=10_000)
    assert tour_win.session.start_button.isEnabled()


def test_citation_parser() -> None:
    """One parser: what counts as cited is what the view shows as a chip, with or without words."""
    found = find_citations("see [Memory #12: use argon2] and [Memory #3: x], and [Memory #7]")
    assert [(c.memory_id, c.brief) for c in found] == [(12, "use argon2"), (3, "x"), (7, "")]


def test_scripted_agent_refuses_a_user_project_and_writes_nothing(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    from desktop.agents.model_setup import ModelSetup

    seed(win)
    before = win.project.memories.count()
    view = win.session
    assert view.provider.currentData() != "scripted"       # never the default on a user's project
    view.provider.setCurrentIndex(view.provider.findData("scripted"))
    view.start("fix the cart discount")
    qtbot.waitUntil(lambda: view.metrics.get("error") is True, timeout=10_000)
    assert win.project.memories.count() == before
    view.show_model_setup(ModelSetup("none", "", ollama_running=False))
    assert view.notice.isVisible() and "ollama.com" in view.notice.text.text()
    assert "ollama pull qwen2.5-coder" in view.notice.text.text()  # the provider's default chat model
    view.show_model_setup(ModelSetup("none", "", ollama_running=True, ollama_models=["qwen2.5-coder:7b"]))
    assert "qwen2.5-coder:7b" in view.notice.text.text()
    view.show_model_setup(ModelSetup("ollama", "qwen2.5-coder:7b"))
    assert not view.notice.isVisible()
