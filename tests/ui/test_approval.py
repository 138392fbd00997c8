"""The approval dialog of the app's agent: diff preview, allow once / always this session / deny, trust levels."""

from __future__ import annotations

import threading
from pathlib import Path

from desktop.agents.tools.registry import ApprovalRequest
from desktop.ui.dialogs.approval import ApprovalBridge, pre_allowed, preview, session_policy


def _ask_in_thread(policy, request: ApprovalRequest) -> tuple[threading.Thread, list[bool]]:  # type: ignore[no-untyped-def]
    out: list[bool] = []
    thread = threading.Thread(target=lambda: out.append(policy.permits(request)), daemon=True)
    thread.start()
    return thread, out


def test_edit_shows_a_diff_and_always_is_remembered_for_the_session(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "app.py").write_text("rate = 1\n", encoding="utf-8")
    bridge = ApprovalBridge(tmp_path)
    opened = []
    bridge.asked.connect(opened.append)
    policy = session_policy(bridge, 1)
    edit = ApprovalRequest("s", "Edit", {"file_path": "app.py", "old_string": "rate = 1", "new_string": "rate = 2"},
                           "edit app.py")
    thread, out = _ask_in_thread(policy, edit)
    qtbot.waitUntil(lambda: bool(opened), timeout=5000)
    dialog = opened[0]
    text = dialog.body.toPlainText()
    assert "-rate = 1" in text and "+rate = 2" in text and dialog.deny.isDefault()
    dialog.always.click()
    thread.join(5)
    assert out == [True] and policy.remember == {"Edit": True}
    # Remembered: the next edit in this session is not asked about.
    assert policy.permits(edit) and len(opened) == 1


def test_bash_shows_command_and_folder_and_deny_refuses(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bridge = ApprovalBridge(tmp_path)
    opened = []
    bridge.asked.connect(opened.append)
    policy = session_policy(bridge, 2)
    run = ApprovalRequest("s", "Bash", {"command": "rm -rf build"}, "run: rm -rf build")
    assert preview(run, tmp_path) == "rm -rf build"
    thread, out = _ask_in_thread(policy, run)
    qtbot.waitUntil(lambda: bool(opened), timeout=5000)
    from PySide6.QtWidgets import QLabel

    assert any(str(tmp_path) in label.text() for label in opened[0].findChildren(QLabel))  # the folder
    opened[0].deny.click()
    thread.join(5)
    assert out == [False] and "Bash" not in policy.remember


def test_trust_levels_pre_allow_less_at_lower_levels() -> None:
    assert pre_allowed(1) == (False, False) and pre_allowed(2) == (False, False)
    assert pre_allowed(3) == (True, False) and pre_allowed(4) == (True, True)
