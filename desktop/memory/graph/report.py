"""What one index run reports: its progress as it goes, and what it did at the end."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["IndexOutcome", "IndexProgress", "IndexReport", "index_outcome", "overall_fraction"]


@dataclass
class IndexProgress:
    """One progress report: phase (scan, parse, resolve, modules, chunks, closure), counts, file."""

    phase: str
    done: int
    total: int
    current: str = ""


@dataclass
class IndexReport:
    """What a run did."""

    indexed: int = 0
    unchanged: int = 0
    deleted: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_files: list[tuple[str, str]] = field(default_factory=list)
    partial: int = 0
    unsupported: int = 0
    chunks: int = 0
    modules: int = 0
    closure_rows: int = 0
    pooled: int = 0  # files parsed by worker processes
    seconds: float = 0.0
    cancelled: bool = False

    def skip(self, path: str, reason: str) -> None:
        """Count one skipped file or folder."""
        key = reason.split(":", 1)[0]
        self.skipped[key] = self.skipped.get(key, 0) + 1
        self.skipped_files.append((path, reason))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {"indexed": self.indexed, "unchanged": self.unchanged, "deleted": self.deleted,
                "partial": self.partial, "skipped": self.skipped, "unsupported": self.unsupported,
                "chunks": self.chunks, "modules": self.modules, "closure_rows": self.closure_rows,
                "pooled": self.pooled, "seconds": round(self.seconds, 3), "cancelled": self.cancelled,
                "skipped_files": [{"path": p, "reason": r} for p, r in self.skipped_files[:200]]}


# Where each phase sits on one bar from 0 to 1, measured on a cold index of a 1,600-file project
# (parsing is most of the time); a phase whose total is unknown (the closure) stays at its start.
PHASE_SPANS: dict[str, tuple[float, float]] = {
    "scan": (0.0, 0.03), "parse": (0.03, 0.75), "resolve": (0.75, 0.85), "modules": (0.85, 0.88),
    "chunks": (0.88, 0.9), "closure": (0.9, 1.0),
}


def overall_fraction(progress: IndexProgress) -> float:
    """How far the whole index is (0..1), so one bar moves forward through every phase."""
    start, end = PHASE_SPANS.get(progress.phase, (0.0, 1.0))
    if progress.total <= 0:
        return start
    return start + (end - start) * min(1.0, progress.done / progress.total)


@dataclass(frozen=True)
class IndexOutcome:
    """What an index run means for a person: one code, and the counts worth saying.

    Codes: ``indexed``; ``unreadable_folder`` (the folder itself could not be listed);
    ``no_source_files`` (files, but none of a kind Engram reads: a folder of photos);
    ``empty_folder``; ``cancelled``.
    """

    code: str
    files: int
    modules: int
    too_large: int = 0
    unreadable: int = 0
    other_files: int = 0
    reason: str = ""


def index_outcome(report: IndexReport) -> IndexOutcome:
    """The person-facing meaning of ``report`` (the app and ``engram index`` word the same code)."""
    files = report.indexed + report.unchanged
    unreadable = [(p, r) for p, r in report.skipped_files if r.startswith("unreadable")]
    too_large = report.skipped.get("too large", 0)

    def outcome(code: str, reason: str = "") -> IndexOutcome:
        return IndexOutcome(code, files, report.modules, too_large, len(unreadable), report.unsupported, reason)
    if report.cancelled:
        return outcome("cancelled")
    root = next((r for p, r in unreadable if p in ("/", "./")), None)
    if root is not None:
        return outcome("unreadable_folder", root.partition(":")[2].strip())
    if files == 0 and not too_large and (report.unsupported or not report.skipped_files):
        return outcome("no_source_files" if report.unsupported else "empty_folder")
    return outcome("indexed")
