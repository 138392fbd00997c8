"""Claude Code and Codex runs with fake executables first on PATH; the managed CLAUDE.md / AGENTS.md block."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from desktop.agents import managed_block as mb
from desktop.agents.errors import ExternalAgentMissing
from desktop.agents.external import ExternalAgentRun, available
from tests.agents.conftest import add

SAMPLES = Path(__file__).resolve().parents[1] / "observer" / "samples"


def fake_exe(bin_dir: Path, name: str, sample: Path, record: Path) -> None:
    script = bin_dir / name
    script.write_text(
        f"#!{sys.executable}\nimport sys, time\n"
        f"open({str(record)!r}, 'w').write('\\n'.join(sys.argv[1:]))\n"
        f"for line in open({str(sample)!r}, encoding='utf-8'):\n"
        "    sys.stdout.write(line); sys.stdout.flush(); time.sleep(0.005)\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def fake_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "bin"
    d.mkdir()
    monkeypatch.setenv("PATH", f"{d}{os.pathsep}{os.environ['PATH']}")
    return d


@pytest.mark.parametrize(("agent", "exe", "sample", "file"), [
    ("claude-code", "claude", "claude_stream.jsonl", "CLAUDE.md"),
    ("codex", "codex", "codex_exec.jsonl", "AGENTS.md"),
])
def test_external_run_streams_into_observer(project: Any, fake_bin: Path, tmp_path: Path, agent: str, exe: str,
                                            sample: str, file: str) -> None:
    record = tmp_path / f"{exe}.args"
    fake_exe(fake_bin, exe, SAMPLES / sample, record)
    assert available()[agent]
    (project.info.root / file).write_text("# My own notes\nKeep this.\n", encoding="utf-8")
    add(project, "Invoices are parsed in src/billing/invoice.py", type="requirement", pinned=True)
    live: list[Any] = []
    run = ExternalAgentRun(project, agent, "Fix the invoice parser", on_agent_event=live.append)
    result = run.run()
    assert result.error_code is None, result
    assert live and type(live[0]).__name__ == "SessionStart"
    assert any(type(e).__name__ == "ToolCall" for e in live)
    assert type(live[-1]).__name__ == "SessionEnd"
    args = record.read_text().split("\n")
    assert "mcp" in " ".join(args) and "Fix the invoice parser" in args
    text = (project.info.root / file).read_text()
    assert text.startswith("# My own notes\nKeep this.\n") and mb.BEGIN in text and "Invoices are parsed" in text
    rows = project.db.reads.conn().execute("SELECT count(*) FROM session_metrics WHERE session_id = ?",
                                           (result.session_id,)).fetchall()
    assert rows[0][0] == 1
    seen = project.db.reads.conn().execute("SELECT count(*) FROM observer_seen_events").fetchall()[0][0]
    assert seen > 0  # a later transcript import of the same session is skipped


def test_missing_agent(project: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ExternalAgentMissing):
        ExternalAgentRun(project, "codex", "x").run()


def test_managed_block_idempotent_and_user_text_untouched(tmp_path: Path) -> None:
    path = tmp_path / "CLAUDE.md"
    user = "# Rules\r\nUse tabs.  \n\n\nTrailing text without newline"
    path.write_bytes(user.encode())
    assert mb.write_block(path, "memory v1")
    first = path.read_bytes().decode()
    assert first.startswith(user) and "memory v1" in first
    assert not mb.write_block(path, "memory v1")  # idempotent: no rewrite
    assert mb.write_block(path, "memory v2")
    second = path.read_bytes().decode()
    assert "memory v1" not in second and second.count(mb.BEGIN) == 1 and second.startswith(user)
    assert mb.remove(second).rstrip("\n") == user  # only the separator Engram added goes
    # block in the middle of user text: text on both sides kept
    path.write_text(f"top\n{mb.BEGIN}\nold\n{mb.END}\nbottom\n")
    mb.write_block(path, "new")
    text = path.read_text()
    assert text.startswith("top\n") and text.endswith("\nbottom\n") and "old" not in text
