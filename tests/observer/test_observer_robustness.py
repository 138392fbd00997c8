"""Importers survive what real files do: partial writes, odd bytes, new versions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.memory.observer import claude_code
from desktop.memory.observer.claude_code import import_claude_code, import_claude_stream_json
from desktop.memory.observer.codex import import_codex_exec_json, import_codex_rollout
from desktop.memory.observer.events import OUTPUT_CAP, SessionEnd, ToolCall, ToolResult, UserMessage
from desktop.memory.observer.gemini import import_gemini_chat
from desktop.memory.observer.records import TranscriptImportError
from desktop.memory.observer.sniff import import_any

SAMPLES = Path(__file__).resolve().parent / "samples"
SID = "11111111-2222-4333-8444-555555555555"


def _rec(kind: str, uuid: str, content: object, ts: str = "2025-11-01T10:00:00.000Z",
         msg_id: str = "msg_1", **extra: object) -> str:
    message: dict[str, object] = {"role": kind, "content": content}
    if kind == "assistant":
        message["id"] = msg_id
    return json.dumps({"type": kind, "sessionId": SID, "uuid": uuid, "timestamp": ts, "cwd": "/p",
                       "gitBranch": "main", "isSidechain": False, "message": message, **extra})


def _session(output: str = "ok", is_error: bool = False) -> list[str]:
    return [
        _rec("user", "u1", "please read a.py"),
        _rec("assistant", "a1", [{"type": "tool_use", "id": "t1", "name": "Read",
                                  "input": {"file_path": "/p/a.py"}}]),
        _rec("user", "u2", [{"type": "tool_result", "tool_use_id": "t1", "content": output,
                             "is_error": is_error}], ts="2025-11-01T10:00:01.500Z"),
    ]


def test_truncated_last_line_is_counted_not_fatal(tmp_path: Path) -> None:
    lines = (SAMPLES / "claude_stream.jsonl").read_text().splitlines()
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])
    result = import_claude_stream_json(path)
    assert result.skipped["truncated_line"] == 1
    assert result.records_total == 20 and result.accounted
    assert any("incomplete" in w for w in result.warnings)
    assert result.events[-1].__class__ is SessionEnd


def test_invalid_line_in_the_middle() -> None:
    lines = _session()
    result = import_claude_code([lines[0], "{not json", lines[1], lines[2]])
    assert result.skipped["invalid_json"] == 1 and result.records_imported == 3 and result.accounted


def test_unknown_record_types_are_counted() -> None:
    lines = [*_session(), json.dumps({"type": "hologram", "sessionId": SID}), json.dumps([1, 2])]
    result = import_claude_code(lines)
    assert result.skipped["unknown_record_type"] == 1
    assert result.skipped["not_an_object"] == 1
    assert any("hologram" in w for w in result.warnings)
    exec_result = import_codex_exec_json([json.dumps({"type": "thread.resumed"}),
                                          json.dumps({"type": "item.completed",
                                                      "item": {"id": "i", "type": "teleport"}})])
    assert exec_result.skipped == {"unknown_record_type": 1, "unknown_item_type": 1}


def test_missing_fields() -> None:
    lines = [
        json.dumps({"type": "assistant", "sessionId": SID, "uuid": "x"}),  # no message
        json.dumps({"sessionId": SID}),  # no type
        json.dumps({"type": "user", "message": {"content": "hi"}}),  # no session id, no fallback
        _rec("user", "u9", "no timestamp").replace('"timestamp": "2025-11-01T10:00:00.000Z", ', ""),
    ]
    result = import_claude_code(lines)
    assert result.skipped["missing_fields"] == 3
    assert result.records_imported == 1 and result.accounted
    prompt = next(e for e in result.events if isinstance(e, UserMessage))
    assert prompt.timestamp == 0.0  # nothing to inherit from: epoch zero, never a crash
    rollout = import_codex_rollout([json.dumps({"timestamp": "2025-01-01T00:00:00Z", "type": "response_item"})])
    assert rollout.skipped["missing_fields"] == 1


def test_huge_tool_output_and_arguments_are_capped() -> None:
    big = "HEAD" + "x" * 5_000_000 + "THE-ERROR-AT-THE-END"
    lines = _session(output=big, is_error=True)
    lines.append(_rec("assistant", "a2", [{"type": "tool_use", "id": "t2", "name": "Write",
                                           "input": {"file_path": "/p/big.txt", "content": big}}],
                      msg_id="msg_2"))
    result = import_claude_code(lines)
    output = next(e for e in result.events if isinstance(e, ToolResult)).output
    assert len(output) < OUTPUT_CAP + 100
    assert output.startswith("HEAD") and output.endswith("THE-ERROR-AT-THE-END")
    assert "characters truncated" in output
    write = [e for e in result.events if isinstance(e, ToolCall)][-1]
    assert len(write.args["content"]) < OUTPUT_CAP + 100


def test_non_utf8_bytes_are_replaced(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    body = "\n".join(_session()).encode("utf-8").replace(b"please read", b"pr\xe9s\xff read")
    path.write_bytes(body + b"\n")
    result = import_claude_code(path)
    prompt = next(e for e in result.events if isinstance(e, UserMessage))
    assert "\ufffd" in prompt.text
    assert any("not UTF-8" in w for w in result.warnings)
    assert result.records_imported == 3


def test_vanished_file_raises_a_coded_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(TranscriptImportError) as info:
        import_claude_code(tmp_path / "gone.jsonl")
    assert info.value.code == "file_vanished"
    with pytest.raises(TranscriptImportError) as info:
        import_any(tmp_path / "gone.jsonl")
    assert info.value.code == "file_vanished"
    with pytest.raises(TranscriptImportError) as info:
        import_gemini_chat(tmp_path / "gone.json")
    assert info.value.code == "file_vanished"
    # Deleted between listing and reading (the read itself fails).
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(_session()))

    def vanish(self: Path) -> bytes:
        raise FileNotFoundError(2, "No such file or directory", str(self))

    monkeypatch.setattr(Path, "read_bytes", vanish)
    with pytest.raises(TranscriptImportError) as info:
        import_codex_rollout(path)
    assert info.value.code == "file_vanished"


def test_vanished_subagent_is_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / f"{SID}.jsonl"
    path.write_text("\n".join(_session()) + "\n")
    monkeypatch.setattr(claude_code, "subagent_files", lambda _p: [tmp_path / "agent-gone.jsonl"])
    result = import_claude_code(path)
    assert result.records_imported == 3
    assert result.warnings == ["subagent transcript agent-gone.jsonl skipped: file_vanished"]


def test_binary_garbage_is_all_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "garbage.jsonl"
    path.write_bytes(bytes(range(256)) * 40 + b"\n\x00\x01{\xff\n" + bytes(range(255, -1, -1)) * 10)
    for result in (import_claude_code(path), import_any(path), import_codex_exec_json(path)):
        assert result.records_total > 0
        assert result.records_imported == 0 and result.events == [] and result.accounted
        assert any("corrupt" in w or "not a recognised" in w for w in result.warnings)
    gem = tmp_path / "session-x.json"
    gem.write_bytes(b'{"sessionId": "s", "messages": [{"type": "us')
    result = import_gemini_chat(gem)
    assert result.skipped == {"truncated_file": 1} and result.accounted
    assert import_any(gem).skipped == {"truncated_file": 1}


def test_blank_lines_are_not_records() -> None:
    result = import_claude_code(["", *_session(), "   ", ""])
    assert result.records_total == 3


def test_identical_reimport_and_stable_keys() -> None:
    lines = _session()
    first, second = import_claude_code(lines), import_claude_code(list(lines))
    assert first.events == second.events
    keys = {e.event_key for e in first.events}
    assert f"{SID}#u2#b0" in keys  # (session, record uuid, block) identifies the result
    # Appending records leaves the keys of existing events unchanged.
    longer = import_claude_code([*lines, _rec("user", "u3", "thanks")])
    assert keys - {f"{SID}#end"} <= {e.event_key for e in longer.events}


def test_outcomes() -> None:
    interrupted = import_claude_code([*_session(), _rec(
        "user", "u3", [{"type": "text", "text": "[Request interrupted by user for tool use]"}])])
    assert interrupted.events[-1] == SessionEnd(SID, "abandoned", interrupted.events[-1].ended_at,
                                                event_key=f"{SID}#end")
    failed = import_codex_exec_json([json.dumps({"type": "thread.started", "thread_id": "t"}),
                                     json.dumps({"type": "turn.started"}),
                                     json.dumps({"type": "error", "message": "stream disconnected"}),
                                     json.dumps({"type": "turn.failed", "error": {"message": "boom"}})])
    assert failed.skipped == {"stream_error": 1}
    assert isinstance(failed.events[-1], SessionEnd) and failed.events[-1].outcome == "failure"
    assert any("boom" in w for w in failed.warnings)


def test_durations_from_timestamps() -> None:
    result = import_claude_code(_session())
    assert next(e for e in result.events if isinstance(e, ToolResult)).duration_ms == 1500
