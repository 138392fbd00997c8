"""Ask Memory: a question in, an answer with citations out (the ranked memories when no LLM is set)."""

from __future__ import annotations

import html
import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from desktop.agents import ask as recall
from desktop.agents.ask import Answer
from desktop.ui.labels import score_label, type_label
from desktop.ui.session.citations import chip_html
from desktop.ui.tasks import Tasks
from desktop.ui.theme import icon

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.ui.panel")


class AskMemory(QWidget):
    """Question box and answer view; citations link to the memory in the browser."""

    open_memory = Signal(int)

    def __init__(self, project: Project, tasks: Tasks, llm: Any | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.tasks = tasks
        self.llm = llm
        self.answer: Answer | None = None
        self.question = QLineEdit()
        self.question.setObjectName("askInput")
        self.question.setPlaceholderText(self.tr("Ask what the project's memory knows, e.g. “how do we run "
                                                 "migrations?”"))
        self.ask_button = QPushButton(icon("ask"), self.tr("As&k"))
        self.ask_button.setObjectName("askButton")
        self.view = QTextBrowser()
        self.view.setObjectName("askAnswer")
        self.view.setOpenLinks(False)
        self.view.anchorClicked.connect(self._link)
        self.note = QLabel()
        self.note.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.question, 1)
        row.addWidget(self.ask_button)
        col = QVBoxLayout(self)
        col.addLayout(row)
        col.addWidget(self.note)
        col.addWidget(self.view, 1)
        self.question.returnPressed.connect(self.ask)
        self.ask_button.clicked.connect(self.ask)

    def ask(self) -> None:
        """Answer the typed question on a pool thread."""
        q = self.question.text().strip()
        if not q:
            return
        self.view.setHtml("<p>" + html.escape(self.tr("Searching memory…")) + "</p>")
        project = self.project
        llm = self.llm

        def work() -> Answer:
            if llm is not None:
                return recall.ask(project, q, llm=llm)
            model = recall.llm_from_settings(project.settings)
            try:
                return recall.ask(project, q, llm=model)
            finally:
                if model is not None:
                    model.close()  # built for this question: its HTTP connections go with it
        self.tasks.run(work, self._show,
                       lambda e: self.view.setPlainText(str(e)))

    def _show(self, answer: Answer) -> None:
        self.answer = answer
        self.note.setText("" if answer.used_llm else self.tr(
            "No language model is set up, so here are the memories that answer best, ranked, with their "
            "citations. Choose a model in Settings for written answers."))
        parts = []
        if answer.text:
            parts.append(f"<p>{html.escape(answer.text)}</p>")
        if not answer.hits:
            parts.append("<p>" + html.escape(self.tr("Memory has nothing on this yet.")) + "</p>")
        score_word = self.tr("score")
        parts.append("<ol>")
        for h in answer.hits:
            m = h.memory
            why = ", ".join(f"{score_label(k)} {v:.2f}" for k, v in sorted(h.parts.items(), key=lambda kv: -kv[1])
                            if v > 0)
            parts.append(f"<li>{chip_html(m.id, type_label(m.type), m.type == 'dead_end')} "
                         f"{html.escape(m.content[:400])}<br><small>{html.escape(score_word)} "
                         f"{h.score:.2f} — {html.escape(why)}</small></li>")
        parts.append("</ol>")
        self.view.setHtml("".join(parts))

    def _link(self, url: Any) -> None:
        text = url.toString()
        if text.startswith("memory:"):
            self.open_memory.emit(int(text.split(":", 1)[1]))
