"""The words for the code index's progress and outcome (the core gives phases, counts and codes).

Each number says what it counts: files while files are read, links while the
dependency map is written (its total is not known in advance, so no "of N").
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from desktop.memory.graph.report import IndexOutcome, IndexProgress


def _tr(text: str, n: int = -1) -> str:
    return QCoreApplication.translate("IndexWords", text, "", n)


def progress_words(p: IndexProgress) -> str:
    """"Reading code: 120 of 580 files", "Mapping dependencies: 201,617 links written"."""
    phases = {"scan": _tr("Listing files"), "parse": _tr("Reading code"), "resolve": _tr("Linking symbols"),
              "modules": _tr("Finding modules"), "chunks": _tr("Remembering code"),
              "closure": _tr("Mapping dependencies")}
    phase = phases.get(p.phase, p.phase)
    if p.total <= 0:
        if p.phase == "closure" and p.done:
            return _tr("%1: %n links written", p.done).replace("%1", phase)
        return phase + "…"
    return _tr("%1: %2 of %n files", p.total).replace("%1", phase).replace("%2", f"{p.done:,}")


def outcome_words(o: IndexOutcome) -> str:
    """One short paragraph saying what the index did, and every failure or skip worth knowing."""
    if o.code == "unreadable_folder":
        return _tr("Engram cannot read this folder (%1). Nothing was indexed; check its permissions.") \
            .replace("%1", o.reason or _tr("permission denied"))
    if o.code == "no_source_files":
        return _tr("No source code here: %n files, none of a kind Engram reads (code, scripts, Markdown). "
                   "Is this the right folder?", o.other_files)
    if o.code == "empty_folder":
        return _tr("This folder is empty: there is nothing to index.")
    if o.code == "cancelled":
        return _tr("Indexing was stopped; it resumes the next time the project opens.")
    # Two plural counts, so two fragments: Qt's plural forms take one %n per string.
    text = _tr("Indexed %n files", o.files) + " " + _tr("in %n modules.", o.modules)
    if o.too_large:
        text += " " + _tr("%n files were skipped as too large (over 1 MB).", o.too_large)
    if o.unreadable:
        text += " " + _tr("%n files or folders could not be read.", o.unreadable)
    return text
