"""The Agents tab: what each external session was told, live, with chips that flag a memory."""

from __future__ import annotations

from desktop.agents.hooks import ledger
from desktop.memory.store.memory_ops import NewMemory


def test_external_sessions_live_with_chips_and_flag(qtbot, win, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from desktop.ui.dialogs.correction import CorrectionDialog

    opened: list[int] = []
    monkeypatch.setattr(CorrectionDialog, "exec", lambda dialog: opened.append(1) or 0)  # the user cancels
    project = win.project
    ids = [project.memories.add(NewMemory(content=text, type=kind)).result(10).id
           for text, kind in (("Amounts are integer cents", "decision"), ("Never retry refunds by hand", "dead_end"))]
    view = win.panel.external
    qtbot.waitUntil(lambda: view.empty.isVisibleTo(view), timeout=5000)
    ledger.record_shown(project.db, "cc-1", "claude-code", "session_start", [ids[0]], "startup").result(10)
    ledger.record_shown(project.db, "cc-1", "claude-code", "after_tool", [ids[1]], "core/refunds.py").result(10)
    ledger.mark_cited(project.db, "cc-1", [ids[0]]).result(10)
    # the writer's change notice reaches the view without a manual refresh
    qtbot.waitUntil(lambda: view.sessions.count() == 1 and len(view.bars) == 2, timeout=8000)
    item = view.sessions.item(0).text()
    assert "Claude Code" in item and "2 shown, 1 cited, 0 flagged" in item
    first, second = view.bars
    assert list(first.chips) == [ids[0]] and "cited" in first.chips[ids[0]].label.text()
    assert second.chips[ids[1]].dead_end
    with qtbot.waitSignal(view.correct_requested, timeout=3000) as sig:
        second.chips[ids[1]].flag.click()
    assert sig.args == [ids[1]]
    qtbot.waitUntil(lambda: any(r.flagged for r in ledger.session_rows(project.db, "cc-1")), timeout=5000)
    qtbot.waitUntil(lambda: opened == [1], timeout=5000)  # the app's one correction flow opened


def test_rows_written_by_another_process_show_up(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    """Hooks write from the agent's process: the tab polls while visible."""
    from desktop.composition import Engram
    from desktop.settings import Settings

    win.set_memory_panel_visible(True)
    win.panel.setCurrentWidget(win.panel.external)
    view = win.panel.external
    mid = win.project.memories.add(NewMemory(content="Amounts are integer cents", type="decision")).result(10).id
    other = Engram(Settings(data_dir=win.project.settings.data_dir)).open_project(win.project.info.root,
                                                                                   remember=False)
    try:
        ledger.record_shown(other.db, "gm-1", "gemini", "prompt", [mid], "cents?").result(10)
    finally:
        other.close()
    qtbot.waitUntil(lambda: view.sessions.count() == 1 and "Gemini CLI" in view.sessions.item(0).text(),
                    timeout=10_000)
