"""Recognise a transcript's format from its first records and import it.

Users drop arbitrary files on Engram; the file name says little (Codex exec output
is whatever the user redirected to). The first few parseable records do.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Final

from desktop.memory import safe_json
from desktop.memory.observer.claude_code import import_claude_code, import_claude_stream_json
from desktop.memory.observer.codex import import_codex_exec_json, import_codex_rollout
from desktop.memory.observer.gemini import import_gemini_chat, import_gemini_jsonl
from desktop.memory.observer.records import (
    ImportResult,
    TranscriptImportError,
    finish_warnings,
    iter_lines,
)

logger = logging.getLogger("engram.observer")

_SNIFF_BYTES: Final = 256 * 1024
_SNIFF_RECORDS: Final = 25
_ROLLOUT_TYPES: Final = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_CLAUDE_TYPES: Final = frozenset({
    "user", "assistant", "summary", "file-history-snapshot", "progress", "queue-operation",
    "last-prompt", "system"})

FORMATS: Final[tuple[str, ...]] = (
    "claude-code-jsonl", "claude-stream-json", "codex-exec-json", "codex-rollout", "gemini-chat", "gemini-jsonl")


def _classify_record(rec: dict[str, Any], number: int) -> str | None:
    """The format one record implies, or None if it could belong to several."""
    rtype = rec.get("type")
    if isinstance(rtype, str):
        if rtype in ("thread.started", "turn.started", "turn.completed", "turn.failed") \
                or rtype.startswith("item."):
            return "codex-exec-json"
        if rtype in _ROLLOUT_TYPES:
            return "codex-rollout"
        if rtype == "result" or (rtype == "system" and rec.get("subtype") == "init"):
            return "claude-stream-json"
        if rtype in _CLAUDE_TYPES:
            if "session_id" in rec and "sessionId" not in rec:
                return "claude-stream-json"
            return "claude-code-jsonl"
    elif number == 1 and "id" in rec and "timestamp" in rec and "instructions" in rec:
        return "codex-rollout"  # the pre-2025-09 rollout header
    elif number == 1 and isinstance(rec.get("sessionId"), str) and isinstance(rec.get("projectHash"), str):
        return "gemini-jsonl"  # Gemini CLI 0.61: the metadata line, then messages and "$set" updates
    return None


def _read_head(path: Path) -> str:
    """The first bytes of a file, with the same error codes as a full read."""
    try:
        with path.open("rb") as handle:
            return handle.read(_SNIFF_BYTES).decode("utf-8", errors="replace")
    except FileNotFoundError as exc:
        raise TranscriptImportError("file_vanished", f"The transcript {path} disappeared.",
                                    path=str(path), detail=str(exc)) from exc
    except OSError as exc:
        raise TranscriptImportError("file_unreadable", f"The transcript {path} cannot be read.",
                                    path=str(path), detail=str(exc)) from exc


def detect_format(path: Path) -> str | None:
    """Return one of FORMATS for the file at ``path``, or None if unrecognised."""
    head = _read_head(path)
    stripped = head.lstrip()
    if stripped.startswith("{"):
        first_line = stripped.split("\n", 1)[0].strip()
        try:
            safe_json.loads(first_line)
        except ValueError:
            # Not line-delimited: a pretty-printed Gemini recording (or a cut-off one).
            if path.suffix == ".json" or ('"messages"' in head and '"sessionId"' in head):
                return "gemini-chat"
        else:
            if '"messages"' in first_line and '"projectHash"' in first_line and path.suffix != ".jsonl":
                return "gemini-chat"  # a single-line Gemini recording
    seen = 0
    for line in iter_lines(head.split("\n"), []):
        if line.record is None:
            continue
        fmt = _classify_record(line.record, line.number)
        if fmt:
            return fmt
        seen += 1
        if seen >= _SNIFF_RECORDS:
            break
    return None


def _unrecognised(path: Path) -> ImportResult:
    """Account for every line of a file no importer understands."""
    out = ImportResult()
    for line in iter_lines(path, out.warnings):
        out.records_total += 1
        out.skipped[line.problem or "unknown_format"] += 1
    out.warnings.append(f"{path.name}: not a recognised agent transcript format")
    return finish_warnings(out, path.name, "known agent")


def import_any(path: Path) -> ImportResult:
    """Import a transcript of any supported format, sniffing which one it is.

    Never raises for bad content (an unrecognised or corrupt file yields a result
    with every record skipped and a warning); raises TranscriptImportError only
    when the file itself cannot be read (``file_vanished``, ``file_unreadable``).
    """
    path = Path(path)
    if path.is_dir():
        raise TranscriptImportError("file_unreadable", f"{path} is a folder, not a transcript.",
                                    path=str(path))
    fmt = detect_format(path)
    logger.debug("import_any %s as %s", path, fmt)
    if fmt == "claude-code-jsonl":
        return import_claude_code(path)
    if fmt == "claude-stream-json":
        return import_claude_stream_json(path)
    if fmt == "codex-exec-json":
        return import_codex_exec_json(path)
    if fmt == "codex-rollout":
        return import_codex_rollout(path)
    if fmt == "gemini-chat":
        return import_gemini_chat(path)
    if fmt == "gemini-jsonl":
        return import_gemini_jsonl(path)
    return _unrecognised(path)
