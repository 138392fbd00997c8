"""Session-end summary: ok / edit / forget, save all confirmed, review later, and the showing-less rules."""

from __future__ import annotations

from ui_helpers import seed

from desktop.memory.preferences import ProjectPrefs
from desktop.memory.store.memory_ops import NewMemory
from desktop.ui import trust


def _learned(win, n: int = 3) -> list[int]:  # type: ignore[no-untyped-def]
    items = [NewMemory(content=f"learned fact number {i} about the cart", type="gotcha", source="agent_explicit",
                       confidence=0.6, candidate=True, needs_review=True) for i in range(n)]
    return [r.id for r in win.project.memories.add_many(items, actor="agent").result()]


def _finish(qtbot, win, used: list[int], learned: list[int]) -> None:  # type: ignore[no-untyped-def]
    win.flows.session_finished({"used": used, "learned": learned})


def test_summary_ok_edit_forget_and_save_all(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    used = seed(win)[:2]
    learned = _learned(win, 4)
    _finish(qtbot, win, used, learned)
    qtbot.waitUntil(lambda: win.flows.summary is not None, timeout=5000)
    dialog = win.flows.summary
    labels = dialog.findChildren(type(dialog.rows[0].text))
    # No unmeasured "tokens saved" claim any more.
    assert len(dialog.rows) == 4 and "tokens" not in "".join(w.text() for w in labels)
    dialog.rows[0].ok.click()
    dialog.rows[1].edit.click()
    dialog.rows[1].editor.setPlainText("learned fact, reworded by the user")
    dialog.rows[2].forget.click()
    dialog.save_button.click()          # row 3 untouched: confirmed by "Save all confirmed"
    svc = win.project.memories
    qtbot.waitUntil(lambda: svc.get(learned[3]).user_verified, timeout=5000)
    # Confirmed by a person: at least where taught memories start (0.8), whatever it was learned at.
    assert svc.get(learned[0]).user_verified and abs(svc.get(learned[0]).confidence - 0.8) < 1e-6
    assert svc.get(learned[1]).content == "learned fact, reworded by the user"
    assert svc.get(learned[2]).deprecated
    assert win.prefs.sessions == 1 and win.prefs.confirmed == 3 and win.prefs.summary_dismiss_streak == 0


def test_review_later_keeps_undecided_for_review(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    learned = _learned(win, 2)
    _finish(qtbot, win, [], learned)
    qtbot.waitUntil(lambda: win.flows.summary is not None, timeout=5000)
    win.flows.summary.later_button.click()
    assert win.prefs.summary_dismiss_streak == 1      # no interaction: counts as dismissed
    m = win.project.memories.get(learned[0])
    assert m.needs_review and not m.user_verified


def test_summary_flag_opens_correction(qtbot, win, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    used = seed(win)[:1]
    opened = []
    monkeypatch.setattr(win.flows, "correct", lambda mid: opened.append(mid))
    win.flows.last_summary = None
    from desktop.ui.dialogs.summary import SessionSummary

    dialog = SessionSummary([win.project.memories.get(used[0])], [])
    qtbot.addWidget(dialog)
    dialog.correct_requested.connect(win.flows.correct)
    from PySide6.QtWidgets import QPushButton

    next(b for b in dialog.findChildren(QPushButton) if b.text() == "Flag").click()
    assert opened == used and dialog.interacted


def test_showing_less_rules() -> None:
    p = ProjectPrefs(trust_level=2)
    assert trust.summary_mode(p, 1) == "full"
    p.summary_dismiss_streak = 3
    assert trust.summary_mode(p, 3) == "quiet"          # dismissed 3 times: only for > 3 learned
    assert trust.summary_mode(p, 4) == "full"           # never suppressed entirely
    assert trust.summary_mode(ProjectPrefs(trust_level=3), 2) == "review_only"
    assert trust.summary_mode(ProjectPrefs(trust_level=4), 9) == "hidden"


def test_level_three_shows_only_memories_needing_review(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    win.prefs.trust_level = 3
    learned = _learned(win, 2)
    done = win.project.memories.add(NewMemory(content="already verified knowledge", type="note")).result().id
    _finish(qtbot, win, [], [*learned, done])
    qtbot.waitUntil(lambda: win.flows.summary is not None, timeout=5000)
    assert {r.memory.id for r in win.flows.summary.rows} == set(learned)


def test_quiet_and_hidden_summary_stay_available_on_demand(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    win.prefs.trust_level = 4
    learned = _learned(win, 1)
    _finish(qtbot, win, [], learned)
    qtbot.waitUntil(lambda: win.flows.last_summary is not None, timeout=5000)
    assert win.flows.summary is None
    win.flows.show_summary()
    assert win.flows.summary is not None and len(win.flows.summary.rows) == 1
