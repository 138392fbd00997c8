"""Correction, conflicts, trust and settings dialogs, driven without blocking."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMessageBox
from ui_helpers import seed

from desktop.memory.preferences import ProjectPrefs
from desktop.memory.store.memory_ops import NewMemory
from desktop.ui import trust
from desktop.ui.adapters.lifecycle import find_conflicts, supersession_chain
from desktop.ui.dialogs.conflicts import ConflictsDialog
from desktop.ui.dialogs.correction import CorrectionDialog
from desktop.ui.dialogs.settings import SettingsDialog
from desktop.ui.dialogs.trust import TrustPanel, offer_regression


def _correct(qtbot, win, monkeypatch, memory_id: int, kind: str, text: str = "") -> None:  # type: ignore[no-untyped-def]
    def fake_exec(dialog: CorrectionDialog) -> int:
        dialog.set_kind(kind)
        if text:
            dialog.text.setPlainText(text)
        assert dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).isEnabled()
        return QDialog.DialogCode.Accepted.value
    monkeypatch.setattr(CorrectionDialog, "exec", fake_exec)
    win.flows.correct(memory_id)


@pytest.mark.parametrize("kind,text", [("outdated", ""), ("outdated", "Now applied after tax"),
                                       ("partially_wrong", "Discounts are applied before tax, per line"),
                                       ("does_not_apply", ""), ("incorrect", "Discounts never stack")])
def test_each_correction_has_its_effect(qtbot, win, monkeypatch, kind: str, text: str) -> None:  # type: ignore[no-untyped-def]
    ids = seed(win)
    mid = ids[0]
    svc = win.project.memories
    _correct(qtbot, win, monkeypatch, mid, kind, text)
    if kind == "partially_wrong":
        qtbot.waitUntil(lambda: "per line" in svc.get(mid).content, timeout=5000)
        assert not svc.get(mid).deprecated and svc.get(mid).user_verified
        assert [h["action"] for h in svc.history(mid)][-1] == "edit"
        return
    qtbot.waitUntil(lambda: svc.get(mid).deprecated, timeout=5000)
    m = svc.get(mid)
    if kind == "does_not_apply":
        assert "not-applicable" in m.tags
    if text:
        qtbot.waitUntil(lambda: any(r["type"] == "superseded_by" for r in svc.get(mid).relations), timeout=5000)
        chain = supersession_chain(win.project, svc.get(mid))
        assert len(chain) == 2 and chain[1].content == text and chain[1].source == "user_taught"
    assert win.prefs.corrected == 1


def test_incorrect_requires_a_correction(qtbot) -> None:  # type: ignore[no-untyped-def]
    from desktop.memory.types import Memory

    dialog = CorrectionDialog(Memory(id=1, type="gotcha", content="old text"))
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    dialog.set_kind("incorrect")
    assert not ok.isEnabled()
    dialog.text.setPlainText("new text")
    assert ok.isEnabled()
    dialog.set_kind("partially_wrong")
    dialog.text.setPlainText("old text")
    assert not ok.isEnabled()          # an unchanged refinement changes nothing


@pytest.mark.parametrize("choice", ["keep_new", "keep_old", "keep_both"])
def test_conflicts_resolved_with_superseded_by_chain(qtbot, win, choice: str) -> None:  # type: ignore[no-untyped-def]
    svc = win.project.memories
    old = svc.add(NewMemory(content="Sessions expire after 24 hours", type="decision")).result().id
    new = svc.add(NewMemory(content="Sessions expire after 2 hours", type="decision",
                            relations=[{"type": "contradicts", "id": old}])).result().id
    svc.edit(old, {"relations": [{"type": "contradicts", "id": new}]}).result()
    conflicts = find_conflicts(win.project)
    assert len(conflicts) == 1 and conflicts[0].old.id == old and conflicts[0].new.id == new
    win.flows._show_conflicts(conflicts)
    dialog: ConflictsDialog = win.flows.conflicts
    dialog.cards[0].buttons[choice].click()
    assert not dialog.cards and dialog.empty.isVisibleTo(dialog)
    if choice == "keep_both":
        qtbot.waitUntil(lambda: not find_conflicts(win.project), timeout=5000)
        assert not svc.get(old).deprecated and not svc.get(new).deprecated
        return
    loser, winner = (old, new) if choice == "keep_new" else (new, old)
    qtbot.waitUntil(lambda: svc.get(loser).deprecated, timeout=5000)
    assert [m.id for m in supersession_chain(win.project, svc.get(loser))] == [loser, winner]
    assert not find_conflicts(win.project)


def test_trust_levels_thresholds_and_advancement(qtbot) -> None:  # type: ignore[no-untyped-def]
    assert [lv.min_confidence for lv in trust.LEVELS] == [0.80, 0.65, 0.55, 0.45]
    p = ProjectPrefs(trust_level=1, sessions=2, suggested=10, confirmed=6)
    assert not trust.can_advance(p)
    p.sessions = 3
    assert trust.can_advance(p)
    p.confirmed = 4
    assert not trust.can_advance(p)                      # under half confirmed
    p2 = ProjectPrefs(trust_level=2, sessions=10, suggested=100, corrected=1)
    assert trust.can_advance(p2)
    p2.corrected = 0
    assert not trust.can_advance(p2)                     # at least one correction needed
    p2.corrected = 6
    assert not trust.can_advance(p2)                     # over 5%
    assert not trust.can_advance(ProjectPrefs(trust_level=3, sessions=500))  # opt-in only
    panel = TrustPanel(ProjectPrefs(trust_level=1, sessions=3, suggested=2, confirmed=2))
    qtbot.addWidget(panel)
    assert panel.level_radios[1].isEnabled()             # earned
    assert "earned" in panel.progress.text()
    locked = TrustPanel(ProjectPrefs(trust_level=1))
    qtbot.addWidget(locked)
    assert not locked.level_radios[1].isEnabled()


def test_raising_to_autonomous_needs_acknowledgement(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    prefs = ProjectPrefs(trust_level=3)
    panel = TrustPanel(prefs)
    qtbot.addWidget(panel)
    standard = TrustPanel(ProjectPrefs(trust_level=2))
    qtbot.addWidget(standard)
    assert not standard.level_radios[3].isEnabled()  # Autonomous only from Confident
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.No)
    panel.level_radios[3].click()
    assert prefs.trust_level == 3 and panel.level_radios[2].isChecked()
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    panel.level_radios[3].click()
    assert prefs.trust_level == 4


def test_regression_is_offered_never_forced(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    prefs = ProjectPrefs(trust_level=3, sessions=20)
    assert not trust.should_offer_regression(prefs, 2)
    assert trust.should_offer_regression(prefs, 3)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.No)
    assert not offer_regression(None, prefs, 3)
    assert prefs.trust_level == 3 and not trust.should_offer_regression(prefs, 4)  # not asked again this session
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    prefs.regression_declined_at = -1
    assert offer_regression(None, prefs, 3) and prefs.trust_level == 2


def test_three_flags_in_a_session_offer_regression(qtbot, win, monkeypatch, _no_modal_message_boxes) -> None:  # type: ignore[no-untyped-def]
    ids = seed(win)
    win.prefs.trust_level = 2
    for mid in ids[:3]:
        _correct(qtbot, win, monkeypatch, mid, "outdated")
        qtbot.waitUntil(lambda m=mid: win.project.memories.get(m).deprecated, timeout=5000)
    assert any("flagged 3 memories" in text for kind, text in _no_modal_message_boxes if kind == "question")
    assert win.prefs.trust_level == 2                    # the answer was No: nothing changed


def test_write_policy_auto_memory_and_preset_saved_per_project(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    prefs = win.prefs
    panel = TrustPanel(prefs)
    qtbot.addWidget(panel)
    panel.policy.setCurrentIndex(panel.policy.findData("read_only"))
    panel.auto_memory.setChecked(False)
    panel.preset.setCurrentIndex(panel.preset.findData("conservative"))
    win.flows.save_preferences()
    qtbot.waitUntil(lambda: win.project.preferences.load().write_policy == "read_only", timeout=5000)
    stored = win.project.preferences.load()
    assert not stored.auto_memory and stored.promotion_preset == "conservative"
    assert not win.project.preferences.auto_memory()     # the core reads the same switch
    audited = {e["action"]: e for e in win.project.memories.audit_log(limit=10)}
    assert audited["write_policy"]["actor"] == "user"    # each choice is in the audit log
    assert audited["write_policy"]["detail"] == {"key": "write_policy", "old": "confirm_each", "value": "read_only"}
    assert {"auto_memory", "promotion_preset"} <= set(audited) and "trust_level" not in audited


def test_settings_dialog_keys_language_and_data(qtbot, win, monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from desktop.memory import secrets_store

    saved = {}
    monkeypatch.setattr(secrets_store, "keyring_available", lambda: False)
    monkeypatch.setattr(secrets_store, "set_api_key", lambda p, k: saved.update({p: k}))
    opened = []

    def fake_exec(dialog: SettingsDialog) -> int:
        opened.append(dialog)
        qtbot.waitUntil(lambda: "No secure keyring" in dialog.key_status.text(), timeout=5000)
        assert not dialog.save_key_button.isEnabled()
        dialog.set_keyring_available(True)
        dialog.api_key.setText("sk-test-not-a-real-key")
        dialog.save_key_button.click()
        dialog.llm.setCurrentIndex(dialog.llm.findData("ollama"))
        dialog.llm_model.setText("qwen3:8b")
        assert dialog.trust_panel is not None
        return QDialog.DialogCode.Accepted.value
    monkeypatch.setattr(SettingsDialog, "exec", fake_exec)
    win.flows.settings()
    qtbot.waitUntil(lambda: saved.get("openai") == "sk-test-not-a-real-key", timeout=5000)
    assert win.engram.settings.llm_provider == "ollama" and win.engram.settings.llm_model == "qwen3:8b"
    qtbot.waitUntil(lambda: (win.engram.settings.data_dir / "settings.json").exists(), timeout=5000)
    assert "sk-test" not in (win.engram.settings.data_dir / "settings.json").read_text()
