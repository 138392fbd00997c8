"""Each user action has one implementation, in the core's Project, and each door is a thin call to it.

For every action the app's real flow (dialogs accepted as a user would) and the ``engram``
command run on the same project; a spy on the Project method shows both doors went through
it, and the results are the same: teach, correct, export (the same bytes, the user's lines
in CLAUDE.md kept), preferences (audited alike), leave a team, and the guided tour.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QDialog
from ui_helpers import seed

from desktop.cli.main import main as cli
from desktop.memory.preferences import Preferences
from desktop.memory.project import Project

Spy = Callable[[type, str], list[tuple[Any, ...]]]


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Spy:
    """Wrap ``cls.name`` so every call is recorded (args and keyword args) and still runs."""
    def wrap(cls: type, name: str) -> list[tuple[Any, ...]]:
        real, seen = getattr(cls, name), []

        def recorded(self: Any, *args: Any, **kwargs: Any) -> Any:
            seen.append((*args, kwargs))
            return real(self, *args, **kwargs)
        monkeypatch.setattr(cls, name, recorded)
        return seen
    return wrap


def _cli(win: Any, *args: str) -> int:
    """``engram ARGS`` on the window's project (the options after the command's own words)."""
    return cli([*args, "--project", str(win.project.info.root), "--data-dir", str(win.engram.settings.data_dir)])


def test_teach_from_the_app_and_the_cli(qtbot: Any, win: Any, spy: Spy, monkeypatch: pytest.MonkeyPatch) -> None:
    from desktop.ui.memory_editor import MemoryEditor

    calls = spy(Project, "teach")

    def accept(dialog: MemoryEditor) -> int:
        dialog.content.setPlainText("Deploys go through make release only")
        return QDialog.DialogCode.Accepted.value
    monkeypatch.setattr(MemoryEditor, "exec", accept)
    win.flows.teach()
    qtbot.waitUntil(lambda: win.project.memories.count() == 1, timeout=5000)
    assert _cli(win, "add", "The staging database is read-only on Fridays", "--type", "gotcha") == 0
    assert [c[-1].get("actor", "user") for c in calls] == ["user", "cli"]
    app_taught, cli_taught = sorted(win.project.memories.list(), key=lambda m: m.id)
    for m in (app_taught, cli_taught):  # "typed by a person = verified", decided in one place
        assert (m.source, m.user_verified, m.candidate, m.confidence) == ("user_taught", True, False, 0.8)


def test_correct_from_the_app_and_the_cli(qtbot: Any, win: Any, spy: Spy, monkeypatch: pytest.MonkeyPatch) -> None:
    from desktop.ui.dialogs.correction import CorrectionDialog

    ids = seed(win)
    calls = spy(Project, "correct")

    def accept(dialog: CorrectionDialog) -> int:
        dialog.set_kind("incorrect")
        dialog.text.setPlainText("Discounts are applied after tax since v2")
        return QDialog.DialogCode.Accepted.value
    monkeypatch.setattr(CorrectionDialog, "exec", accept)
    win.flows.correct(ids[0])
    qtbot.waitUntil(lambda: win.project.memories.get(ids[0]).deprecated, timeout=10_000)
    assert _cli(win, "correct", str(ids[1]), "--kind", "incorrect", "--text", "Money is stored as decimals") == 0
    assert [(c[0], c[1]) for c in calls] == [(ids[0], "incorrect"), (ids[1], "incorrect")]
    for old in (ids[0], ids[1]):
        mem = win.project.memories.get(old)
        new = next(r["id"] for r in mem.relations if r["type"] == "superseded_by")
        assert mem.deprecated and win.project.memories.get(new).source == "user_taught"


@pytest.mark.parametrize("fmt", ["json", "markdown", "claude-md", "agents-md"])
def test_the_app_and_the_cli_export_the_same_file(qtbot: Any, win: Any, spy: Spy, tmp_path: Path, fmt: str) -> None:
    seed(win)
    for upkeep in (win.project.anchors, win.project.conflicts):  # anchoring edits the memories just added
        assert upkeep.wait_idle()
    calls = spy(Project, "export")
    mine = "# Our rules\r\nKeep this CRLF line, and this one.\r\n"
    by_app, by_cli = tmp_path / "app" / "CLAUDE.md", tmp_path / "cli" / "CLAUDE.md"
    for path in (by_app, by_cli):
        path.parent.mkdir()
        path.write_bytes(mine.encode())
    win.flows.export_to(fmt, str(by_app))
    qtbot.waitUntil(lambda: len(calls) == 1 and by_app.read_bytes() != mine.encode(), timeout=10_000)
    assert _cli(win, "export", "--format", fmt, "-o", str(by_cli)) == 0
    assert len(calls) == 2 and by_app.read_bytes() == by_cli.read_bytes()
    if fmt in ("claude-md", "agents-md"):  # the user's own lines are kept, byte for byte
        assert by_app.read_bytes().startswith(mine.encode()) and b"engram:begin" in by_app.read_bytes()
    elif fmt == "json":
        assert len(json.loads(by_app.read_text())["memories"]) == 7


def test_an_exported_claude_md_keeps_the_users_lines_on_the_next_export(qtbot: Any, win: Any,
                                                                       tmp_path: Path) -> None:
    """The app used to overwrite CLAUDE.md whole; now a second export changes only Engram's block."""
    ids = seed(win)
    path = tmp_path / "CLAUDE.md"
    path.write_text("# Our rules\n- Never deploy on Fridays.\n", encoding="utf-8")
    win.flows.export_to("claude-md", str(path))
    qtbot.waitUntil(lambda: "engram:begin" in path.read_text(), timeout=10_000)
    win.project.memories.forget(ids[0]).result(10)
    before = path.read_text()
    win.flows.export_to("claude-md", str(path))
    qtbot.waitUntil(lambda: path.read_text() != before, timeout=10_000)
    text = path.read_text()
    assert text.startswith("# Our rules\n- Never deploy on Fridays.\n") and text.count("engram:begin") == 1


