"""Import OpenAI Codex CLI transcripts: ``codex exec --json`` output and rollout files.

``codex exec --json`` prints thread/turn/item events with no timestamps and no
working directory; items (reasoning, agent_message, command_execution, file_change,
mcp_tool_call, web_search, todo_list) arrive as started/updated/completed.

Rollout files (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) wrap everything in
``{timestamp, type, payload}``: ``session_meta`` (id, cwd, git), ``turn_context``,
``response_item`` (the model-facing history: messages, reasoning, function calls and
their outputs) and ``event_msg`` (UI events, which repeat much of the history). The
importer reads tools and agent prose from ``response_item`` and the user's prompts
from ``event_msg/user_message`` (clean text, without the environment preamble) so
nothing is counted twice.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any, Final

from desktop.memory import safe_json
from desktop.memory.observer.builder import SessionTrack
from desktop.memory.observer.records import (
    ImportResult,
    Source,
    as_dict,
    file_mtime,
    finish_warnings,
    iter_lines,
    parse_timestamp,
    source_label,
)
from desktop.memory.observer.tool_names import (
    TODO_WRITE,
    WEB_SEARCH,
    canonical_tool,
    edit_or_write,
    patch_files,
)

logger = logging.getLogger("engram.observer")

AGENT: Final = "codex"
_TOOL_ITEMS: Final = frozenset({"command_execution", "file_change", "mcp_tool_call", "web_search"})
_RESULT_ITEMS: Final = frozenset({"command_execution", "file_change", "mcp_tool_call"})
_INJECTED: Final = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<permissions")
_RESPONSE_TYPES: Final = frozenset({
    "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
    "custom_tool_call_output", "local_shell_call", "web_search_call"})
_EVENT_OUTCOMES: Final = {"task_complete": "success", "turn_aborted": "abandoned", "error": "failure"}
_EXIT_RE: Final = re.compile(r"(?:Exit code|Process exited with code):? (-?\d+)")
_WALL_RE: Final = re.compile(r"Wall time: ([\d.]+) seconds")


def _texts(content: Any, *kinds: str) -> str:
    """Join the text of content blocks of the given types (or a plain string)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(str(b.get("text", "")) for b in content
                     if isinstance(b, dict) and b.get("type") in kinds and b.get("text"))


def _tool_args(name: str, args: dict[str, Any]) -> tuple[str | None, dict[str, Any], str | None]:
    """Canonical tool override, args and workdir for a Codex function/custom call."""
    workdir = args.get("workdir") or args.get("working_directory")
    if name == "apply_patch":
        patch = str(args.get("input") or args.get("patch") or "")
        files = patch_files(patch)
        out = dict(args, paths=[p for _, p in files])
        if files:
            out["file_path"] = files[0][1]
        return edit_or_write(k for k, _ in files), out, workdir
    return None, args, workdir if isinstance(workdir, str) else None


#: Codex's whole output for a call that was refused before it ran.
_REFUSED: Final = ("exec command rejected by user", "patch rejected by user", "This action was rejected")


def _parse_output(raw: Any) -> tuple[str, bool, int | None]:
    """Return (text, is_error, duration_ms) from a rollout function-call output.

    Older Codex wrote ``{"output": ..., "metadata": {"exit_code", "duration_seconds"}}``
    as a JSON string; newer writes plain text starting ``Exit code: N``.
    """
    if isinstance(raw, dict):
        text = _texts(raw.get("content"), "input_text", "output_text", "text") or json.dumps(raw)
        return text, raw.get("success") is False, None
    text = str(raw or "")
    try:
        data = safe_json.loads(text) if text.startswith("{") else None
    except ValueError:
        data = None
    if isinstance(data, dict) and "output" in data:
        meta = as_dict(data.get("metadata"))
        code, secs = meta.get("exit_code"), meta.get("duration_seconds")
        dur = int(secs * 1000) if isinstance(secs, (int, float)) else None
        return str(data["output"]), isinstance(code, int) and code != 0, dur
    code_m, wall_m = _EXIT_RE.search(text[:300]), _WALL_RE.search(text[:300])
    # Codex answers a refusal (the user's "no", the approval judge's) with its words alone, no exit code:
    # the command never ran, so it is no run that went fine.
    failed = (code_m is not None and code_m.group(1) != "0") or text.startswith(
        ("apply_patch verification failed", "error:", "Error:", "failed to", *_REFUSED))
    return text, failed, int(float(wall_m.group(1)) * 1000) if wall_m else None


