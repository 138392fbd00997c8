"""Shared plumbing for importers: reading records, accounting, timestamps, errors.

Transcripts are written by other programs, often while we read them, sometimes by
versions we have never seen. Reading therefore never trusts the file: bytes are
decoded with replacement, each line is parsed on its own, and every line ends up
either used or counted under a skip reason, so a user can see exactly what was
ignored and why.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from desktop.memory import safe_json
from desktop.memory.observer.events import AgentEvent

logger = logging.getLogger("engram.observer")

#: What importers accept: a file path, or the lines of a transcript already in memory.
Source = Path | str | Iterable[str | bytes]


class TranscriptImportError(Exception):
    """A transcript could not be read at all. ``code`` is stable; the UI words it.

    Codes: ``file_vanished`` (deleted or rotated between listing and reading),
    ``file_unreadable`` (permissions, a directory, I/O error), ``unknown_format``.
    """

    code = "transcript_import_error"

    def __init__(self, code: str, message: str, *, path: str | None = None,
                 detail: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.path = path
        self.detail = detail


@dataclass(slots=True)
class ImportResult:
    """Events from one import plus an exact account of every input record.

    Invariant: ``records_imported + sum(skipped.values()) == records_total``.
    ``stats`` holds extra counts (tool calls, errors, compactions, subagents...).
    """

    events: list[AgentEvent] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    records_total: int = 0
    records_imported: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    stats: Counter[str] = field(default_factory=Counter)

    def merge(self, other: ImportResult) -> None:
        """Fold another result (e.g. a subagent file) into this one."""
        self.events.extend(other.events)
        self.sessions.extend(s for s in other.sessions if s not in self.sessions)
        self.records_total += other.records_total
        self.records_imported += other.records_imported
        self.skipped.update(other.skipped)
        self.warnings.extend(other.warnings)
        self.stats.update(other.stats)

    @property
    def accounted(self) -> bool:
        """True when every record was either imported or skipped with a reason."""
        return self.records_imported + sum(self.skipped.values()) == self.records_total


@dataclass(frozen=True, slots=True)
class Line:
    """One physical line of a JSONL transcript, parsed or with the reason it wasn't."""

    number: int  # 1-based
    record: dict[str, Any] | None
    problem: str | None  # skip reason when record is None


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (fields may be null/absent)."""
    return value if isinstance(value, dict) else {}


def read_bytes(path: Path) -> bytes:
    """Read a whole file, turning OS errors into TranscriptImportError codes.

    One read call keeps a file that is deleted or rotated while we work from
    producing half a transcript; a file gone before the call is ``file_vanished``.
    """
    try:
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise TranscriptImportError(
            "file_vanished", f"The transcript {path} disappeared before it could be read.",
            path=str(path), detail=str(exc)) from exc
    except (IsADirectoryError, PermissionError, OSError) as exc:
        raise TranscriptImportError(
            "file_unreadable", f"The transcript {path} cannot be read.",
            path=str(path), detail=str(exc)) from exc


def decode(data: bytes, warnings: list[str], label: str) -> str:
    """Decode UTF-8 with replacement, warning once if bytes had to be replaced."""
    text = data.decode("utf-8", errors="replace")
    if "\ufffd" in text and b"\xef\xbf\xbd" not in data:
        warnings.append(f"{label}: contains bytes that are not UTF-8; they were replaced")
    return text


def source_label(source: Source) -> str:
    """A short name for warnings: the file name, or ``<lines>``."""
    if isinstance(source, (str, Path)):
        return Path(source).name
    return "<lines>"


def iter_lines(source: Source, warnings: list[str]) -> Iterator[Line]:
    """Yield every non-blank line of a JSONL source, parsed when possible.

    A last line that fails to parse and looks like the start of a JSON object is a
    ``truncated_line`` (the writer was mid-append); any other unparsable line is
    ``invalid_json``. Blank lines are not records and are not yielded.
    """
    if isinstance(source, (str, Path)):
        path = Path(source)
        raw_lines: list[str] = decode(read_bytes(path), warnings, path.name).split("\n")
    else:
        raw_lines = [
            item.decode("utf-8", errors="replace") if isinstance(item, bytes) else item
            for item in source
        ]
    last = len(raw_lines) - 1
    while last >= 0 and not raw_lines[last].strip():
        last -= 1
    for index, raw in enumerate(raw_lines[: last + 1]):
        text = raw.strip()
        if not text:
            continue
        try:
            record = safe_json.loads(text)
        except ValueError:
            looks_cut = index == last and text.startswith("{")
            yield Line(index + 1, None, "truncated_line" if looks_cut else "invalid_json")
            continue
        if not isinstance(record, dict):
            yield Line(index + 1, None, "not_an_object")
            continue
        yield Line(index + 1, record, None)


def parse_timestamp(value: Any) -> float | None:
    """Parse an ISO-8601 string or epoch number (s or ms) into epoch seconds."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            seconds = float(value) / 1000.0 if value > 1e11 else float(value)
        except OverflowError:  # an int beyond any float
            return None
        return _plausible(seconds)
    if isinstance(value, str) and value:
        try:
            stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
            if stamp.tzinfo is None:  # agents write UTC; a naive stamp is UTC too
                stamp = stamp.replace(tzinfo=UTC)
            return _plausible(stamp.timestamp())
        except (ValueError, OverflowError, OSError):
            return None
    return None


# 1970 .. 9999: beyond it a timestamp is hostile or corrupt, and datetime would overflow later.
_MAX_EPOCH = 253_402_300_799.0


def _plausible(seconds: float) -> float | None:
    return seconds if 0.0 <= seconds <= _MAX_EPOCH else None


def file_mtime(source: Source) -> float:
    """The file's mtime, used as the clock for formats that carry no timestamps."""
    if isinstance(source, (str, Path)):
        try:
            return Path(source).stat().st_mtime
        except OSError:
            return 0.0
    return 0.0


def finish_warnings(result: ImportResult, label: str, fmt: str) -> ImportResult:
    """Warn when a non-empty file had no parseable record at all (corrupt/binary).

    A file whose records are all bookkeeping (Claude Code writes sessions holding
    only file-history snapshots) is normal and gets no warning.
    """
    bad = result.skipped.get("invalid_json", 0) + result.skipped.get("truncated_line", 0) \
        + result.skipped.get("not_an_object", 0)
    if result.records_total and bad == result.records_total:
        result.warnings.append(
            f"{label}: no readable records; the file is corrupt or not a {fmt} transcript")
    elif result.skipped.get("truncated_line"):
        result.warnings.append(f"{label}: the last line is incomplete (file still being written?)")
    if result.warnings:
        logger.info("import %s: %s", label, "; ".join(result.warnings))
    return result
