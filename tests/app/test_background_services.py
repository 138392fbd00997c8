"""An opened project starts its background services: conflicts, search, learning from installed agents."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from desktop.composition import Engram
from desktop.memory.observer.discover import claude_slugs
from desktop.memory.project_services import idle_maintenance, start_background
from desktop.memory.store.rows import MemoryQuery
from desktop.settings import Settings

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "transcripts" / "claude-code"


@pytest.fixture
def project(tmp_path: Path):  # type: ignore[no-untyped-def]
    folder = tmp_path / "proj"
    folder.mkdir()
    opened = Engram(Settings(data_dir=tmp_path / "data")).open_project(folder)
    yield opened
    opened.close()


def test_past_claude_sessions_are_learned_once_and_new_ones_watched(project, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    source = SHARED / "synapse-070001ad.jsonl"
    if not source.exists():
        pytest.skip("shared transcripts not available")
    home = tmp_path / "home"
    slug_dir = home / ".claude" / "projects" / claude_slugs(project.info.root)[0]
    slug_dir.mkdir(parents=True)
    shutil.copy(source, slug_dir / source.name)

    started = start_background(project, home=home)
    assert {"upkeep", "search"} <= set(started.started) and started.watching
    reports = started.imported
    assert [r.status for r in reports] == ["imported"] and reports[0].events > 0
    sessions = project.db.reads.conn().execute("SELECT count(*) FROM session_metrics").fetchall()[0][0]
    assert sessions >= 1
    # Opening the project again imports nothing twice.
    watcher = project.part("transcript_watcher")
    again = start_background(project, home=home)
    assert [r.status for r in again.imported] == ["unchanged"]
    assert watcher is not None and project.part("transcript_watcher") is watcher


def test_conflict_detection_runs_on_write_once_services_started(project, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    start_background(project, learn_from_transcripts=False)
    a = project.memories.add("Always use the async client in api/db.py", type="decision",
                             related_files=["api/db.py"]).result().id
    b = project.memories.add("Never use the async client in api/db.py", type="decision",
                             related_files=["api/db.py"]).result().id
    deadline = time.monotonic() + 10
    linked = False
    while time.monotonic() < deadline and not linked:
        rel = project.memories.get(b).relations + project.memories.get(a).relations
        linked = any(r.get("type") == "contradicts" or r.get("relation") == "contradicts"
                     or "contradict" in str(r) for r in rel)
        time.sleep(0.1)
    assert linked


def test_idle_maintenance_prunes_and_checks_staleness(project) -> None:  # type: ignore[no-untyped-def]
    project.memories.add("a fact to keep", type="decision").result()
    out = idle_maintenance(project)
    assert out.pruned is not None and out.staleness is not None
    assert project.memories.count(MemoryQuery()) == 1
