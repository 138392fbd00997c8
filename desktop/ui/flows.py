"""The flows that cross views: teach, correct, session end, conflicts, review, settings, import/export.

Owned by the main window; every read runs on a pool thread, every write goes
through the writer, and answers come back on the GUI thread through Tasks.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMessageBox

from desktop.memory.lifecycle.portable import ImportReport
from desktop.memory.store.errors import ValidationError
from desktop.memory.types import Memory
from desktop.ui import trust
from desktop.ui.adapters import lifecycle
from desktop.ui.dialogs.conflicts import ConflictsDialog
from desktop.ui.dialogs.correction import CorrectionDialog
from desktop.ui.dialogs.onboarding import Onboarding
from desktop.ui.dialogs.settings import SettingsDialog
from desktop.ui.dialogs.summary import SessionSummary, apply_decisions
from desktop.ui.dialogs.teach import teach_dialog
from desktop.ui.dialogs.trust import offer_regression
from desktop.ui.messages import describe_error
from desktop.ui.team_flow import wire_team_panel

if TYPE_CHECKING:
    from desktop.ui.main_window import MainWindow

log = logging.getLogger("engram.ui")


class Flows(QObject):
    """Dialog flows for the open project of `window`."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self.flags_this_session = 0
        self.summary: SessionSummary | None = None
        self.last_summary: tuple[list[Memory], list[Memory]] | None = None
        self.onboarding: Onboarding | None = None
        self.conflicts: ConflictsDialog | None = None

    # -- helpers ---------------------------------------------------------------------------
    def _status(self, text: str) -> None:
        self.w.statusBar().showMessage(text, 5000)

    def _failed(self, exc: BaseException) -> None:
        QMessageBox.warning(self.w, self.tr("Not saved"), describe_error(exc))

    def _watch(self, make: Any, success: str) -> bool:
        try:
            future = make()
        except (ValidationError, ValueError) as exc:
            self._failed(exc)
            return False
        self.w.tasks.watch(future, lambda _r: self._status(success), self._failed)
        return True

    def save_counters(self) -> None:
        """Store the counters of the trust rules (sessions, confirmed, ...): never a preference."""
        if self.w.project is not None:
            self.w.tasks.watch(self.w.project.preferences.save_counters(self.w.prefs), None, self._failed)

    def save_preferences(self) -> None:
        """Store what the user chose (trust level, write policy, ...): each change is audited."""
        project = self.w.project
        if project is None:
            return
        try:
            future = project.preferences.save(self.w.prefs)
        except ValidationError as exc:
            self._failed(exc)
            return
        self.w.tasks.watch(future, None, self._failed)

    # -- teach -------------------------------------------------------------------------------
    def teach(self, text: str = "", files: list[str] | None = None) -> None:
        """Open the teach dialog pre-filled, and save what the user writes."""
        if self.w.project is None:
            return
        dialog = teach_dialog(self.w, text, files)
        if not dialog.exec():
            return
        values = dialog.values()
        project = self.w.project
        self._watch(lambda: project.teach(**values), self.tr("Memory saved"))

    def remember(self, text: str) -> None:
        """`/remember TEXT`: saved at once."""
        if self.w.project is not None:
            project = self.w.project
            self._watch(lambda: project.remember(text), self.tr("Remembered: %1").replace("%1", text[:60]))

    # -- correct -----------------------------------------------------------------------------
    def correct(self, memory_id: int) -> None:
        """Fetch the memory (pool thread), then open the correction dialog."""
        if self.w.project is None:
            return
        project = self.w.project
        self.w.tasks.run(lambda: project.memories.get(memory_id), self._correct_memory, self._failed)

    def _correct_memory(self, memory: Memory) -> None:
        dialog = CorrectionDialog(memory, self.w)
        project = self.w.project
        if not dialog.exec() or project is None:
            return
        kind, text = dialog.kind(), dialog.correction_text()
        if self._watch(lambda: project.correct(memory.id, kind, text), self.tr("Correction saved")):
            self.flags_this_session += 1
            self.w.prefs.corrected += 1
            if trust.should_offer_regression(self.w.prefs, self.flags_this_session) \
                    and offer_regression(self.w, self.w.prefs, self.flags_this_session):
                self.save_preferences()  # the trust level stepped back: the user's choice, audited
            else:
                self.save_counters()

    # -- session end -------------------------------------------------------------------------
    def session_finished(self, metrics: dict[str, Any]) -> None:
        """Count the session, refresh the measured effect, and show the summary the trust rules allow."""
        w = self.w
        if w.project is None or metrics.get("error"):
            return
        w.prefs.sessions += 1
        if w.panel is not None:
            w.panel.dashboard.schedule_refresh()
        used, learned = list(metrics.get("used", [])), list(metrics.get("learned", []))
        w.prefs.suggested += len(learned)
        self.save_counters()
        project = w.project
        self.w.tasks.run(lambda: project.memories.get_many(used + learned),
                         lambda found: self._summarise(metrics, [found[i] for i in used if i in found],
                                                       [found[i] for i in learned if i in found]))

    def _summarise(self, metrics: dict[str, Any], used: list[Memory], learned: list[Memory]) -> None:
        self.last_summary = (used, learned)
        mode = trust.summary_mode(self.w.prefs, len(learned))
        if mode in ("hidden", "quiet"):
            self._status(self.tr("Session finished. Its summary is in View ▸ Last Session Summary."))
            return
        self.show_summary(mode)

    def show_summary(self, mode: str = "full") -> None:
        """Open the (non-blocking) summary of the last session."""
        if self.last_summary is None:
            self._status(self.tr("No session has finished yet."))
            return
        used, learned = self.last_summary
        self.summary = SessionSummary(used, learned, mode=mode, parent=self.w)
        self.summary.correct_requested.connect(self.correct)
        self.summary.finished.connect(lambda _r, d=self.summary, ls=learned: self._summary_closed(d, ls))
        # Beside the transcript, not over it: over the memory panel, at the window's right edge.
        geo = self.w.geometry()
        self.summary.resize(max(self.summary.minimumWidth(), min(680, geo.width() // 2)),
                            max(self.summary.minimumHeight(), min(640, geo.height() - 60)))
        self.summary.move(geo.right() - self.summary.width() - 12, geo.top() + 40)
        self.summary.open()

    def _summary_closed(self, dialog: SessionSummary, learned: list[Memory]) -> None:
        prefs = self.w.prefs
        decisions = dialog.decisions()
        prefs.summary_dismiss_streak = 0 if dialog.interacted else prefs.summary_dismiss_streak + 1
        prefs.confirmed += sum(1 for d, _t in decisions.values() if d in ("ok", "edit"))
        if self.w.project is not None and decisions:
            for f in apply_decisions(self.w.project, {m.id: m for m in learned}, decisions):
                self.w.tasks.watch(f, None, self._failed)
        self.flags_this_session = 0
        self.save_counters()
        self.summary = None

    # -- conflicts and review ------------------------------------------------------------------
    def resolve_conflicts(self) -> None:
        """Find conflicting memories (pool thread) and show them."""
        if self.w.project is None:
            return
        project = self.w.project
        self.w.tasks.run(lambda: lifecycle.find_conflicts(project), self._show_conflicts, self._failed)

    def _show_conflicts(self, conflicts: list[lifecycle.Conflict]) -> None:
        project = self.w.project
        if project is None:
            return
        self.conflicts = ConflictsDialog(conflicts, self.w)
        self.conflicts.resolve.connect(lambda c, choice: self._watch(
            lambda: lifecycle.resolve_conflict(project, c, choice), self.tr("Conflict resolved")))
        self.conflicts.open()

    def review_pending(self) -> None:
        """Card-at-a-time review of memories that need it."""
        if self.w.project is None:
            return
        from desktop.memory.store.rows import MemoryQuery

        project = self.w.project
        self.w.tasks.run(lambda: project.memories.list(MemoryQuery(statuses=["needs_review", "candidate"]),
                                                       limit=200), self._review)

    def _review(self, memories: list[Memory]) -> None:
        if self.w.project is None:
            return
        if not memories:
            self._status(self.tr("Nothing waits for review."))
            return
        self.onboarding = Onboarding(self.w.project, self.w.tasks, None, llm_configured=True, parent=self.w)
        self.onboarding.review(memories)
        self.onboarding.open()

    def start_onboarding(self) -> None:
        """The first-run flow (also available from the Project menu)."""
        w = self.w
        if w.project is None:
            return
        llm = w.engram.settings.llm_provider != "none"
        self.onboarding = Onboarding(w.project, w.tasks, w.graph, llm_configured=llm, parent=w)
        self.onboarding.finished_onboarding.connect(self._onboarded)
        self.onboarding.status_message.connect(self._status)
        self.onboarding.forget_requested.connect(self._forget_folder)
        self.onboarding.show()
        self.onboarding.start()

    def _forget_folder(self) -> None:
        if self.onboarding is not None:
            self.onboarding.close()
        self.w.forget_current_project()

    def _onboarded(self) -> None:
        if not self.w.prefs.onboarding_done:
            self.w.prefs.onboarding_done = True
            self.save_counters()

    # -- settings, import, export -----------------------------------------------------------
    def settings(self) -> SettingsDialog:
        """Open Settings; apply and save what changed when accepted."""
        from desktop.memory import secrets_store

        w = self.w
        dialog = SettingsDialog(w.engram.settings, w.prefs if w.project is not None else None, w)
        w.tasks.run(secrets_store.keyring_available, dialog.set_keyring_available)
        dialog.save_key.connect(lambda provider, key: w.tasks.run(
            lambda: secrets_store.set_api_key(provider, key),
            lambda _r: self._status(self.tr("API key saved in the system keyring")), self._failed))
        dialog.export_requested.connect(self.export_to)
        dialog.import_requested.connect(lambda path: self.import_from(Path(path)))
        dialog.delete_all_requested.connect(self.delete_everything)
        if dialog.team_panel is not None:
            wire_team_panel(dialog.team_panel, w)
        if dialog.hooks_panel is not None and w.project is not None:
            dialog.hooks_panel.bind(w.tasks, Path(w.project.info.root), w.project.settings.data_dir)
        if dialog.exec():
            language_changed = dialog.apply_to(w.engram.settings)
            settings = w.engram.settings
            w.tasks.run(settings.save, None, self._failed)
            if dialog.trust_panel is not None:
                self.save_preferences()
            if language_changed:
                w.switch_language(settings.language)
        return dialog

    def export_to(self, fmt: str, path: str) -> None:
        """Export on a pool thread, exactly as ``engram export`` does (CLAUDE.md: only Engram's block)."""
        project = self.w.project
        if project is not None:
            self.w.tasks.run(lambda: project.export(fmt, Path(path)),
                             lambda r: self._status(self.tr("%n memories exported", "", r.count)), self._failed)

    def import_from(self, path: Path) -> None:
        """Import a file on a pool thread through the core importer (the one ``engram import`` uses)."""
        project = self.w.project
        if project is None:
            return
        self._status(self.tr("Importing %1…").replace("%1", path.name))
        self.w.tasks.run(lambda: project.import_file(path), self._imported, self._import_failed)

    def _imported(self, report: ImportReport) -> None:
        self._status(self.tr("Imported %1 new, %2 already known, %3 rejected").replace("%1", str(report.added))
                     .replace("%2", str(report.unchanged)).replace("%3", str(len(report.rejected))))
        if report.rejected:
            line, reason = report.rejected[0]
            QMessageBox.warning(self.w, self.tr("Some lines were not imported"), self.tr(
                "%n line(s) rejected; line %1: %2", "", len(report.rejected))
                .replace("%1", str(line)).replace("%2", reason))

    def _import_failed(self, exc: BaseException) -> None:
        QMessageBox.warning(self.w, self.tr("Not imported"), describe_error(exc))

    def delete_everything(self) -> None:
        """Delete every memory of the project for good (pool thread)."""
        project = self.w.project
        if project is not None:
            self.w.tasks.run(lambda: project.delete_all(reason="delete everything (settings)"),
                             lambda n: self._status(self.tr("%n memories deleted", "", n)), self._failed)
