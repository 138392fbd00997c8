"""The Claude Code importer against real transcripts from ../shared/data.

Expected numbers were counted independently (a plain json.loads loop over the
files, not the importer); the test also recounts them the same way so a change in
the data set shows up as a clear mismatch rather than a mystery.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from desktop.memory.observer.claude_code import import_claude_code
from desktop.memory.observer.events import SessionEnd, SessionStart, ToolCall, ToolResult, UserMessage
from desktop.memory.observer.sniff import import_any

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "transcripts" / "claude-code"
SYNAPSE = DATA / "synapse-070001ad.jsonl"
PROJECT = DATA / "gemini-cli-project"
MAIN_ID = "faaa905a-e582-47dc-a365-4489fc625ca1"
MAIN = PROJECT / f"{MAIN_ID}.jsonl"

pytestmark = pytest.mark.skipif(
    not SYNAPSE.is_file() or not MAIN.is_file(),
    reason="real transcripts not found at ../shared/data/transcripts/claude-code (development data set)")


def _raw_counts(files: list[Path]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for path in files:
        for raw in path.read_bytes().splitlines():
            if not raw.strip():
                continue
            counts["records"] += 1
            rec = json.loads(raw)
            content = (rec.get("message") or {}).get("content") if isinstance(rec.get("message"), dict) else None
            for block in content if isinstance(content, list) else []:
                counts[block.get("type")] += 1
                counts["errors"] += block.get("type") == "tool_result" and block.get("is_error") is True
    return counts


def test_synapse_session_counts() -> None:
    result = import_claude_code(SYNAPSE)
    raw = _raw_counts([SYNAPSE])
    assert (raw["records"], raw["tool_use"], raw["tool_result"], raw["errors"]) == (871, 118, 118, 5)
    assert result.records_total == 871
    assert result.accounted
    assert result.records_imported == 344
    assert result.skipped == Counter({
        "progress": 475, "file_history_snapshot": 22, "queue_operation": 12, "system_turn_duration": 8,
        "injected_message": 6, "last_prompt": 2, "compact_boundary": 1, "compact_summary": 1})
    calls = [e for e in result.events if isinstance(e, ToolCall)]
    results = [e for e in result.events if isinstance(e, ToolResult)]
    assert len(calls) == 118 and len(results) == 118
    assert sum(r.is_error for r in results) == 5
    assert result.sessions == ["070001ad-5e63-479d-94f5-095a27a38e2f"]
    assert result.stats["compactions"] == 1
    prompts = [e for e in result.events if isinstance(e, UserMessage)]
    assert len(prompts) == 16
    assert not any(p.text.startswith("This session is being continued") for p in prompts)
    assert not any(p.text.startswith("<task-notification>") for p in prompts)
    # Every result found its call, so every one has a tool name and a duration.
    assert all(r.tool != "Other" or r.call_id for r in results)
    assert all(r.duration_ms is not None and r.duration_ms >= 0 for r in results)
    assert result.warnings == []


def test_project_with_subagents_counts() -> None:
    subagents = sorted((PROJECT / MAIN_ID / "subagents").glob("agent-*.jsonl"))
    raw = _raw_counts([MAIN, *subagents])
    assert (raw["records"], raw["tool_use"], raw["tool_result"], raw["errors"]) == (2452, 523, 523, 35)
    result = import_claude_code(MAIN)
    assert result.records_total == 2452
    # (one message the user typed while the agent worked, handed to the running turn, is read: issue 26)
    assert result.records_imported == 1472
    assert result.accounted
    assert result.stats["subagent_files"] == 7
    assert result.stats["compactions"] == 2
    assert result.skipped["compact_summary"] == 2
    calls = [e for e in result.events if isinstance(e, ToolCall)]
    results = [e for e in result.events if isinstance(e, ToolResult)]
    assert len(calls) == 523 and len(results) == 523
    assert sum(r.is_error for r in results) == 35
    # The compaction agent's transcript starts with a result whose call it never saw.
    assert result.stats["orphan_results"] == 1
    assert len(result.sessions) == 8
    starts = {e.session_id: e for e in result.events if isinstance(e, SessionStart)}
    assert starts[MAIN_ID].parent_session_id is None
    assert starts[MAIN_ID].cwd == "/home/box/git/github/gemini-cli"
    assert starts[MAIN_ID].branch == "main"
    children = [s for s in starts.values() if s.parent_session_id == MAIN_ID]
    assert len(children) == 7
    assert Counter(c.session_type for c in children) == Counter({"subagent": 5, "compaction": 2})
    assert f"{MAIN_ID}:agent-a450f40" in starts
    assert sum(isinstance(e, SessionEnd) for e in result.events) == 8
    # Paths inside the project are relative; outside (the user's ~/.config) absolute.
    paths = {p for c in calls for p in c.file_paths}
    assert any(not p.startswith("/") for p in paths)
    assert any(p.startswith("/home/box/.config") for p in paths)


def test_snapshot_only_sessions_import_cleanly() -> None:
    files = [p for p in sorted(PROJECT.glob("*.jsonl")) if p != MAIN]
    assert len(files) == 14
    total = 0
    for path in files:
        result = import_claude_code(path)
        assert result.events == [] and result.sessions == []
        assert result.accounted and result.warnings == []
        assert set(result.skipped) == {"file_history_snapshot"}
        total += result.records_total
    assert total == 136


def test_reimport_is_identical_and_keys_unique() -> None:
    first = import_claude_code(MAIN)
    second = import_claude_code(MAIN)
    assert first.events == second.events
    keys = [e.event_key for e in first.events]
    assert len(keys) == len(set(keys))


def test_import_any_detects_claude_code() -> None:
    assert import_any(SYNAPSE).records_total == 871


def test_every_record_of_the_real_transcripts_is_read() -> None:
    """All records of all shared transcripts (their import time is measured by bench/bench_observer.py)."""
    total = sum(import_claude_code(p).records_total for p in [SYNAPSE, *sorted(PROJECT.glob("*.jsonl"))])
    assert total == 3459
