"""Import Gemini CLI chat recordings, in both formats the CLI has written.

* Up to 0.4x: ``~/.gemini/tmp/<sha256 of the project path>/chats/session-*.json``, one
  JSON object rewritten in place as the chat grows:
  ``{sessionId, projectHash, startTime, lastUpdated, messages: [...]}``.
* 0.61: ``~/.gemini/tmp/<project name>/chats/session-*.jsonl``, appended to: a first
  line with the metadata (``sessionId``, ``projectHash``, ...), then one line per
  message written (a message written again, by ``id``, replaces the earlier version
  in place: a model turn is written before and after its tool calls ran), ``{"$set":
  {...}}`` lines updating the metadata (``messages`` in it replaces the whole list) and
  ``{"$rewindTo": id}`` lines dropping that message and everything after it. The
  folder's ``.project_root`` file holds the project path. :func:`replay_jsonl` rebuilds
  the recording object the way the CLI's own loader does.

Each message is one record: ``user`` (a prompt, or the tool results sent back),
``gemini`` (one model turn with ``thoughts``, ``content`` and ``toolCalls`` whose results
are stored inline), ``info`` or ``error``. The JSON format names no working directory,
only ``projectHash``, so callers pass ``cwd`` when they know it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from desktop.memory import safe_json
from desktop.memory.observer.builder import SessionTrack
from desktop.memory.observer.records import (
    ImportResult,
    as_dict,
    decode,
    finish_warnings,
    iter_lines,
    parse_timestamp,
    read_bytes,
)

logger = logging.getLogger("engram.observer")

AGENT: Final = "gemini-cli"
_FAILED: Final = frozenset({"error", "cancelled"})
# Gemini CLI's shell tool reports a command that failed with status "success" and this line in its output.
_EXIT_CODE: Final = re.compile(r"^Exit Code: (-?\d+)\s*$", re.M)
# What the CLI itself adds to a user message: its session context (the folder tree) and what
# hooks returned (Engram's own memories among them). Neither is what the user typed.
_CLI_CONTEXT: Final = re.compile(r"<(session_context|hook_context)>.*?</\1>", re.S)


def project_hash(project_dir: str | Path) -> str:
    """The ``projectHash`` Gemini CLI derives from a project's absolute path."""
    return hashlib.sha256(str(project_dir).encode("utf-8")).hexdigest()


