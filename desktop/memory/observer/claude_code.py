"""Import Claude Code transcripts: session JSONL files and ``claude -p`` stream-json.

Session files (``~/.claude/projects/<slug>/<session>.jsonl``) hold one record per
line: ``user``/``assistant`` messages whose ``message.content`` is a list of blocks
(text, thinking, tool_use, tool_result), plus bookkeeping records (progress,
file-history-snapshot, queue-operation, last-prompt, summary, system/turn_duration)
that carry nothing the observer learns from. Claude Code writes one record per
content block, so a model step is identified by ``message.id``, not by record.

Subagents run in their own files (``<session>/subagents/agent-<id>.jsonl``) whose
records share the parent's ``sessionId`` but carry ``isSidechain`` and ``agentId``;
they become child sessions ``<session>:agent-<id>``. Compaction writes a
``compact_boundary`` system record and a user record flagged ``isCompactSummary``;
both are counted, and the summary is never mistaken for a prompt.

``claude -p --output-format stream-json --verbose`` prints the same message shapes
with ``session_id`` instead of ``sessionId``, no timestamps, a ``system/init``
record first and a ``result`` record last that states the outcome.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Final

from desktop.memory.observer.builder import SessionTrack
from desktop.memory.observer.records import (
    ImportResult,
    Line,
    Source,
    TranscriptImportError,
    as_dict,
    file_mtime,
    finish_warnings,
    iter_lines,
    parse_timestamp,
    source_label,
)
from desktop.memory.observer.tool_names import is_local_command
from desktop.memory.observer.utterances import CORRECTION, EXPANSION, QUEUED, rejection_feedback

logger = logging.getLogger("engram.observer")

AGENT: Final = "claude-code"
# Bookkeeping record types: real, expected, and of no use to the observer.
_NOISE: Final[dict[str, str]] = {
    "progress": "progress",
    "file-history-snapshot": "file_history_snapshot",
    "last-prompt": "last_prompt",
    "summary": "summary",
    "custom-title": "custom_title",
    "stream_event": "partial_message",
}
# User-role text that Claude Code injects itself; not something the user typed.
_INJECTED: Final = (
    "<task-notification>", "<local-command-stdout>", "<local-command-stderr>",
    "<local-command-caveat>", "<system-reminder>", "<bash-stdout>", "<bash-stderr>",
)
_INTERRUPT: Final = "[Request interrupted by user"
#: A slash command the user typed; the user-role text right after it (before the model answers)
#: is the command's expanded prompt, written by the harness.
_COMMAND_NAME: Final = ("<command-message>", "<command-name>")


def _result_text(content: Any) -> str:
    """Flatten tool_result content (a string or a list of text/image blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, dict):
                if block.get("type") == "text":
                    parts.append(str(block.get("text", "")))
                else:
                    parts.append(f"[{block.get('type', 'block')}]")
            elif isinstance(block, str):
                parts.append(block)
        return "\n".join(parts)
    return "" if content is None else str(content)


