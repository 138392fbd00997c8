"""Finding a project's transcripts under a fake home folder."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from desktop.memory.observer.discover import claude_slugs, find_transcripts
from desktop.memory.observer.gemini import project_hash
from desktop.memory.observer.sniff import import_any

SAMPLES = Path(__file__).resolve().parent / "samples"


def _meta(cwd: str) -> str:
    return json.dumps({"timestamp": "2025-10-14T09:12:03.412Z", "type": "session_meta",
                       "payload": {"id": "s", "cwd": cwd, "originator": "codex_cli_rs"}}) + "\n"


def _touch(path: Path, text: str, mtime: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (mtime, mtime))
    return path


def test_claude_slug_rule(tmp_path: Path) -> None:
    project = tmp_path / "my.proj_x"
    project.mkdir()
    slugs = claude_slugs(project)
    assert str(project).replace("/", "-").replace(".", "-") in slugs
    assert all("/" not in s and "." not in s for s in slugs)


def test_find_transcripts_for_all_agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    project = tmp_path / "work" / "acme.api"
    project.mkdir(parents=True)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "elsewhere"))  # ignored when home is given
    slug = str(project).replace("/", "-").replace(".", "-")
    claude_dir = home / ".claude" / "projects" / slug
    session = _touch(claude_dir / "abc.jsonl", (SAMPLES / "claude_stream.jsonl").read_text(), 1000)
    _touch(claude_dir / "abc" / "subagents" / "agent-1.jsonl", "{}\n", 1001)  # imported with abc
    _touch(home / ".claude" / "projects" / "-other" / "x.jsonl", "{}\n", 1002)
    sessions = home / ".codex" / "sessions" / "2025" / "10" / "14"
    mine = _touch(sessions / "rollout-a.jsonl", _meta(str(project)), 3000)
    sub = _touch(sessions / "rollout-b.jsonl", _meta(str(project / "src")), 2000)
    _touch(sessions / "rollout-c.jsonl", _meta(str(tmp_path / "work" / "acme.api2")), 2500)
    _touch(sessions / "rollout-d.jsonl", "\x00garbage", 2600)
    chats = home / ".gemini" / "tmp" / project_hash(project) / "chats"
    chat = chats / "session-1.json"
    chat.parent.mkdir(parents=True)
    shutil.copy(SAMPLES / "session-2025-10-20T08-15-4d9a2c1e.json", chat)
    os.utime(chat, (1500, 1500))
    _touch(home / ".gemini" / "tmp" / ("0" * 64) / "chats" / "session-2.json", "{}", 1600)

    refs = find_transcripts(project, home=home)
    assert [r.path for r in refs] == [session, chat, sub, mine]  # oldest first
    assert [(r.agent, r.format) for r in refs] == [
        ("claude-code", "claude-code-jsonl"), ("gemini-cli", "gemini-chat"),
        ("codex", "codex-rollout"), ("codex", "codex-rollout")]
    assert refs[0].size == session.stat().st_size and refs[0].mtime == 1000
    for ref in refs:
        assert import_any(ref.path).accounted


def test_nothing_found_is_an_empty_list(tmp_path: Path) -> None:
    assert find_transcripts(tmp_path / "nowhere", home=tmp_path / "empty-home") == []


def test_a_folder_given_to_ingest_is_read_oldest_session_first(tmp_path: Path) -> None:
    """Session ids are random: by file name, a later session would be learned first, and what it
    reinforces or retires would be undone by the earlier one imported after it."""
    from desktop.memory.observer.discover import expand_transcript_paths, started_at

    def transcript(name: str, when: str) -> Path:
        path = tmp_path / "t" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps({"type": "user", "timestamp": when, "message": {"content": "hi"}}) + "\n",
                        encoding="utf-8")
        return path

    late = transcript("0aaa.jsonl", "2026-02-11T15:31:21.340Z")
    early = transcript("ffff.jsonl", "2026-01-03T09:00:00.000Z")
    undated = tmp_path / "t" / "session-x.json"
    undated.write_text("{}", encoding="utf-8")
    assert started_at(early) < started_at(late) and started_at(undated)  # no timestamp: its file time
    assert expand_transcript_paths([tmp_path / "t"])[:2] == [early, late]
    assert expand_transcript_paths([late, early]) == [late, early]  # files named one by one: as given
