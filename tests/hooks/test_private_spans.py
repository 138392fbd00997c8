"""Text between ``<private>`` and ``</private>`` never reaches Engram's storage (issue 28, item 8).

Whatever door the text comes through (a prompt hook, a file an agent reads, a transcript, the indexer),
the bytes of every file Engram wrote (database, WAL, logs) never hold it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from desktop.composition import Engram
from desktop.memory.privacy import redact
from desktop.settings import Settings

PRIVATE = "my-salary-is-93211-dollars"  # one word, so it cannot be cut in two by wrapping
SECRET_LINE = f"Deploy to prod on Fridays. <private>{PRIVATE} and the vault code</private> Then tag the release."


def _stored_bytes(data_dir: Path) -> bytes:
    """Every byte Engram wrote under its data folder."""
    return b"".join(p.read_bytes() for p in sorted(data_dir.rglob("*")) if p.is_file())


def test_spans_are_redacted_even_when_a_limit_cut_them() -> None:
    from desktop.memory.privacy.secrets import private_spans

    assert redact(SECRET_LINE)[0] == "Deploy to prod on Fridays. [REDACTED:private] Then tag the release."
    assert redact(f"head <PRIVATE>{PRIVATE}")[0] == "head [REDACTED:private]"  # never closed: to the end
    assert redact(f"{PRIVATE}</private> tail")[0] == "[REDACTED:private] tail"  # opened before the cut
    assert private_spans("no tags at all, a <b> tag and a private key word") == []


def test_a_prompt_and_a_read_file_with_private_spans_leave_no_trace(hook_env: dict[str, str], payments_dir: Path,
                                                                  data_dir: Path, memories: dict[str, int]) -> None:
    from tests.hooks.conftest import run_hook

    notes = payments_dir / "core" / "notes.py"
    notes.write_text(f"# {SECRET_LINE}\nRETRIES = 3\n", encoding="utf-8")
    base = {"session_id": "s-private", "cwd": str(payments_dir), "transcript_path": ""}
    prompt = f"The refund webhook handler: {SECRET_LINE} Never log card numbers."
    for event, payload in (
            ("session-start", {**base, "hook_event_name": "SessionStart", "source": "startup"}),
            ("prompt", {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt}),
            ("after-tool", {**base, "hook_event_name": "PostToolUse", "tool_name": "Read",
                            "tool_input": {"file_path": str(notes)},
                            "tool_response": {"file": {"content": notes.read_text(encoding="utf-8")}}}),
            ("stop", {**base, "hook_event_name": "Stop", "last_assistant_message": f"Noted. {SECRET_LINE}"})):
        done = run_hook(hook_env, event, payload)
        assert done.returncode == 0, done.stderr
    assert PRIVATE.encode() not in _stored_bytes(data_dir)
    assert b"Deploy to prod on Fridays" in _stored_bytes(data_dir)  # the rest of the text was kept


def test_a_transcript_and_the_indexer_keep_nothing_private(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "core").mkdir(parents=True)
    (root / "core" / "ops.py").write_text(f'"""{SECRET_LINE}"""\n\ndef deploy():\n    return 1\n',
                                          encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    transcript = tmp_path / "session.jsonl"
    said = f"Never deploy on Fridays. {SECRET_LINE}"
    records = [
        {"type": "user", "sessionId": "t-1", "uuid": "u1", "cwd": str(root), "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "user", "content": said}},
        {"type": "assistant", "sessionId": "t-1", "uuid": "a1", "cwd": str(root),
         "timestamp": "2026-01-01T00:00:01Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": f"Understood: {SECRET_LINE}"}]}},
    ]
    transcript.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    data_dir = tmp_path / "data"
    project = Engram(Settings(data_dir=data_dir)).open_project(root, remember=False)
    try:
        project.graph.index()
        report = project.observer.ingest_file(transcript)
        assert report.status == "imported"
        prompts = [r[0] for r in project.db.reads.conn().execute("SELECT metrics FROM session_metrics")]
        assert any("Never deploy on Fridays" in p for p in prompts), prompts  # the session and its prompt are kept
    finally:
        project.close()
    assert PRIVATE.encode() not in _stored_bytes(data_dir)
