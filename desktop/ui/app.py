"""Starting the GUI: QApplication, translations, the qasync event loop, the main window."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Sequence
from typing import cast

from PySide6.QtCore import QLibraryInfo, QLocale, QTranslator
from PySide6.QtWidgets import QApplication

from desktop import APP_NAME, ORG_NAME, __version__
from desktop.composition import Engram
from desktop.paths import resource_path

log = logging.getLogger("engram.ui")


_installed: list[QTranslator] = []


def install_translators(app: QApplication, language: str) -> list[QTranslator]:
    """Load Engram's and Qt's own translations for `language` ("system" follows the OS).

    Translators installed before are removed first, so switching language at run
    time replaces them instead of stacking them.
    """
    for old in _installed:
        app.removeTranslator(old)
    _installed.clear()
    locale = QLocale.system() if language in ("", "system") else QLocale(language)
    loaded: list[QTranslator] = []
    ours = QTranslator(app)
    folder = str(resource_path("i18n"))
    found = ours.load(locale, "engram", "_", folder)
    # Without a translation for this locale, the English one still gives English its plural forms
    # ("1 module", not the source text's "1 modules").
    if found or ours.load("engram_en", folder):
        app.installTranslator(ours)
        loaded.append(ours)
    qt = QTranslator(app)
    if qt.load(locale, "qtbase", "_", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
        app.installTranslator(qt)
        loaded.append(qt)
    _installed.extend(loaded)
    if not found:
        log.info("no Engram translation for %s; using English", locale.name())
    return loaded


def create_app(argv: Sequence[str]) -> QApplication:
    """The QApplication with Engram's identity set."""
    # instance() is typed as the base QCoreApplication; nothing in Engram creates anything but a
    # QApplication (widgets need one), so an instance already running is one.
    app = cast(QApplication, QApplication.instance() or QApplication(list(argv)))
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(ORG_NAME)
    app.setApplicationVersion(__version__)
    from desktop.ui.theme import app_icon, apply_theme

    app.setWindowIcon(app_icon())
    apply_theme(app)
    # Follow the system when it switches between light and dark while Engram runs.
    hints = app.styleHints()
    if hasattr(hints, "colorSchemeChanged"):
        hints.colorSchemeChanged.connect(lambda _scheme: apply_theme(app))
    return app


def main(argv: Sequence[str] | None = None) -> int:
    """Run the desktop app until its window closes."""
    import qasync

    from desktop.ui.main_window import MainWindow

    argv = list(sys.argv if argv is None else argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    engram = Engram()  # the user's settings, read once for the app
    app = create_app(argv)
    install_translators(app, engram.settings.language)
    window = MainWindow(engram)
    window.show()
    project_args = [a for a in argv[1:] if not a.startswith("-")]
    if project_args:
        from pathlib import Path

        window.open_project(Path(project_args[0]))
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    app_close = asyncio.Event()
    app.aboutToQuit.connect(app_close.set)
    with loop:
        loop.run_until_complete(app_close.wait())
    return 0