def _content_text(content: Any) -> str:
    """Gemini stores content as a string or as a list of ``{text: ...}`` parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text")) for p in content if isinstance(p, dict) and p.get("text"))
    return ""


def _result_text(call: Mapping[str, Any]) -> str:
    """The tool output: functionResponse.response output/error, else resultDisplay."""
    parts: list[str] = []
    result = call.get("result")
    for part in result if isinstance(result, list) else [result]:
        if not isinstance(part, dict):
            continue
        response = (part.get("functionResponse") or {}).get("response")
        if isinstance(response, dict) and response:
            value = response.get("output", response.get("error", response))
            parts.append(value if isinstance(value, str) else json.dumps(value, sort_keys=True))
        elif isinstance(part.get("text"), str):
            parts.append(part["text"])
    if not parts:
        display = call.get("resultDisplay")
        if isinstance(display, str):
            parts.append(display)
        elif display is not None:
            parts.append(json.dumps(display, sort_keys=True))
    return "\n".join(parts)


def _load(source: Path | str | Mapping[str, Any], out: ImportResult) -> Mapping[str, Any] | None:
    """Parse the recording; a broken file counts as one skipped record."""
    if isinstance(source, Mapping):
        return source
    path = Path(source)
    text = decode(read_bytes(path), out.warnings, path.name).strip()
    try:
        data = safe_json.loads(text, max_chars=512 * 1024 * 1024)
    except ValueError:
        out.records_total = 1
        # Gemini rewrites the whole file; a cut-off write leaves an unclosed object.
        out.skipped["truncated_file" if text.startswith("{") else "invalid_json"] += 1
        out.warnings.append(f"{path.name}: not valid JSON; the recording is corrupt or half-written")
        return None
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        out.records_total = 1
        out.skipped["missing_fields"] += 1
        out.warnings.append(f"{path.name}: not a Gemini CLI chat recording (no messages list)")
        return None
    return data


def _gemini_turn(track: SessionTrack, msg: Mapping[str, Any], rid: str, ts: float | None) -> bool:
    """Translate one model turn; returns False when it held nothing usable."""
    used = False
    for i, thought in enumerate(msg.get("thoughts") or []):
        if not isinstance(thought, dict):
            continue
        subject, body = str(thought.get("subject") or ""), str(thought.get("description") or "")
        text = f"{subject}: {body}" if subject and body else subject or body
        if text.strip():
            track.reasoning(parse_timestamp(thought.get("timestamp")) or ts, rid, text, "thinking",
                            f"t{i}", marker=rid)
            used = True
    text = _content_text(msg.get("content")).strip()
    if text:
        track.reasoning(ts, rid, text, "text", "text", marker=rid)
        used = True
    for i, call in enumerate(msg.get("toolCalls") or []):
        if not isinstance(call, dict) or not call.get("name"):
            continue
        call_id = str(call.get("id") or f"{rid}:{i}")
        args = as_dict(call.get("args"))
        track.tool_call(ts, rid, call_id, str(call["name"]), args, marker=rid, suffix=f"c{i}")
        status = str(call.get("status") or "")
        output = _result_text(call) or (f"[{status}]" if status else "")
        output = _CLI_CONTEXT.sub("", output).rstrip() if "_context>" in output else output
        code = _EXIT_CODE.search(output)
        failed = status in _FAILED or (code is not None and code.group(1) != "0")
        track.tool_result(parse_timestamp(call.get("timestamp")) or ts, rid, call_id, output, failed,
                          suffix=f"r{i}")
        used = True
    return used


def project_root_of(path: Path) -> str:
    """The project a 0.61 recording belongs to (``<folder>/.project_root`` beside ``chats/``), or ''."""
    marker = path.parent.parent / ".project_root"
    try:
        text = marker.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""
    return text if text.startswith("/") or (len(text) > 2 and text[1] == ":") else ""


def replay_jsonl(path: Path, out: ImportResult) -> dict[str, Any] | None:
    """The recording object a 0.61 ``.jsonl`` file describes (None when it has no metadata line).

    Lines that are not JSON objects are counted as skipped records in ``out``; metadata
    updates and rewinds are counted in ``out.stats``.
    """
    meta: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}
    for line in iter_lines(path, out.warnings):
        rec = line.record
        if rec is None:
            out.records_total += 1
            out.skipped[line.problem or "invalid_json"] += 1
            continue
        if isinstance(rec.get("$rewindTo"), str):
            out.stats["rewinds"] += 1
            ids = list(messages)
            cut = ids.index(rec["$rewindTo"]) if rec["$rewindTo"] in messages else 0
            for mid in ids[cut:]:
                del messages[mid]
        elif isinstance(rec.get("id"), str):
            messages[rec["id"]] = rec  # a rewrite keeps the message's first position
        elif isinstance(rec.get("$set"), dict):
            out.stats["metadata_updates"] += 1
            update = rec["$set"]
            if isinstance(update.get("messages"), list):
                messages = {m["id"]: m for m in update["messages"]
                            if isinstance(m, dict) and isinstance(m.get("id"), str)}
            meta.update({k: v for k, v in update.items() if k != "messages"})
        elif isinstance(rec.get("sessionId"), str) and isinstance(rec.get("projectHash"), str):
            meta.update({k: v for k, v in rec.items() if k != "messages"})
            for m in rec.get("messages") or []:
                if isinstance(m, dict) and isinstance(m.get("id"), str):
                    messages[m["id"]] = m
        else:
            out.records_total += 1
            out.skipped["unknown_record_type"] += 1
    if not meta.get("sessionId"):
        return None
    return {**meta, "messages": list(messages.values())}


def import_gemini_jsonl(path: Path | str, *, cwd: str = "") -> ImportResult:
    """Import one Gemini CLI 0.61 recording (``session-*.jsonl``); ``cwd`` defaults to its ``.project_root``."""
    path = Path(path)
    lines = ImportResult()
    data = replay_jsonl(path, lines)
    if data is None:
        lines.records_total += 1
        lines.skipped["missing_fields"] += 1
        lines.warnings.append(f"{path.name}: not a Gemini CLI chat recording (no session metadata line)")
        return finish_warnings(lines, path.name, "Gemini CLI")
    out = import_gemini_chat(data, cwd=cwd or project_root_of(path), label=path.name,
                             fallback=path.stem)
    out.merge(lines)
    return out


def import_gemini_chat(source: Path | str | Mapping[str, Any], *, cwd: str = "", label: str = "",
                       fallback: str = "") -> ImportResult:
    """Import one Gemini CLI chat recording (a path, or the already-parsed object).

    Every message is a record. ``info`` and ``error`` messages are counted as
    skipped; an ``error`` as the last message makes the outcome ``failure``.
    """
    out = ImportResult()
    label = label or ("<object>" if isinstance(source, Mapping) else Path(source).name)
    data = _load(source, out)
    if data is None:
        return finish_warnings(out, label, "Gemini CLI")
    fallback = fallback or (Path(source).stem if not isinstance(source, Mapping) else "gemini-session")
    track = SessionTrack(out, str(data.get("sessionId") or fallback), AGENT, cwd=cwd, timed=False)
    track.start(parse_timestamp(data.get("startTime")))
    tail = "unknown"
    for index, msg in enumerate(data["messages"]):
        out.records_total += 1
        if not isinstance(msg, dict):
            out.skipped["not_an_object"] += 1
            continue
        mtype, ts = msg.get("type"), parse_timestamp(msg.get("timestamp"))
        rid = str(msg.get("id") or f"m{index}")
        reason: str | None = None
        if mtype == "user":
            text = _CLI_CONTEXT.sub("", _content_text(msg.get("content"))).strip()
            if text:
                track.user_message(ts, rid, text)
                tail = "unknown"
            else:
                reason = "empty_message"
        elif mtype == "gemini":
            reason = None if _gemini_turn(track, msg, rid, ts) else "empty_message"
            tail = "unknown"
        elif mtype == "info":
            reason = "info_message"
        elif mtype == "error":
            reason, tail = "error_message", "failure"
            out.stats["agent_errors"] += 1
        else:
            reason = "unknown_record_type"
        if reason:
            out.skipped[reason] += 1
        else:
            out.records_imported += 1
    track.end(parse_timestamp(data.get("lastUpdated")), tail)
    return finish_warnings(out, label, "Gemini CLI")