class _CodexImporter:
    """Translates both Codex formats; ``rollout`` picks the record grammar."""

    def __init__(self, out: ImportResult, fallback_sid: str, cwd: str, clock: float | None) -> None:
        self.out = out
        self.fallback_sid = fallback_sid
        self.cwd = cwd
        self.clock = clock
        self.track: SessionTrack | None = None
        self.called: set[str] = set()
        self.event_prompts = False  # rollout has event_msg/user_message records
        self.tail = "unknown"

    def ensure(self, ts: float | None, sid: str | None = None, **meta: Any) -> SessionTrack:
        if self.track is None:
            self.track = SessionTrack(self.out, sid or self.fallback_sid, AGENT, cwd=self.cwd,
                                      timed=self.clock is None, **meta)
            self.track.start(ts)
        return self.track

    # -- codex exec --json -----------------------------------------------------------
    def exec_record(self, rec: dict[str, Any], number: int) -> str | None:
        rtype, ts = rec.get("type"), self.clock
        if rtype == "thread.started":
            self.ensure(ts, str(rec.get("thread_id") or self.fallback_sid), session_type="headless")
            return None
        track = self.ensure(ts, session_type="headless")
        if rtype == "turn.started":
            track.boundary()
            return None
        if rtype in ("turn.completed", "turn.failed"):
            track.close_step()
            track.outcome = "success" if rtype == "turn.completed" else "failure"
            if rtype == "turn.failed":
                self.out.warnings.append(f"turn failed: {(rec.get('error') or {}).get('message', '')}")
            return None
        if rtype == "error":
            self.out.warnings.append(f"codex error: {rec.get('message', '')}")
            return "stream_error"
        if rtype not in ("item.started", "item.updated", "item.completed"):
            return "unknown_record_type"
        item = rec.get("item")
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            return "missing_fields"
        return self.exec_item(track, rtype, item, number, ts)

    def exec_item(self, track: SessionTrack, rtype: str, item: dict[str, Any], number: int,
                  ts: float | None) -> str | None:
        kind, item_id = item["type"], str(item.get("id") or f"L{number}")
        done = rtype == "item.completed"
        if kind in ("reasoning", "agent_message"):
            if not done:
                return "item_partial"
            text = str(item.get("text") or "")
            if not text.strip():
                return "empty_message"
            track.reasoning(ts, item_id, text, "thinking" if kind == "reasoning" else "text", kind)
            return None
        if kind == "todo_list":
            if done:
                return "duplicate_item"
            track.tool_call(ts, f"L{number}", f"{item_id}@L{number}", "todo_list",
                            {"todos": item.get("items") or []}, tool=TODO_WRITE)
            return None
        if kind == "error":
            self.out.warnings.append(f"codex item error: {item.get('message', '')}")
            return "error_item"
        if kind not in _TOOL_ITEMS:
            return "unknown_item_type"
        used = False
        if item_id not in self.called:
            self.called.add(item_id)
            self.exec_call(track, kind, item, item_id, ts)
            used = True
        if done and kind in _RESULT_ITEMS:
            status = item.get("status")
            if kind == "command_execution":
                code = item.get("exit_code")
                output = str(item.get("aggregated_output") or "")
                failed = status == "failed" or (isinstance(code, int) and code != 0)
            elif kind == "file_change":
                output = "\n".join(f"{c.get('kind')} {c.get('path')}" for c in item.get("changes") or []
                                   if isinstance(c, dict))
                failed = status == "failed"
            else:
                err = as_dict(item.get("error"))
                output = str(err.get("message") or json.dumps(item.get("result"), sort_keys=True))
                failed = status == "failed" or bool(err)
            track.tool_result(ts, item_id, item_id, output, failed)
            used = True
        return None if used else "duplicate_item"

    def exec_call(self, track: SessionTrack, kind: str, item: dict[str, Any], item_id: str,
                  ts: float | None) -> None:
        if kind == "command_execution":
            track.tool_call(ts, item_id, item_id, kind, {"command": item.get("command", "")})
        elif kind == "file_change":
            changes = [c for c in item.get("changes") or [] if isinstance(c, dict)]
            paths = [str(c.get("path")) for c in changes if c.get("path")]
            args = {"changes": changes, "paths": paths, **({"file_path": paths[0]} if paths else {})}
            track.tool_call(ts, item_id, item_id, kind, args,
                            tool=edit_or_write(str(c.get("kind")) for c in changes))
        elif kind == "mcp_tool_call":
            raw = f"mcp:{item.get('server', '')}/{item.get('tool', '')}"
            args = as_dict(item.get("arguments"))
            track.tool_call(ts, item_id, item_id, raw, args, tool="Other")
        else:
            track.tool_call(ts, item_id, item_id, kind, {"query": item.get("query", "")}, tool=WEB_SEARCH)

    # -- rollout files -------------------------------------------------------------------
    def rollout_record(self, rec: dict[str, Any], number: int) -> str | None:
        rtype, ts = rec.get("type"), parse_timestamp(rec.get("timestamp"))
        payload = rec.get("payload")
        if rtype is None and number == 1 and "id" in rec:  # pre-2025-09 header line
            rtype, payload = "session_meta", rec
        elif rtype in _RESPONSE_TYPES:  # pre-2025-09 lines were bare response items
            rtype, payload = "response_item", rec
        if not isinstance(payload, dict):
            return "missing_fields" if rtype else "unknown_record_type"
        if rtype == "session_meta":
            git = as_dict(payload.get("git"))
            self.cwd = str(payload.get("cwd") or self.cwd)
            headless = payload.get("source") == "exec" or payload.get("originator") == "codex_exec"
            self.ensure(ts or parse_timestamp(payload.get("timestamp")), str(payload.get("id") or ""),
                        branch=git.get("branch"), session_type="headless" if headless else "interactive")
            return None
        track = self.ensure(ts)
        if rtype == "turn_context":
            if not track.cwd and payload.get("cwd"):
                track.cwd = str(payload["cwd"])
                return None
            return "turn_context"
        if rtype == "compacted":
            self.out.stats["compactions"] += 1
            return "compacted"
        if rtype == "event_msg":
            return self.event_msg(track, payload, ts, number)
        if rtype == "response_item":
            return self.response_item(track, payload, ts, number)
        return "unknown_record_type"

    def event_msg(self, track: SessionTrack, payload: dict[str, Any], ts: float | None,
                  number: int) -> str | None:
        ptype = payload.get("type")
        if ptype == "user_message":
            text = str(payload.get("message") or "").strip()
            if not text:
                return "empty_message"
            track.user_message(ts, f"L{number}", text)
            self.tail = "ok"
            return None
        outcome = _EVENT_OUTCOMES.get(str(ptype))
        if outcome:
            self.tail = outcome
            return None
        return f"event_{ptype}" if isinstance(ptype, str) else "missing_fields"

    def response_item(self, track: SessionTrack, p: dict[str, Any], ts: float | None,
                      number: int) -> str | None:
        ptype, rid = p.get("type"), f"L{number}"
        if ptype == "message":
            role = p.get("role")
            text = _texts(p.get("content"), "input_text", "output_text", "text").strip()
            if role == "assistant":
                if not text:
                    return "empty_message"
                track.reasoning(ts, rid, text, "text", "msg")
                return None
            if role != "user" or text.startswith(_INJECTED):
                return "injected_message"
            if self.event_prompts:
                return "duplicate_user_message"
            track.user_message(ts, rid, text)
            return None
        if ptype == "reasoning":
            text = (_texts(p.get("summary"), "summary_text")
                    or _texts(p.get("content"), "reasoning_text", "text")).strip()
            if not text:
                return "encrypted_reasoning"
            track.reasoning(ts, rid, text, "thinking", "reasoning")
            return None
        if ptype in ("function_call", "custom_tool_call", "local_shell_call"):
            return self.call(track, p, ts, rid)
        if ptype in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            text, failed, dur = _parse_output(p.get("output"))
            track.tool_result(ts, rid, str(p.get("call_id") or rid), text, failed, duration_ms=dur)
            return None
        if ptype == "web_search_call":
            action = as_dict(p.get("action"))
            track.tool_call(ts, rid, str(p.get("id") or rid), "web_search_call",
                            {"query": action.get("query", "")}, tool=WEB_SEARCH)
            return None
        return "unknown_item_type"

    def call(self, track: SessionTrack, p: dict[str, Any], ts: float | None, rid: str) -> str | None:
        name = str(p.get("name") or p.get("type"))
        call_id = str(p.get("call_id") or p.get("id") or rid)
        if p.get("type") == "local_shell_call":
            action = as_dict(p.get("action"))
            args: dict[str, Any] = {"command": action.get("command", ""),
                                    "workdir": action.get("working_directory")}
        elif p.get("type") == "custom_tool_call":
            args = {"input": p.get("input", "")}
        else:
            raw = p.get("arguments")
            try:
                args = safe_json.loads(raw) if isinstance(raw, str) else dict(raw or {})
            except (ValueError, TypeError):
                args = {"raw": str(raw)}
            if not isinstance(args, dict):
                args = {"value": args}
        tool, args, workdir = _tool_args(name, args)
        track.tool_call(ts, rid, call_id, name, args, tool=tool or canonical_tool(AGENT, name),
                        workdir=workdir)
        return None

    def finish(self) -> None:
        if self.track is not None:
            if self.tail != "unknown":
                self.track.outcome = self.tail if self.tail != "ok" else self.track.outcome
            self.track.end()