class _ClaudeImporter:
    """Translates Claude Code records for one file into events on an ImportResult."""

    def __init__(self, out: ImportResult, fallback_sid: str | None, *, headless: bool,
                 clock: float | None) -> None:
        self.out = out
        self.fallback_sid = fallback_sid
        self.headless = headless
        self.clock = clock  # stands in for timestamps in stream-json, which has none
        self.tracks: dict[str, SessionTrack] = {}
        self.tail: dict[str, str] = {}  # session -> "interrupt" | "api_error" | "ok"
        self.unknown_types: set[str] = set()
        self.queued: dict[str, list[str]] = {}  # session -> messages typed while the agent worked
        self.expanding: set[str] = set()  # sessions whose next user text expands a slash command

    # -- sessions ----------------------------------------------------------------
    def track_for(self, rec: dict[str, Any]) -> SessionTrack | None:
        sid = rec.get("sessionId") or rec.get("session_id") or self.fallback_sid
        if not isinstance(sid, str) or not sid:
            return None
        parent: str | None = None
        session_type = "headless" if self.headless else "interactive"
        agent_id = rec.get("agentId")
        parent_tool = rec.get("parent_tool_use_id")
        if rec.get("isSidechain"):
            parent = sid
            sid = f"{sid}:agent-{agent_id}" if agent_id else f"{sid}:sidechain"
            compaction = isinstance(agent_id, str) and agent_id.startswith("acompact")
            session_type = "compaction" if compaction else "subagent"
        elif isinstance(parent_tool, str) and parent_tool:
            parent, sid, session_type = sid, f"{sid}:task-{parent_tool}", "subagent"
        track = self.tracks.get(sid)
        if track is None and parent is not None and parent in self.tracks:
            # Child records may omit cwd (stream-json); a subagent works where its parent does.
            rec = {"cwd": self.tracks[parent].cwd, "gitBranch": self.tracks[parent].branch, **rec}
        if track is None:
            track = SessionTrack(self.out, sid, AGENT, session_type=session_type,
                                 parent_session_id=parent, timed=not self.headless)
            self.tracks[sid] = track
        if not track.started:  # metadata is on every record; take the first we see
            track.cwd = track.cwd or str(rec.get("cwd") or "")
            track.branch = track.branch or rec.get("gitBranch") or None
        return track

    # -- records -------------------------------------------------------------------
    def record(self, line: Line) -> str | None:
        """Translate one parsed record; return a skip reason, or None if used."""
        rec = line.record or {}
        rtype = rec.get("type")
        if not isinstance(rtype, str):
            return "missing_fields"
        if rtype in _NOISE:
            return _NOISE[rtype]
        ts = parse_timestamp(rec.get("timestamp"))
        if ts is None:
            ts = self.clock
        if rtype == "system":
            return self.system(rec, ts)
        if rtype == "result":
            return self.result(rec, ts)
        if rtype == "queue-operation":
            return self.queue(rec, ts, line.number)
        if rtype not in ("user", "assistant"):
            self.unknown_types.add(rtype)
            return "unknown_record_type"
        msg = rec.get("message")
        track = self.track_for(rec)
        if not isinstance(msg, dict) or track is None:
            return "missing_fields"
        rid = str(rec.get("uuid") or f"L{line.number}")
        if rtype == "assistant":
            return self.assistant(track, rec, msg, ts, rid)
        return self.user(track, rec, msg, ts, rid)

    def system(self, rec: dict[str, Any], ts: float | None) -> str | None:
        subtype = rec.get("subtype")
        if subtype == "compact_boundary":
            self.out.stats["compactions"] += 1
            return "compact_boundary"
        if subtype == "init":  # stream-json: the session's metadata, up front
            track = self.track_for(rec)
            if track is None:
                return "missing_fields"
            track.start(ts)
            return None
        return f"system_{subtype or 'unknown'}"

    def queue(self, rec: dict[str, Any], ts: float | None, number: int) -> str | None:
        """Messages typed while the agent works: ``enqueue`` holds one; ``remove`` hands it to the
        running turn (the only record of it); ``dequeue`` sends it as the next prompt (its own
        user record follows); ``popAll`` takes them back into the input box (resent later)."""
        track = self.track_for(rec)
        if track is None:
            return "missing_fields"
        waiting = self.queued.setdefault(track.session_id, [])
        op, content = rec.get("operation"), rec.get("content")
        if op == "enqueue" and isinstance(content, str) and content.strip():
            waiting.append(content)
            return "queue_operation"
        if op == "remove" and waiting:
            text = waiting.pop(0)
            if text.strip().startswith(_INJECTED):
                return "injected_message"
            track.user_message(ts, f"Q{number}", text.strip(), "queued", origin=QUEUED)
            return None
        if op == "dequeue" and waiting:
            waiting.pop(0)
        elif op == "popAll":
            waiting.clear()
        return "queue_operation"

    def result(self, rec: dict[str, Any], ts: float | None) -> str | None:
        track = self.track_for(rec)
        if track is None:
            return "missing_fields"
        failed = bool(rec.get("is_error")) or str(rec.get("subtype", "")).startswith("error")
        track.outcome = "failure" if failed else "success"
        self.tail[track.session_id] = "result"
        track.start(ts)
        return None

    def assistant(self, track: SessionTrack, rec: dict[str, Any], msg: dict[str, Any],
                  ts: float | None, rid: str) -> str | None:
        if rec.get("isApiErrorMessage"):
            self.out.stats["api_errors"] += 1
            self.tail[track.session_id] = "api_error"
            return "api_error"
        content = msg.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return "missing_fields"
        marker = str(msg.get("id") or rec.get("requestId") or rid)
        self.expanding.discard(track.session_id)
        used = False
        for i, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text" and str(block.get("text") or "").strip():
                track.reasoning(ts, rid, str(block["text"]), "text", f"b{i}", marker)
            elif btype == "thinking" and str(block.get("thinking") or "").strip():
                track.reasoning(ts, rid, str(block["thinking"]), "thinking", f"b{i}", marker)
            elif btype in ("tool_use", "server_tool_use"):
                args = as_dict(block.get("input"))
                track.tool_call(ts, rid, str(block.get("id") or f"{rid}:{i}"),
                                str(block.get("name") or "unknown"), args, marker=marker,
                                suffix=f"b{i}")
            elif isinstance(btype, str) and btype.endswith("_tool_result"):  # server tools
                track.tool_result(ts, rid, str(block.get("tool_use_id") or f"{rid}:{i}"),
                                  _result_text(block.get("content")), False, suffix=f"b{i}")
            else:
                continue
            used = True
        if used:
            self.tail[track.session_id] = "ok"
        return None if used else "empty_message"

    def user(self, track: SessionTrack, rec: dict[str, Any], msg: dict[str, Any],
             ts: float | None, rid: str) -> str | None:
        if rec.get("isCompactSummary"):
            self.out.stats["compact_summaries"] += 1
            return "compact_summary"
        if rec.get("isMeta"):
            return "meta_message"
        content = msg.get("content")
        if isinstance(content, str):
            return self.prompt(track, ts, rid, content, "user")
        if not isinstance(content, list):
            return "missing_fields"
        used = False
        for i, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "tool_result":
                output = _result_text(block.get("content"))
                track.tool_result(ts, rid, str(block.get("tool_use_id") or f"{rid}:{i}"),
                                  output, bool(block.get("is_error")), suffix=f"b{i}")
                said = rejection_feedback(output) if block.get("is_error") else None
                if said:  # the user declined the call and said why: a correction in their words
                    track.user_message(ts, rid, said, f"b{i}said", origin=CORRECTION)
                self.tail[track.session_id] = "ok"
                used = True
            elif btype == "text":
                used = self.prompt(track, ts, rid, str(block.get("text") or ""), f"b{i}") is None or used
        return None if used else "empty_message"

    def prompt(self, track: SessionTrack, ts: float | None, rid: str, text: str, suffix: str) -> str | None:
        stripped = text.strip()
        if not stripped:
            return "empty_message"
        if stripped.startswith(_INTERRUPT):
            # Not a prompt, but it tells us how the session ended if nothing follows.
            self.out.stats["interrupts"] += 1
            self.tail[track.session_id] = "interrupt"
            track.start(ts)
            track.close_step()
            return None
        if stripped.startswith(_INJECTED):
            return "injected_message"
        if is_local_command(stripped):  # /status, /model...: handled by the CLI, never a prompt
            return "local_command"
        if stripped.startswith(_COMMAND_NAME):
            self.expanding.add(track.session_id)
        elif track.session_id in self.expanding:
            # The prompt a slash command expanded to (``/init``, a custom command): the user
            # typed the command, not this text. Kept as an event, never read as their words.
            track.user_message(ts, rid, stripped, suffix, origin=EXPANSION)
            self.tail[track.session_id] = "ok"
            return None
        track.user_message(ts, rid, stripped, suffix)
        self.tail[track.session_id] = "ok"
        return None

    def finish(self) -> None:
        """End every session, inferring the outcome from how its transcript ends."""
        for sid, track in self.tracks.items():
            tail = self.tail.get(sid)
            if tail == "interrupt":
                track.outcome = "abandoned"
            elif tail == "api_error":
                track.outcome = "failure"
            track.end()
        if self.unknown_types:
            self.out.warnings.append("unknown record types skipped: " + ", ".join(sorted(self.unknown_types)))


