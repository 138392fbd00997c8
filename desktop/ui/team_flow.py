"""Wiring of Settings → Team to the core's team actions, each run on a pool thread.

Connecting stores the URL in the keyring and starts the project's background sync;
leaving stops it. The GUI thread only sends requests and shows answers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication

from desktop.ui.dialogs.team import TeamPanel

if TYPE_CHECKING:
    from desktop.memory.team.engine import SyncStatus
    from desktop.ui.main_window import MainWindow


def _t(text: str) -> str:
    return QCoreApplication.translate("TeamPanel", text)


def wire_team_panel(panel: TeamPanel, window: MainWindow) -> None:
    """Fill the panel from the open project and route its requests to the core."""
    from desktop.memory.team import service as team
    from desktop.memory.team.state import TeamState, read_state

    project = window.project
    if project is None:
        panel.setEnabled(False)
        return
    tasks = window.tasks

    def refresh() -> None:
        tasks.run(lambda: read_state(project.db.reads.conn()), panel.show_state, panel.show_error)

    def test(url: str) -> None:
        panel.show_message(_t("Testing…"))
        tasks.run(lambda: team.test_connection(url),
                  lambda info: panel.show_message(_t("Connected: this is team %1.").replace("%1", info.name)),
                  panel.show_error)

    def join(url: str, name: str) -> None:
        panel.show_message(_t("Connecting…"))

        def work() -> TeamState:
            state = project.join_team(url, member=name or None)
            _ = project.team  # background sync starts now
            return state

        def done(state: TeamState) -> None:
            panel.url.clear()  # it is in the keyring now
            panel.show_message(_t("Connected. Shared memories sync in the background."))
            panel.show_state(state)
        tasks.run(work, done, panel.show_error)

    def leave() -> None:
        def work() -> TeamState:
            project.leave_team()
            return read_state(project.db.reads.conn())

        def done(state: TeamState) -> None:
            panel.show_message(_t("Left the team; the memories on this computer are kept."))
            panel.show_state(state)
        tasks.run(work, done, panel.show_error)

    panel.test_requested.connect(test)
    panel.join_requested.connect(join)
    panel.leave_requested.connect(leave)
    panel.types_changed.connect(lambda types: tasks.run(lambda: team.set_shared_types(project.db, types),
                                                        None, panel.show_error))
    refresh()


def sync_status_text(status: SyncStatus) -> str:
    """The dashboard's one line about team sync (empty when the project is not in a team)."""
    from desktop.ui.dialogs.team import error_words

    if not status.joined:
        return ""
    when = status.last_sync_at[:19].replace("T", " ") if status.last_sync_at else _t("never")
    text = (_t("Team %1: last sync %2, %3 change(s) waiting").replace("%1", status.team_name)
            .replace("%2", when).replace("%3", str(status.queued)))
    if status.error_code:
        text += " · " + error_words(status.error_code, status.error)
    return text