def _run(source: Source, *, rollout: bool, cwd: str) -> ImportResult:
    out = ImportResult()
    label = source_label(source)
    stem = Path(source).stem if isinstance(source, (str, Path)) else "codex-session"
    lines = list(iter_lines(source, out.warnings))
    importer = _CodexImporter(out, stem, cwd, None if rollout else file_mtime(source))
    # Prompts are read from event_msg when the file has them; look ahead once.
    importer.event_prompts = rollout and any(
        ln.record is not None and isinstance(ln.record.get("payload"), dict)
        and ln.record["payload"].get("type") == "user_message" for ln in lines)
    for line in lines:
        out.records_total += 1
        if line.record is None:
            out.skipped[line.problem or "invalid_json"] += 1
            continue
        reason = (importer.rollout_record if rollout else importer.exec_record)(line.record, line.number)
        if reason:
            out.skipped[reason] += 1
        else:
            out.records_imported += 1
    importer.finish()
    return finish_warnings(out, label, "Codex rollout" if rollout else "codex exec --json")


def import_codex_exec_json(source: Source, *, cwd: str = "") -> ImportResult:
    """Import ``codex exec --json`` output (a path, or its lines).

    The stream names no working directory; pass ``cwd`` so file paths can be made
    project-relative. It has no timestamps either: events get the file's mtime.
    """
    return _run(source, rollout=False, cwd=cwd)


def import_codex_rollout(source: Source) -> ImportResult:
    """Import a Codex rollout file (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``)."""
    return _run(source, rollout=True, cwd="")