def _run(source: Source, *, headless: bool, fmt: str) -> ImportResult:
    out = ImportResult()
    is_path = isinstance(source, (str, Path))
    fallback = Path(source).stem if is_path else None  # type: ignore[arg-type]
    clock = file_mtime(source) if headless else None
    importer = _ClaudeImporter(out, fallback, headless=headless, clock=clock)
    for line in iter_lines(source, out.warnings):
        out.records_total += 1
        reason = line.problem or importer.record(line)
        if reason:
            out.skipped[reason] += 1
        else:
            out.records_imported += 1
    importer.finish()
    return finish_warnings(out, source_label(source), fmt)


def subagent_files(session_file: Path) -> list[Path]:
    """The subagent transcripts Claude Code keeps beside a session file, sorted."""
    folder = session_file.parent / session_file.stem / "subagents"
    try:
        return sorted(folder.glob("agent-*.jsonl"))
    except OSError:
        return []


def import_claude_code(source: Source, *, include_subagents: bool = True) -> ImportResult:
    """Import a Claude Code session JSONL (a path, or its lines).

    For a ``<session>.jsonl`` path, subagent files under ``<session>/subagents/`` are
    imported too (as child sessions) unless ``include_subagents`` is False. A
    subagent file that vanishes is a warning; the main file vanishing raises
    ``TranscriptImportError("file_vanished")``.
    """
    out = _run(source, headless=False, fmt="Claude Code")
    if include_subagents and isinstance(source, (str, Path)):
        for sub in subagent_files(Path(source)):
            try:
                child = _run(sub, headless=False, fmt="Claude Code")
            except TranscriptImportError as exc:
                out.warnings.append(f"subagent transcript {sub.name} skipped: {exc.code}")
                continue
            out.stats["subagent_files"] += 1
            out.merge(child)
    return out


def import_claude_stream_json(source: Source) -> ImportResult:
    """Import ``claude -p --output-format stream-json --verbose`` output.

    Stream-json has no timestamps; every event gets the file's mtime (0.0 for
    in-memory lines), so durations are unknown. The ``result`` record sets the
    session outcome (``success``/``failure``).
    """
    return _run(source, headless=True, fmt="Claude stream-json")
