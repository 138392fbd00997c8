"""The words for the code index's progress and outcome (the core gives phases, counts and codes).

Each number says what it counts: files while files are read, links while the
dependency map is written (its total is not known in advance, so no "of N").
"""

from __future__ import annotations

from PySide6.QtCore import QObject

from desktop.memory.graph.report import IndexOutcome, IndexProgress


class IndexWords(QObject):
    """A translation context (lupdate reads ``self.tr`` calls, plural forms included)."""

    def phase(self, phase: str) -> str:
        """The name of an index phase."""
        words = {"scan": self.tr("Listing files"), "parse": self.tr("Reading code"),
                 "resolve": self.tr("Linking symbols"), "modules": self.tr("Finding modules"),
                 "chunks": self.tr("Remembering code"), "closure": self.tr("Mapping dependencies")}
        return words.get(phase, phase)

    def progress(self, p: IndexProgress) -> str:
        """"Reading code: 120 of 580 files", "Mapping dependencies: 201617 links written"."""
        phase = self.phase(p.phase)
        if p.total <= 0:
            if p.phase == "closure" and p.done:
                return self.tr("%1: %n links written", "", p.done).replace("%1", phase)
            return phase + "…"
        return self.tr("%1: %2 of %n files", "", p.total).replace("%1", phase).replace("%2", str(p.done))

    def outcome(self, o: IndexOutcome) -> str:
        """One short paragraph saying what the index did, and every failure or skip worth knowing."""
        if o.code == "unreadable_folder":
            text = self.tr("Engram cannot read this folder (%1). Nothing was indexed; check its permissions.")
            return text.replace("%1", o.reason or self.tr("permission denied"))
        if o.code == "no_source_files":
            return self.tr("No source code here: %n files, none of a kind Engram reads (code, scripts, "
                           "Markdown). Is this the right folder?", "", o.other_files)
        if o.code == "empty_folder":
            return self.tr("This folder is empty: there is nothing to index.")
        if o.code == "cancelled":
            return self.tr("Indexing was stopped; it resumes the next time the project opens.")
        # Two plural counts, so two fragments: Qt's plural forms take one %n per string.
        text = self.tr("Indexed %n files", "", o.files) + " " + self.tr("in %n modules.", "", o.modules)
        if o.too_large:
            text += " " + self.tr("%n files were skipped as too large (over 1 MB).", "", o.too_large)
        if o.unreadable:
            text += " " + self.tr("%n files or folders could not be read.", "", o.unreadable)
        return text


def progress_words(p: IndexProgress) -> str:
    """See :meth:`IndexWords.progress` (words in the current language)."""
    return IndexWords().progress(p)


def outcome_words(o: IndexOutcome) -> str:
    """See :meth:`IndexWords.outcome`."""
    return IndexWords().outcome(o)
