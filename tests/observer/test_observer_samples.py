"""Importers for Codex, Gemini CLI and claude stream-json against hand-made samples.

The samples in ``samples/`` follow each tool's documented output shape with invented
content (one small bug-fix session on an imaginary ``/home/dev/acme-api``).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from desktop.memory.observer.claude_code import import_claude_stream_json
from desktop.memory.observer.codex import import_codex_exec_json, import_codex_rollout
from desktop.memory.observer.events import (
    Reasoning,
    SessionEnd,
    SessionStart,
    StepComplete,
    ToolCall,
    ToolResult,
    UserMessage,
)
from desktop.memory.observer.gemini import import_gemini_chat
from desktop.memory.observer.records import ImportResult
from desktop.memory.observer.sniff import detect_format, import_any

SAMPLES = Path(__file__).resolve().parent / "samples"
CWD = "/home/dev/acme-api"
EXEC = SAMPLES / "codex_exec.jsonl"
ROLLOUT = SAMPLES / "rollout-2025-10-14T09-12-03-0199e1f2-5c3a-7d10-b8a4-6f0e2d9c1b77.jsonl"
STREAM = SAMPLES / "claude_stream.jsonl"
GEMINI = SAMPLES / "session-2025-10-20T08-15-4d9a2c1e.json"


def _calls(result: ImportResult) -> list[ToolCall]:
    return [e for e in result.events if isinstance(e, ToolCall)]


def _results(result: ImportResult) -> list[ToolResult]:
    return [e for e in result.events if isinstance(e, ToolResult)]


def _end(result: ImportResult, session: str | None = None) -> SessionEnd:
    ends = [e for e in result.events if isinstance(e, SessionEnd)]
    return next(e for e in ends if session is None or e.session_id == session)


def test_codex_exec_json() -> None:
    result = import_codex_exec_json(EXEC, cwd=CWD)
    assert (result.records_total, result.records_imported) == (22, 19)
    assert result.skipped == Counter({"duplicate_item": 3})
    assert result.accounted and result.warnings == []
    assert result.sessions == ["0199c0de-7a1b-7c33-9e4f-2b6d8f1a4c55"]
    calls = _calls(result)
    assert [c.tool for c in calls] == [
        "Grep", "Read", "TodoWrite", "Bash", "Edit", "TodoWrite", "Other", "WebSearch", "Bash"]
    assert calls[1].file_paths == ("src/billing/invoice.py",)  # sed -n '30,80p' ... is a Read
    assert calls[0].args["pattern"] == "def parse_invoice"
    edit = calls[4]
    assert edit.raw_tool == "file_change"
    assert edit.file_paths == ("src/billing/invoice.py", "tests/test_rounding.py")
    assert calls[6].raw_tool == "mcp:docs/search"
    results = _results(result)
    assert len(results) == 6
    assert [r.is_error for r in results].count(True) == 1
    assert all(r.duration_ms is None for r in results)  # exec --json has no clock
    assert _end(result).outcome == "success"
    assert any(isinstance(e, Reasoning) and e.kind == "thinking" for e in result.events)


def test_codex_rollout() -> None:
    result = import_codex_rollout(ROLLOUT)
    assert (result.records_total, result.records_imported) == (28, 21)
    assert result.skipped == Counter({
        "injected_message": 1, "duplicate_user_message": 1, "turn_context": 1,
        "event_token_count": 2, "event_agent_reasoning": 1, "event_agent_message": 1})
    assert result.accounted
    start = result.events[0]
    assert isinstance(start, SessionStart)
    assert (start.cwd, start.branch, start.session_type) == (CWD, "fix/rounding", "interactive")
    prompts = [e for e in result.events if isinstance(e, UserMessage)]
    assert [p.text for p in prompts] == ["The invoice totals are off by a cent, can you fix parse_invoice?"]
    calls = _calls(result)
    assert [(c.raw_tool, c.tool) for c in calls] == [
        ("shell", "Grep"), ("shell", "Read"), ("exec_command", "Read"), ("shell", "Bash"),
        ("apply_patch", "Edit"), ("update_plan", "TodoWrite"), ("shell_command", "Bash"),
        ("web_search_call", "WebSearch")]
    # exec_command ran in <cwd>/src, so its relative path is resolved against that.
    assert calls[2].file_paths == ("src/billing/line.py",)
    assert calls[4].file_paths == ("src/billing/invoice.py", "tests/test_rounding.py")
    results = {r.call_id: r for r in _results(result)}
    assert results["call_Qx4"].is_error and results["call_Qx4"].duration_ms == 1300
    assert not results["call_Qx7"].is_error and results["call_Qx7"].duration_ms == 1400
    assert results["call_Qx3"].duration_ms == 81
    assert _end(result).outcome == "success"
    steps = [e.step for e in result.events if isinstance(e, StepComplete)]
    assert steps == sorted(steps) and len(steps) == 8


def test_claude_stream_json() -> None:
    result = import_claude_stream_json(STREAM)
    assert (result.records_total, result.records_imported) == (20, 20)
    assert result.accounted
    main = "5f0c1e9a-2b7d-4c3e-9a81-0d6e4f2b7c19"
    child = f"{main}:task-toolu_03"
    assert result.sessions == [main, child]
    starts = {e.session_id: e for e in result.events if isinstance(e, SessionStart)}
    assert starts[main].session_type == "headless"
    assert starts[child].parent_session_id == main and starts[child].cwd == CWD
    calls = _calls(result)
    assert [c.tool for c in calls if c.session_id == main] == ["Grep", "Read", "Task", "Edit", "Edit", "Bash"]
    assert [c.tool for c in calls if c.session_id == child] == ["Glob"]
    assert calls[1].file_paths == ("src/billing/invoice.py",)
    errors = [r for r in _results(result) if r.is_error]
    assert [(r.tool, r.step) for r in errors] == [("Edit", 4)]
    # Both Edit calls and the thinking between them share a step per message id.
    thinking = [e for e in result.events if isinstance(e, Reasoning) and e.kind == "thinking"]
    assert thinking[0].text.startswith("Wait,") and thinking[0].step == 5
    assert _end(result, main).outcome == "success"


def test_gemini_chat() -> None:
    result = import_gemini_chat(GEMINI, cwd=CWD)
    assert (result.records_total, result.records_imported) == (12, 10)
    assert result.skipped == Counter({"info_message": 1, "error_message": 1})
    assert result.accounted
    assert result.sessions == ["4d9a2c1e-8b3f-4e6a-a1d2-7c5e9f0b3a64"]
    calls = _calls(result)
    assert Counter(c.tool for c in calls) == Counter({
        "Bash": 3, "Read": 2, "Edit": 2, "Grep": 1, "WebSearch": 1, "WebFetch": 1, "Glob": 2,
        "Write": 1, "Other": 1})
    by_raw = {c.raw_tool: c for c in calls}
    assert by_raw["read_file"].file_paths == ("src/billing/invoice.py",)
    assert by_raw["read_many_files"].file_paths == ("src/billing/invoice.py", "src/billing/line.py")
    assert by_raw["web_fetch"].args["url"].startswith("https://docs.python.org/3/library/decimal.html")
    results = _results(result)
    assert len(results) == 14
    # one failed replace, one cancelled command, and the pytest run whose "Exit Code: 1" the CLI
    # records under status "success" (a non-zero exit is a failure, as Claude Code and Codex report it)
    assert sum(r.is_error for r in results) == 3
    prompts = [e for e in result.events if isinstance(e, UserMessage)]
    assert len(prompts) == 3
    # A user prompt closes the agent's step: every later prompt follows a StepComplete.
    kinds = [type(e).__name__ for e in result.events]
    later = [i for i, k in enumerate(kinds) if k == "UserMessage"][1:]
    assert later and all(kinds[i - 1] == "StepComplete" for i in later)
    assert _end(result).outcome == "failure"  # the chat ended on an API error


def test_sniffing_each_sample() -> None:
    assert detect_format(EXEC) == "codex-exec-json"
    assert detect_format(ROLLOUT) == "codex-rollout"
    assert detect_format(STREAM) == "claude-stream-json"
    assert detect_format(GEMINI) == "gemini-chat"
    for path in (EXEC, ROLLOUT, STREAM, GEMINI):
        result = import_any(path)
        assert result.accounted and result.records_imported > 0


def test_every_sample_is_deterministic() -> None:
    for path in (EXEC, ROLLOUT, STREAM, GEMINI):
        first, second = import_any(path), import_any(path)
        assert first.events == second.events
        keys = [e.event_key for e in first.events]
        assert len(keys) == len(set(keys)), path.name