def test_preferences_from_the_app_and_the_cli_are_audited_alike(qtbot: Any, win: Any, spy: Spy,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from desktop.agents.hooks.handlers import trust_threshold
    from desktop.ui.dialogs.settings import SettingsDialog

    saves = spy(Preferences, "save")
    sets = spy(Preferences, "set")

    def accept(dialog: SettingsDialog) -> int:
        panel = dialog.trust_panel
        assert panel is not None
        panel.policy.setCurrentIndex(panel.policy.findData("read_only"))
        panel.prefs.trust_level = 2  # what clicking the earned level does
        return QDialog.DialogCode.Accepted.value
    monkeypatch.setattr(SettingsDialog, "exec", accept)
    win.flows.settings()
    qtbot.waitUntil(lambda: win.project.preferences.load().write_policy == "read_only", timeout=5000)
    assert _cli(win, "preferences", "--write-policy", "automatic", "--auto-memory", "off") == 0
    assert len(saves) == 1 and len(sets) == 1
    entries = [e for e in reversed(win.project.memories.audit_log(limit=20))
               if e["action"] in ("trust_level", "write_policy", "auto_memory")]
    assert [(e["action"], e["actor"], e["detail"]["old"], e["detail"]["value"]) for e in entries] == [
        ("trust_level", "user", 1, 2), ("write_policy", "user", "confirm_each", "read_only"),
        ("write_policy", "cli", "read_only", "automatic"), ("auto_memory", "cli", "on", "off")]
    # What the hooks read is what both doors wrote: the Standard level's floor.
    assert trust_threshold(win.project) == pytest.approx(0.65)


def test_leave_a_team_from_the_app_and_the_cli(qtbot: Any, win: Any, spy: Spy,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from desktop.ui.dialogs.settings import SettingsDialog

    calls = spy(Project, "leave_team")

    def leave(dialog: SettingsDialog) -> int:
        assert dialog.team_panel is not None
        dialog.team_panel.leave_requested.emit()
        qtbot.waitUntil(lambda: len(calls) == 1, timeout=5000)
        return QDialog.DialogCode.Rejected.value
    monkeypatch.setattr(SettingsDialog, "exec", leave)
    win.flows.settings()
    assert _cli(win, "team", "leave") == 0
    assert len(calls) == 2  # the team's own tests (tests/team) leave a real PostgreSQL team this way


def test_the_tour_from_the_app_and_the_cli(qtbot: Any, tour_win: Any, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import desktop.tour

    real, sessions = desktop.tour.tour_session, []

    def recorded(project: Project, task: str, **kwargs: Any) -> Any:
        sessions.append(task)
        return real(project, task, **kwargs)
    monkeypatch.setattr(desktop.tour, "tour_session", recorded)
    monkeypatch.setattr(tour_win.flows, "_summarise", lambda *a: None)
    tour_win.session.start("fix the cart discount")
    qtbot.waitUntil(lambda: tour_win.session.metrics.get("session_id") is not None, timeout=20_000)
    other = tmp_path / "other-data"
    shutil.copytree(tour_win.engram.settings.data_dir / "tour", other / "tour")
    assert cli(["tour", "fix the cart discount", "--data-dir", str(other), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert sessions == ["fix the cart discount", "fix the cart discount"]
    assert result["outcome"] == "success" and "[Memory #" in result["final_text"]
    assert "Working on: fix the cart discount" in tour_win.session.output.toPlainText()
