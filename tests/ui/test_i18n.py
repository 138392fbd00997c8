"""Two languages: the .ts sources match the code, French loads and translates, switching works."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QTranslator

from desktop.ui import i18n_build


def _sources(ts: Path) -> set[tuple[str, str]]:
    root = ET.parse(ts).getroot()
    return {(ctx.findtext("name") or "", msg.findtext("source") or "")
            for ctx in root.iter("context") for msg in ctx.iter("message")
            if (msg.find("translation") is None or msg.find("translation").get("type") not in ("obsolete", "vanished"))}


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_translation_sources_are_up_to_date(tmp_path: Path, lang: str) -> None:
    committed = i18n_build.SOURCES / f"engram_{lang}.ts"
    fresh = tmp_path / committed.name
    shutil.copy(committed, fresh)
    i18n_build.update_sources(["-no-obsolete"], targets=[fresh])
    missing = _sources(fresh) - _sources(committed)
    stale = _sources(committed) - _sources(fresh)
    assert not missing, f"strings in the code but not in {committed.name} (run lupdate): {sorted(missing)[:10]}"
    assert not stale, f"strings in {committed.name} no longer in the code: {sorted(stale)[:10]}"


def test_every_french_string_is_translated() -> None:
    root = ET.parse(i18n_build.SOURCES / "engram_fr.ts").getroot()
    untranslated = [m.findtext("source") for m in root.iter("message")
                    if m.find("translation").get("type") == "unfinished"
                    or not ("".join(m.find("translation").itertext()).strip())]
    assert not untranslated, untranslated[:10]


def test_french_qm_compiles_loads_and_translates(qapp, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    qms = i18n_build.compile_all(tmp_path)
    fr = next(q for q in qms if q.name == "engram_fr.qm")
    translator = QTranslator()
    assert translator.load(str(fr))
    qapp.installTranslator(translator)
    try:
        assert QCoreApplication.translate("WindowMenus", "&Teach Engram…") == "&Apprendre à Engram…"
        assert QCoreApplication.translate("MemoryTypes", "Dead end") == "Impasse"
        assert QCoreApplication.translate("MemoryBrowser", "%n memories", "", 2) == "2 mémoires"
        assert QCoreApplication.translate("IndexWords", "in %n modules.", "", 1) == "dans 1 module."
        assert QCoreApplication.translate("IndexWords", "Indexed %n files", "", 2) == "2 fichiers indexés"
        from desktop.ui.labels import action_label, lesson_label, type_label

        assert type_label("gotcha") == "Piège"
        assert action_label("review") == "mise à revoir"  # a lesson the user declined to let run
        assert QCoreApplication.translate("MemoryDetail", "you declined `%1` in session %2") == \
            "vous avez refusé `%1` dans la session %2"
        from desktop.memory.types import Memory
        from desktop.ui.panel.detail import render_detail

        learned = {"at": "2026-11-26T23:19:03", "action": "add", "actor": "observer",
                   "reason": "learned from a session", "detail": {}}
        page = render_detail(Memory(id=1, type="gotcha", content="x"), [learned], None, "", [])
        assert "appris d’une session" in page and "learned from" not in page  # the observer's words, in French
        assert lesson_label("shell_escape") == "commande réécrite par l'outil shell de l'agent"
    finally:
        qapp.removeTranslator(translator)


def test_switching_language_at_run_time(qtbot, win) -> None:  # type: ignore[no-untyped-def]
    i18n_build.compile_all()
    win.switch_language("fr")
    try:
        titles = [a.text() for a in win.menuBar().actions()]
        assert "&Fichier" in titles and "&Projet" in titles
        assert win.session.start_button.text() == "&Démarrer"
        assert win.panel.tabText(0) == "&Santé"
        assert win.browser is win.panel.browser
    finally:
        win.switch_language("en")
    assert "&File" in [a.text() for a in win.menuBar().actions()]


def test_a_locale_without_translation_still_gets_english_plurals(qapp) -> None:  # type: ignore[no-untyped-def]
    from desktop.ui.app import install_translators

    i18n_build.compile_all()
    try:
        assert install_translators(qapp, "de")  # no German: the English translation is loaded
        assert QCoreApplication.translate("IndexWords", "in %n modules.", "", 1) == "in 1 module."
        assert QCoreApplication.translate("Onboarding", "Indexed %n files", "", 3) == "Indexed 3 files"
    finally:
        install_translators(qapp, "en")


def test_every_kind_of_lesson_the_observer_stores_has_a_name() -> None:
    """A learned memory's evidence kind is shown by name, never by its key ("shell stray"); the
    behavioural statistics that fall back to their key are the design's own classes."""
    from desktop.memory.observer.templates import MEMORY_KINDS
    from desktop.ui.labels import LESSON_KINDS

    behavioural = {"parallel_conflict"}
    assert MEMORY_KINDS - behavioural <= set(LESSON_KINDS)
