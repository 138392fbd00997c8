"""Approve a write, an edit or a command of the app's agent: allow once, always this session, deny.

The agent asks from its session thread; :class:`ApprovalBridge` carries the question
to the GUI thread, opens the dialog (window-modal, never blocking the event loop) and
hands the answer back. Edits show a diff of the file, commands their folder.
"""

from __future__ import annotations

import difflib
import html
import logging
import threading
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from desktop.agents.tools.registry import ApprovalPolicy, ApprovalRequest

log = logging.getLogger("engram.ui")

ONCE, ALWAYS, DENY = "once", "always", "deny"
WAIT_S = 600.0  # an unanswered question is a "no" after ten minutes


def preview(request: ApprovalRequest, root: Path) -> str:
    """The text to show: a unified diff for Write/Edit, the command for Bash."""
    args = request.arguments
    if request.tool == "Bash":
        return str(args.get("command", ""))
    rel = str(args.get("file_path") or args.get("path") or "")
    path = (root / rel) if rel else root
    try:
        old = path.read_text(encoding="utf-8") if path.is_file() else ""
    except (OSError, UnicodeDecodeError):
        old = ""
    if request.tool == "Edit":
        new = old.replace(str(args.get("old_string", "")), str(args.get("new_string", "")), 1) if old else \
            str(args.get("new_string", ""))
    else:
        new = str(args.get("content", ""))
    diff = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                f"a/{rel}", f"b/{rel}")
    return "".join(diff) or new


class ApprovalDialog(QDialog):
    """One question; ``answer`` is ONCE, ALWAYS or DENY (closing denies)."""

    def __init__(self, request: ApprovalRequest, root: Path, parent: QWidget | None = None,
                 text: str | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("approvalDialog")
        self.setWindowTitle(self.tr("Allow the agent to do this?"))
        self.setMinimumSize(620, 420)
        self.answer = DENY
        if request.tool == "Bash":
            cwd = root / str(request.arguments.get("cwd") or "")
            head = self.tr("The agent wants to run a command in %1:").replace("%1", html.escape(str(cwd)))
        elif request.tool == "Edit":
            head = self.tr("The agent wants to edit %1:").replace(
                "%1", html.escape(str(request.arguments.get("file_path", ""))))
        else:
            head = self.tr("The agent wants to write %1:").replace(
                "%1", html.escape(str(request.arguments.get("file_path", ""))))
        # ``text``: the preview computed off the GUI thread (it reads the file and diffs it).
        self.body = QPlainTextEdit(preview(request, root) if text is None else text)
        self.body.setObjectName("approvalPreview")
        self.body.setReadOnly(True)
        self.once = QPushButton(self.tr("Allow &once"))
        self.always = QPushButton(self.tr("Allow &always this session"))
        self.deny = QPushButton(self.tr("&Deny"))
        self.deny.setDefault(True)  # Enter never approves by accident
        for button, answer in ((self.once, ONCE), (self.always, ALWAYS), (self.deny, DENY)):
            button.clicked.connect(lambda _c=False, a=answer: self._answer(a))
        row = QHBoxLayout()
        row.addStretch(1)
        for b in (self.deny, self.once, self.always):
            row.addWidget(b)
        col = QVBoxLayout(self)
        col.addWidget(QLabel(head))
        col.addWidget(self.body, 1)
        col.addLayout(row)

    def _answer(self, answer: str) -> None:
        self.answer = answer
        self.accept() if answer != DENY else self.reject()


class _Question:
    def __init__(self, request: ApprovalRequest, text: str) -> None:
        self.request = request
        self.text = text
        self.answer = DENY
        self.done = threading.Event()


class ApprovalBridge(QObject):
    """Lives on the GUI thread; ``ask`` may be called from any session thread."""

    _asked = Signal(object)
    asked = Signal(object)  # the dialog just opened (tests answer it)

    def __init__(self, root: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.root = Path(root)
        self.parent_widget = parent
        self.dialog: ApprovalDialog | None = None
        self._asked.connect(self._open, Qt.ConnectionType.QueuedConnection)

    def ask(self, request: ApprovalRequest) -> str:
        """Session thread: block until the person answers ONCE, ALWAYS or DENY (DENY after WAIT_S)."""
        # The file read and diff run here, on the (blocked anyway) session thread, not the GUI's.
        question = _Question(request, preview(request, self.root))
        self._asked.emit(question)
        question.done.wait(WAIT_S)
        return question.answer

    @Slot(object)
    def _open(self, question: _Question) -> None:
        dialog = ApprovalDialog(question.request, self.root, self.parent_widget, question.text)
        self.dialog = dialog

        def finished(_code: int) -> None:
            question.answer = dialog.answer
            question.done.set()
            self.dialog = None
        dialog.finished.connect(finished)
        dialog.open()
        self.asked.emit(dialog)


def pre_allowed(trust_level: int) -> tuple[bool, bool]:
    """(writes, commands) that run without asking at a trust level.

    Cautious and Standard ask for every write and command; Confident lets file writes
    inside the project through and asks for commands; Autonomous (an explicit opt-in)
    asks for nothing. Everything stays confined to the project folder at every level.
    """
    return trust_level >= 3, trust_level >= 4


def session_policy(bridge: ApprovalBridge, trust_level: int) -> ApprovalPolicy:
    """The approval policy of one session: pre-allowed per trust level, "always" remembered per tool."""
    writes, commands = pre_allowed(trust_level)
    policy = ApprovalPolicy(allow_writes=writes, allow_commands=commands)

    def ask(request: ApprovalRequest) -> bool:
        answer = bridge.ask(request)
        if answer == ALWAYS:
            policy.remember[request.tool] = True
        return answer in (ONCE, ALWAYS)
    policy.ask = ask
    return policy
