"""Settings: models and providers, API keys (OS keyring only), data, import/export, language, trust, agent hooks.

The dialog never does I/O itself: keyring calls, file export/import and deleting
everything are handed to the main window, which runs them on pool threads.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.memory.preferences import ProjectPrefs
from desktop.memory.store.errors import EngramError
from desktop.settings import Settings, choose_data_location
from desktop.ui.dialogs.agent_hooks import HooksPanel
from desktop.ui.dialogs.team import TeamPanel
from desktop.ui.dialogs.trust import TrustPanel
from desktop.ui.theme import icon
from desktop.ui.tr_noop import QT_TRANSLATE_NOOP

log = logging.getLogger("engram.ui")

LLM_PROVIDERS = {"none": QT_TRANSLATE_NOOP("SettingsDialog", "None (memory still works, without answers)"),
                 "ollama": QT_TRANSLATE_NOOP("SettingsDialog", "Ollama (local)"),
                 "openai": QT_TRANSLATE_NOOP("SettingsDialog", "OpenAI-compatible"),
                 "anthropic": QT_TRANSLATE_NOOP("SettingsDialog", "Anthropic")}
#: What writes memories from each finished session besides the rules (Settings.memory_model).
MEMORY_MODELS = {"auto": QT_TRANSLATE_NOOP("SettingsDialog", "The agent model above, when one is set"),
                 "none": QT_TRANSLATE_NOOP("SettingsDialog", "Rules only (no model, nothing spent)"),
                 "claude-cli": QT_TRANSLATE_NOOP("SettingsDialog", "Claude Code (claude -p, your account)"),
                 "codex-cli": QT_TRANSLATE_NOOP("SettingsDialog", "Codex (codex exec, your account)"),
                 "gemini-cli": QT_TRANSLATE_NOOP("SettingsDialog", "Gemini CLI (gemini -p, your account)")}
EMBEDDERS = {"auto": QT_TRANSLATE_NOOP("SettingsDialog", "Automatic (best available)"),
             "local": QT_TRANSLATE_NOOP("SettingsDialog", "Bundled MiniLM (offline)"),
             "ollama": QT_TRANSLATE_NOOP("SettingsDialog", "Ollama"),
             "openai": QT_TRANSLATE_NOOP("SettingsDialog", "OpenAI-compatible")}
LANGUAGES = {"system": QT_TRANSLATE_NOOP("SettingsDialog", "Follow the system"),
             "en": "English", "fr": "Français"}
# The core's export formats (desktop.memory.lifecycle.format_names.EXPORT_FORMATS), as the app names them.
EXPORTS = {"json": QT_TRANSLATE_NOOP("SettingsDialog", "JSON (everything, re-importable)"),
           "markdown": QT_TRANSLATE_NOOP("SettingsDialog", "Markdown"),
           "claude-md": "CLAUDE.md", "agents-md": "AGENTS.md"}
DELETE_WORD = QT_TRANSLATE_NOOP("SettingsDialog", "DELETE")


def _t(text: str) -> str:
    return QCoreApplication.translate("SettingsDialog", text)


class SettingsDialog(QDialog):
    """Tabs: Models, Data, Language, and (with a project open) Trust & control, Team, Agent hooks."""

    save_key = Signal(str, str)          # provider, key
    export_requested = Signal(str, str)  # format, path
    import_requested = Signal(str)       # path
    delete_all_requested = Signal()
    language_chosen = Signal(str)

    def __init__(self, settings: Settings, prefs: ProjectPrefs | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.setWindowTitle(self.tr("Settings"))
        self.setMinimumSize(640, 520)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._models_tab(), icon("settings"), self.tr("&Models"))
        self.tabs.addTab(self._data_tab(), icon("folder"), self.tr("&Data"))
        self.tabs.addTab(self._language_tab(), self.tr("&Language"))
        self.trust_panel: TrustPanel | None = None
        self.team_panel: TeamPanel | None = None
        self.hooks_panel: HooksPanel | None = None
        if prefs is not None:
            self.trust_panel = TrustPanel(prefs)
            self.tabs.addTab(self.trust_panel, icon("shield"), self.tr("&Trust && control"))
            self.team_panel = TeamPanel()
            self.tabs.addTab(self.team_panel, self.tr("T&eam"))
            self.hooks_panel = HooksPanel()  # filled by the caller, which owns the task runner
            self.tabs.addTab(self.hooks_panel, self.tr("Agent &hooks"))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(buttons)

    # -- tabs ------------------------------------------------------------------------------
    def _combo(self, table: dict[str, str], current: str, name: str) -> QComboBox:
        combo = QComboBox()
        combo.setObjectName(name)
        for key, label in table.items():
            combo.addItem(_t(label), key)
        combo.setCurrentIndex(max(0, combo.findData(current)))
        return combo

    def _models_tab(self) -> QWidget:
        s = self.settings
        page = QWidget()
        form = QFormLayout(page)
        self.llm = self._combo(LLM_PROVIDERS, s.llm_provider, "llmProvider")
        self.llm_model = QLineEdit(s.llm_model)
        self.llm_model.setPlaceholderText(self.tr("e.g. qwen3:8b, gpt-4.1-mini, claude-sonnet-4"))
        self.embedder = self._combo(EMBEDDERS, s.embedding_provider, "embeddingProvider")
        self.embed_model = QLineEdit(s.embedding_model)
        self.embed_model.setPlaceholderText(self.tr("empty = the provider's default"))
        self.ollama_host = QLineEdit(s.ollama_host)
        self.base_url = QLineEdit(s.openai_base_url)
        self.key_provider = self._combo({"openai": "OpenAI", "anthropic": "Anthropic"}, "openai", "keyProvider")
        self.api_key = QLineEdit()
        self.api_key.setObjectName("apiKey")
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key.setPlaceholderText(self.tr("Paste an API key"))
        self.save_key_button = QPushButton(self.tr("Save in the system &keyring"))
        self.save_key_button.setObjectName("saveKey")
        self.save_key_button.setToolTip(self.tr("Keys are kept by the operating system, never in Engram's files"))
        self.save_key_button.clicked.connect(self._save_key)
        self.key_status = QLabel(self.tr("Checking the system keyring…"))
        self.key_status.setObjectName("keyStatus")
        self.key_status.setWordWrap(True)
        key_row = QHBoxLayout()
        key_row.addWidget(self.key_provider)
        key_row.addWidget(self.api_key, 1)
        key_row.addWidget(self.save_key_button)
        form.addRow(self.tr("&Agent model provider"), self.llm)
        form.addRow(self.tr("Agent &model"), self.llm_model)
        form.addRow(self.tr("&Embeddings"), self.embedder)
        form.addRow(self.tr("Embedding mo&del"), self.embed_model)
        form.addRow(self.tr("Ollama &address"), self.ollama_host)
        form.addRow(self.tr("OpenAI-compatible &URL"), self.base_url)
        key_label = QLabel(self.tr("API &key"))
        key_label.setBuddy(self.api_key)  # a row of several widgets gets no buddy by itself: "&" would show
        form.addRow(key_label, key_row)
        form.addRow("", self.key_status)
        self.memory_model = self._combo(MEMORY_MODELS, s.memory_model, "memoryModel")
        self.memory_cost = QLabel()
        self.memory_cost.setObjectName("memoryModelCost")
        self.memory_cost.setWordWrap(True)
        self.memory_model.currentIndexChanged.connect(self._show_memory_cost)
        self._show_memory_cost()
        form.addRow(self.tr("Memory &learning model"), self.memory_model)
        form.addRow("", self.memory_cost)
        return page

    def _show_memory_cost(self) -> None:
        """What the chosen memory model costs, stated before it is used."""
        choice = self.memory_model.currentData()
        if choice == "none":
            text = self.tr("Only the rules learn from your sessions: no request is sent, nothing is spent.")
        elif choice == "auto":
            text = self.tr("Uses the agent model above when one is set (one request per finished session); "
                           "with none, only the rules learn and nothing is spent.")
        else:
            text = (self.tr("After each finished session, one request of at most %1 tokens goes to %2 through "
                            "your own account (subscription or API key), plus one every 10 sessions to merge "
                            "what they found. Every memory it writes is checked against the session and waits "
                            "for your review.")
                    .replace("%1", f"{self.settings.memory_model_token_cap:,}")
                    .replace("%2", self.memory_model.currentText().split(" (")[0]))
        self.memory_cost.setText(text)

    def set_keyring_available(self, available: bool) -> None:
        """Show whether keys can be saved (the main window checks on a pool thread)."""
        self.save_key_button.setEnabled(available)
        self.api_key.setEnabled(available)
        self.key_status.setText(
            self.tr("Keys are stored in the system keyring.") if available else
            self.tr("No secure keyring was found on this system, so Engram will not store API keys. "
                    "Set them in the environment instead (e.g. OPENAI_API_KEY)."))

    def _save_key(self) -> None:
        key = self.api_key.text().strip()
        if key:
            self.save_key.emit(self.key_provider.currentData(), key)
            self.api_key.clear()

    def _change_location(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, self.tr("Choose where Engram keeps its data"),
                                                  str(self.settings.data_dir))
        if not folder:
            return
        try:
            chosen = choose_data_location(Path(folder))
        except (OSError, EngramError) as exc:
            QMessageBox.warning(self, self.tr("Data folder not changed"), str(exc))
            return
        QMessageBox.information(self, self.tr("Data folder changed"),
                                self.tr("Engram will keep its data in %1 from its next start.").replace(
                                    "%1", str(chosen)))

    def _data_tab(self) -> QWidget:
        page = QWidget()
        col = QVBoxLayout(page)
        where = QLabel(self.tr("Memory is stored on this computer in:") + f"<br><code>{self.settings.data_dir}</code>")
        where.setWordWrap(True)
        open_folder = QPushButton(icon("folder"), self.tr("&Open the data folder"))
        open_folder.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.settings.data_dir))))
        hint = QLabel(self.tr("To keep the data elsewhere (a portable drive, a synced folder), choose another "
                              "folder: Engram uses it from its next start. Projects already stored stay where "
                              "they are; export and import them to move their memories."))
        hint.setWordWrap(True)
        move = QPushButton(icon("folder"), self.tr("&Change the data folder…"))
        move.setObjectName("changeDataFolder")
        move.clicked.connect(self._change_location)
        self.export_format = self._combo(EXPORTS, "json", "exportFormat")
        export = QPushButton(icon("export"), self.tr("&Export…"))
        export.setObjectName("exportButton")
        export.clicked.connect(self._export)
        imp = QPushButton(icon("import"), self.tr("&Import…"))
        imp.setObjectName("importButton")
        imp.setToolTip(self.tr("JSON, JSON Lines, Markdown, CLAUDE.md, AGENTS.md or .cursorrules"))
        imp.clicked.connect(self._import)
        row = QHBoxLayout()
        row.addWidget(self.export_format)
        row.addWidget(export)
        row.addWidget(imp)
        row.addStretch(1)
        delete = QPushButton(icon("forget"), self.tr("Delete &everything in this project…"))
        delete.setObjectName("deleteEverything")
        delete.setToolTip(self.tr("Removes every memory for good and scrubs the database file"))
        delete.clicked.connect(self._delete_all)
        for w in (where, open_folder, hint, move):
            col.addWidget(w)
        col.addSpacing(12)
        col.addWidget(QLabel("<b>" + self.tr("Export and import") + "</b>"))
        col.addLayout(row)
        col.addSpacing(12)
        col.addWidget(delete)
        col.addStretch(1)
        return page

    def _export(self) -> None:
        fmt = self.export_format.currentData()
        suffix = {"json": "engram-export.json", "markdown": "engram-memory.md", "claude-md": "CLAUDE.md",
                  "agents-md": "AGENTS.md"}[fmt]
        path, _ = QFileDialog.getSaveFileName(self, self.tr("Export memories"), str(Path.home() / suffix))
        if path:
            self.export_requested.emit(fmt, path)

    def _import(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self.tr("Import memories"), str(Path.home()),
                                              self.tr("Memory files (*.json *.jsonl *.md *.mdc *.cursorrules);;"
                                                      "All files (*)"))
        if path:
            self.import_requested.emit(path)

    def _delete_all(self) -> None:
        word = _t(DELETE_WORD)
        typed, ok = QInputDialog.getText(
            self, self.tr("Delete everything"),
            self.tr("Every memory of this project will be deleted for good. Type %1 to confirm.")
            .replace("%1", word))
        if ok and typed.strip() == word:
            self.delete_all_requested.emit()

    def _language_tab(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        self.language = self._combo(LANGUAGES, self.settings.language or "system", "language")
        self.language_note = QLabel(self.tr("Menus and panels switch at once; a few texts follow after a restart."))
        self.language_note.setWordWrap(True)
        form.addRow(self.tr("&Language"), self.language)
        form.addRow("", self.language_note)
        return page

    # -- result ----------------------------------------------------------------------------
    def apply_to(self, settings: Settings) -> bool:
        """Copy the edited values into `settings`; True when the language changed."""
        settings.llm_provider = self.llm.currentData()
        settings.llm_model = self.llm_model.text().strip()
        settings.memory_model = self.memory_model.currentData()
        settings.embedding_provider = self.embedder.currentData()
        settings.embedding_model = self.embed_model.text().strip()
        settings.ollama_host = self.ollama_host.text().strip() or settings.ollama_host
        settings.openai_base_url = self.base_url.text().strip() or settings.openai_base_url
        language = self.language.currentData()
        changed = language != settings.language
        settings.language = language
        return changed
