"""First run of a project: index the code, import agent rule files, review seeded memories.

Phase 1 indexes in the background (GraphService.start) with live file/module counts,
offers Engram's hooks for the agent CLIs found on PATH (installed on Continue), and
offers one of them to write memories from finished sessions (opt-in, its cost stated).
Phase 2 offers the rules found in CLAUDE.md, AGENTS.md, .cursorrules, .cursor/rules
and .github/copilot-instructions.md as typed memories, each with its own checkbox.
Phase 3 shows one seeded memory per screen -- confirm, edit or forget -- with
"Confirm all remaining". The dialog is modeless: the app stays usable throughout.
"""

from __future__ import annotations

import html
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.agents.providers import DEFAULT_OLLAMA_MODEL
from desktop.memory.graph.report import index_outcome, overall_fraction
from desktop.memory.lifecycle.rule_files import scan_rule_files
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.types import Memory
from desktop.ui.dialogs.agent_hooks import HooksChooser
from desktop.ui.dialogs.memory_model import MemoryModelChooser
from desktop.ui.index_words import outcome_words, progress_words
from desktop.ui.labels import type_label
from desktop.ui.tasks import Tasks

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.ui")


class Onboarding(QDialog):
    """The three first-run phases on one stacked dialog."""

    finished_onboarding = Signal()
    status_message = Signal(str)
    forget_requested = Signal()  # "close this folder and remove it from the recent projects"

    def __init__(self, project: Project, tasks: Tasks, graph: Any | None, *, llm_configured: bool,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.tasks = tasks
        self.graph = graph
        self.setWindowTitle(self.tr("Getting to know %1").replace("%1", project.info.name))
        self.setMinimumSize(620, 440)
        self.proposed: list[NewMemory] = []
        self.seeded: list[Memory] = []
        self.position = 0
        self._progress: Any = None       # latest IndexProgress, written by the indexer thread
        self._report: Any = None
        self._index_done = threading.Event()
        self.pages = QStackedWidget()
        self.pages.addWidget(self._index_page())
        self.pages.addWidget(self._rules_page())
        self.pages.addWidget(self._review_page())
        layout = QVBoxLayout(self)
        layout.addWidget(self.pages)
        self.no_llm = QLabel(self.tr(
            "No language model is set up. Engram still indexes your code, keeps and searches memories, and "
            "the offline demo agent works. Agents without memory rediscover your codebase every session: "
            "install Ollama and run “ollama pull %1”, or choose a provider in Settings.")
            .replace("%1", DEFAULT_OLLAMA_MODEL))
        self.no_llm.setObjectName("noLlmNote")
        self.no_llm.setWordWrap(True)
        self.no_llm.setVisible(not llm_configured)
        layout.addWidget(self.no_llm)
        self._poll = QTimer(self)
        self._poll.setInterval(100)
        self._poll.timeout.connect(self._show_progress)

    # -- phase 1: indexing -------------------------------------------------------------------
    def _index_page(self) -> QWidget:
        page = QWidget()
        col = QVBoxLayout(page)
        col.addWidget(QLabel("<h2>" + html.escape(self.tr("Getting to know your project")) + "</h2>"))
        self.bar = QProgressBar()
        self.bar.setObjectName("indexProgress")
        self.bar.setRange(0, 0)
        self.index_label = QLabel(self.tr("Looking at the files…"))
        self.index_label.setObjectName("indexLabel")
        self.index_next = QPushButton(self.tr("&Continue"))
        self.index_next.setObjectName("indexContinue")
        self.index_next.setToolTip(self.tr("Indexing goes on in the background"))
        self.index_next.clicked.connect(self._to_rules)
        self.forget_folder = QPushButton(self.tr("Close and remove from recent projects"))
        self.forget_folder.setObjectName("forgetFolder")
        self.forget_folder.setToolTip(self.tr("This folder has nothing Engram can index; nothing is deleted"))
        self.forget_folder.hide()
        self.forget_folder.clicked.connect(self.forget_requested)
        self.hooks = HooksChooser()
        self.hooks.status_message.connect(self.status_message)
        self.index_label.setWordWrap(True)
        self.memory_model = MemoryModelChooser(int(getattr(self.project.settings, "memory_model_token_cap", 6000)))
        col.addWidget(self.bar)
        col.addWidget(self.index_label)
        col.addWidget(self.forget_folder, 0, Qt.AlignmentFlag.AlignLeft)
        col.addSpacing(12)
        col.addWidget(self.hooks)
        col.addWidget(self.memory_model)
        col.addStretch(1)
        col.addWidget(self.index_next, 0, Qt.AlignmentFlag.AlignRight)
        return page

    def start(self) -> None:
        """Begin indexing and look for rule files (both off the GUI thread)."""
        if self.graph is not None:
            self._poll.start()
            self.graph.start(self._on_progress, done=self._on_done)
        else:
            self.index_label.setText(self.tr("The code graph is not available; skipping indexing."))
            self.bar.setRange(0, 1)
            self.bar.setValue(1)
        root = self.project.info.root
        self.tasks.run(lambda: scan_rule_files(root), self._rules_found)
        self.hooks.detect(self.tasks, Path(root), self.project.settings.data_dir)
        self.memory_model.detect(self.tasks)

    def _on_progress(self, progress: Any) -> None:
        self._progress = progress  # indexer thread: just hand the value over

    def _on_done(self, report: Any) -> None:
        self._report = report
        self._index_done.set()

    def _show_progress(self) -> None:
        p = self._progress
        if p is not None and not self._index_done.is_set():
            # One bar for the whole index: each phase moves it forward, none restarts it.
            self.bar.setRange(0, 1000)
            self.bar.setValue(round(1000 * overall_fraction(p)))
            self.index_label.setText(progress_words(p))
        if self._index_done.is_set():
            self._poll.stop()
            self.bar.setRange(0, 1)
            self.bar.setValue(1)
            if self._report is not None:
                outcome = index_outcome(self._report)
                self.index_label.setText(outcome_words(outcome))
                self.index_label.setProperty("failed", outcome.code != "indexed")
                self.forget_folder.setVisible(outcome.code in ("unreadable_folder", "no_source_files",
                                                               "empty_folder"))
            else:
                self.index_label.setText(self.tr("Indexing failed; the details are in the log. Memories "
                                                 "still work without the code index."))

    def index_finished(self) -> bool:
        """True once the first index has finished (or there was nothing to index)."""
        return self.graph is None or self._index_done.is_set()

    # -- phase 2: rule files -------------------------------------------------------------------
    def _rules_page(self) -> QWidget:
        page = QWidget()
        col = QVBoxLayout(page)
        self.rules_title = QLabel()
        self.rules_list = QListWidget()
        self.rules_list.setObjectName("ruleList")
        self.rules_list.setToolTip(self.tr("Untick a rule to leave it out"))
        self.rules_list.setWordWrap(True)
        self.import_button = QPushButton(self.tr("&Import selected"))
        self.import_button.setObjectName("importRules")
        self.skip_button = QPushButton(self.tr("&Skip"))
        self.import_button.clicked.connect(self.import_selected)
        self.skip_button.clicked.connect(lambda: self._to_review([]))
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.skip_button)
        row.addWidget(self.import_button)
        col.addWidget(self.rules_title)
        col.addWidget(self.rules_list, 1)
        col.addLayout(row)
        return page

    def _rules_found(self, items: list[NewMemory]) -> None:
        self.proposed = items
        self.rules_list.clear()
        for i, item in enumerate(items):
            where = " › ".join(x for x in (item.metadata.get("rule_file", ""), item.metadata.get("section", "")) if x)
            row = QListWidgetItem(f"[{type_label(item.type)}] {item.content}")
            row.setToolTip(where)
            row.setFlags(row.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            row.setCheckState(Qt.CheckState.Checked)
            row.setData(Qt.ItemDataRole.UserRole, i)
            self.rules_list.addItem(row)
        files = sorted({str(item.metadata.get("rule_file", "")) for item in items} - {""})
        self.rules_title.setText("<h2>" + html.escape(self.tr("Found %n rules. Import them as memories?", "",
                                                              len(items))) + "</h2>"
                                 + html.escape(self.tr("From %1. What you keep ticked is confirmed as yours; "
                                                       "untick what agents should not be told.")
                                               .replace("%1", ", ".join(files))))

    def _to_rules(self) -> None:
        self.hooks.install_chosen()
        self.memory_model.apply(self.project.settings, self.tasks)
        if not self.proposed:
            self._to_review([])
            return
        self.pages.setCurrentIndex(1)

    def import_selected(self) -> None:
        """Write the ticked rules through the writer and confirm them: the person chose each one here."""
        chosen = [self.proposed[self.rules_list.item(r).data(Qt.ItemDataRole.UserRole)]
                  for r in range(self.rules_list.count())
                  if self.rules_list.item(r).checkState() == Qt.CheckState.Checked]
        if not chosen:
            self._to_review([])
            return
        self.import_button.setEnabled(False)
        future = self.project.memories.add_many(chosen, actor="import", reason="onboarding: rule files")
        self.tasks.watch(future, lambda results: self._imported([r.id for r in results]))

    def _imported(self, ids: list[int]) -> None:
        for memory_id in ids:
            self.tasks.watch(self.project.memories.verify(memory_id))
        self.status_message.emit(self.tr("%n rules imported and confirmed", "", len(ids)))
        self._to_review([])

    # -- phase 3: card-at-a-time review ------------------------------------------------------
    def _review_page(self) -> QWidget:
        page = QWidget()
        col = QVBoxLayout(page)
        col.addWidget(QLabel(self.tr("Tell me if anything looks wrong — you are always the authority.")))
        self.card_title = QLabel()
        self.card_title.setObjectName("cardTitle")
        self.card_text = QPlainTextEdit()
        self.card_text.setObjectName("cardText")
        self.card_text.setTabChangesFocus(True)
        self.confirm = QPushButton(self.tr("&Confirm"))
        self.confirm.setObjectName("cardConfirm")
        self.forget = QPushButton(self.tr("&Forget"))
        self.forget.setObjectName("cardForget")
        self.confirm_all = QPushButton(self.tr("Confirm &all remaining"))
        self.confirm_all.setObjectName("confirmAll")
        self.confirm.setToolTip(self.tr("Right (your edits to the text are saved too)"))
        self.confirm.clicked.connect(lambda: self._decide("confirm"))
        self.forget.clicked.connect(lambda: self._decide("forget"))
        self.confirm_all.clicked.connect(self.confirm_remaining)
        row = QHBoxLayout()
        row.addWidget(self.forget)
        row.addStretch(1)
        row.addWidget(self.confirm_all)
        row.addWidget(self.confirm)
        col.addWidget(self.card_title)
        col.addWidget(self.card_text, 1)
        col.addLayout(row)
        return page

    def review(self, memories: list[Memory]) -> None:
        """Use the dialog only for card-at-a-time review of `memories` (the Review flow)."""
        self.setWindowTitle(self.tr("Review memories"))
        self.no_llm.hide()
        self._to_review(memories)

    def _to_review(self, memories: list[Memory]) -> None:
        self.seeded = memories
        self.position = 0
        if not memories:
            self._finish()
            return
        self.pages.setCurrentIndex(2)
        self._show_card()

    def _show_card(self) -> None:
        if self.position >= len(self.seeded):
            self._finish()
            return
        m = self.seeded[self.position]
        self.card_title.setText(f"<b>{self.position + 1}/{len(self.seeded)}</b> · {html.escape(type_label(m.type))}")
        self.card_text.setPlainText(m.content)
        self.confirm.setFocus()

    def _decide(self, decision: str) -> None:
        m = self.seeded[self.position]
        svc = self.project.memories
        if decision == "forget":
            self.tasks.watch(svc.forget(m.id, reason="rejected during onboarding"))
        else:
            text = self.card_text.toPlainText().strip()
            if text and text != m.content:
                self.tasks.watch(svc.edit(m.id, {"content": text}, reason="edited during onboarding"))
            self.tasks.watch(svc.verify(m.id))
        self.position += 1
        self._show_card()

    def confirm_remaining(self) -> None:
        """Confirm every card not yet decided."""
        for m in self.seeded[self.position:]:
            self.tasks.watch(self.project.memories.verify(m.id))
        self.position = len(self.seeded)
        self._finish()

    def _finish(self) -> None:
        self.finished_onboarding.emit()
        self.accept()

    def closeEvent(self, event: Any) -> None:
        """Closing early still counts as onboarded; indexing continues in the background."""
        self._poll.stop()
        self.finished_onboarding.emit()
        super().closeEvent(event)
