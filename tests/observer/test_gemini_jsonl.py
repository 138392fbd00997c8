"""Gemini CLI 0.61's chat recordings (``~/.gemini/tmp/<name>/chats/session-*.jsonl``): found, recognised,
replayed like the CLI's own loader, and learned from (issue 28, item 2).

The sample is a real ``gemini -p`` session of tests/hooks/test_gemini_cli_real.py (Gemini CLI 0.61 against
the local fake model, with Engram's hooks), with its folders renamed to ``/home/dev``.
"""

from __future__ import annotations

import json
from pathlib import Path

from desktop.composition import Engram
from desktop.memory.observer.discover import find_transcripts
from desktop.memory.observer.events import SessionStart, ToolCall, ToolResult, UserMessage
from desktop.memory.observer.gemini import import_gemini_jsonl
from desktop.memory.observer.sniff import detect_format, import_any
from desktop.settings import Settings

SAMPLE = Path(__file__).resolve().parent / "samples" / "gemini-0.61-session.jsonl"
PROMPT = "The refund webhook handler needs work; start by looking at the charge code."


def _recording(home: Path, project: Path, text: str | None = None, name: str = "shop") -> Path:
    """The sample as Gemini CLI 0.61 lays it out for ``project`` under ``home``."""
    folder = home / ".gemini" / "tmp" / name
    (folder / "chats").mkdir(parents=True)
    (folder / ".project_root").write_text(str(project), encoding="utf-8")
    path = folder / "chats" / "session-2026-11-25T12-33-0ffc902c.jsonl"
    body = (text if text is not None else SAMPLE.read_text(encoding="utf-8")).replace("/home/dev/shop", str(project))
    path.write_text(body, encoding="utf-8")
    return path


def test_the_real_recording_is_recognised_and_replayed(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    path = _recording(tmp_path / "home", project)
    assert detect_format(path) == "gemini-jsonl"
    result = import_any(path)
    assert result.accounted and not result.warnings
    kinds = [type(e).__name__ for e in result.events]
    assert kinds.count("ToolCall") == 1 and kinds.count("ToolResult") == 1  # the turn written twice counts once
    start = next(e for e in result.events if isinstance(e, SessionStart))
    assert start.agent == "gemini-cli" and start.cwd == str(project)  # from the folder's .project_root
    said = [e.text for e in result.events if isinstance(e, UserMessage)]
    assert said == [PROMPT]  # the CLI's session context and the hooks' context are not what the user typed
    call = next(e for e in result.events if isinstance(e, ToolCall))
    assert call.tool == "Read" and call.file_paths == ("core/payments.py",)
    output = next(e for e in result.events if isinstance(e, ToolResult)).output
    assert output.startswith("def charge(amount)") and "hook_context" not in output and "Memory" not in output


def test_rewind_and_set_messages_replay_like_the_cli(tmp_path: Path) -> None:
    meta = {"sessionId": "s-rw", "projectHash": "h", "startTime": "2026-11-25T12:00:00Z", "kind": "main"}
    lines = [meta,
             {"id": "u1", "timestamp": "2026-11-25T12:00:01Z", "type": "user", "content": [{"text": "first try"}]},
             {"id": "g1", "timestamp": "2026-11-25T12:00:02Z", "type": "gemini", "content": "draft"},
             {"$rewindTo": "u1"},  # the user rewound: u1 and everything after it are gone
             {"id": "u2", "timestamp": "2026-11-25T12:00:03Z", "type": "user", "content": [{"text": "second try"}]},
             {"id": "g2", "timestamp": "2026-11-25T12:00:04Z", "type": "gemini", "content": "v1"},
             {"id": "g2", "timestamp": "2026-11-25T12:00:04Z", "type": "gemini", "content": "final answer"},
             {"$set": {"lastUpdated": "2026-11-25T12:00:05Z"}},
             "not json at all"]
    path = tmp_path / "session-rw.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    result = import_gemini_jsonl(path, cwd=str(tmp_path))
    texts = [getattr(e, "text", "") for e in result.events]
    assert "second try" in texts and "final answer" in texts
    assert "first try" not in texts and "draft" not in texts and "v1" not in texts
    assert result.skipped["invalid_json"] == 1 and result.stats["rewinds"] == 1 and result.accounted


def test_set_messages_replaces_the_list(tmp_path: Path) -> None:
    meta = {"sessionId": "s-set", "projectHash": "h"}
    kept = {"id": "u9", "type": "user", "content": [{"text": "only this"}]}
    lines = [meta, {"id": "u1", "type": "user", "content": [{"text": "gone"}]}, {"$set": {"messages": [kept]}}]
    path = tmp_path / "session-set.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    said = [e.text for e in import_gemini_jsonl(path).events if isinstance(e, UserMessage)]
    assert said == ["only this"]


def test_discovery_finds_0_61_folders_by_project_root(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "work" / "shop"
    project.mkdir(parents=True)
    mine = _recording(home, project)
    sub = _recording(home, project / "api", name="shop-1")  # a session started in a subfolder
    _recording(home, tmp_path / "work" / "shop2", name="shop2")  # another project with a similar name
    found = {r.path: r for r in find_transcripts(project, home)}
    assert set(found) == {mine, sub}
    assert {r.format for r in found.values()} == {"gemini-jsonl"}


def test_a_recording_teaches_and_leaves_a_session_record(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    (project / "core").mkdir(parents=True)
    (project / "core" / "payments.py").write_text("def charge(amount):\n    return amount * 100\n", encoding="utf-8")
    rule = "Never pass cents to charge(): it always takes euros."
    text = SAMPLE.read_text(encoding="utf-8").replace(PROMPT, f"Look at the charge code. {rule}")
    path = _recording(tmp_path / "home", project, text)
    proj = Engram(Settings(data_dir=tmp_path / "data")).open_project(project, remember=False)
    try:
        report = proj.observer.ingest_file(path)
        assert report.status == "imported" and report.agent == "gemini-cli" and report.added >= 1
        conn = proj.db.reads.conn()
        assert conn.execute("SELECT agent FROM session_metrics").fetchall() == [("gemini-cli",)]
        learned = [r[0] for r in conn.execute("SELECT content FROM memories WHERE source = 'observer_inferred'")]
        assert any(rule in c for c in learned), learned
        assert proj.observer.ingest_file(path).status == "unchanged"  # once
    finally:
        proj.close()


def test_a_shell_command_that_failed_is_a_failure_though_its_status_says_success(tmp_path: Path) -> None:
    """Gemini CLI 0.61 records a failed run_shell_command with status "success" and "Exit Code: N" in its output."""
    def call(cid: str, command: str, out: str) -> dict[str, object]:
        return {"id": cid, "name": "run_shell_command", "args": {"command": command}, "status": "success",
                "result": [{"functionResponse": {"id": cid, "name": "run_shell_command",
                                                 "response": {"output": out}}}]}
    lines = [{"sessionId": "s-exit", "projectHash": "h"},
             {"id": "g1", "type": "gemini", "content": "", "toolCalls": [
                 call("c1", "git show HEAD --no-stat", "Output: fatal: unrecognized argument\nExit Code: 128\n"),
                 call("c2", "git show HEAD --stat", "Output: commit abc\nExit Code: 0\n")]}]
    path = tmp_path / "session-exit.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    results = [e.is_error for e in import_gemini_jsonl(path, cwd=str(tmp_path)).events if isinstance(e, ToolResult)]
    assert results == [True, False]
