"""New memories are anchored to their files automatically, so a later code change flags them."""

from __future__ import annotations

import subprocess
from pathlib import Path

from desktop.composition import Engram
from desktop.memory.lifecycle.anchoring import AnchorWatcher
from desktop.memory.lifecycle.staleness import check_staleness
from desktop.settings import Settings


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@e", "PATH": "/usr/bin:/bin"}).stdout.strip()


def test_memory_about_a_file_is_anchored_then_flagged_when_the_file_changes(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / "db.py").write_text("def connect():\n    return pool.get()\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    head = git(repo, "rev-parse", "HEAD")
    project = Engram(Settings(data_dir=tmp_path / "data")).open_project(repo)
    watcher = AnchorWatcher(project.db, project.info.root).start()
    try:
        about = project.memories.add("connect() must reuse the pool", type="gotcha",
                                     related_files=["app/db.py"], source="agent_explicit").result().id
        no_files = project.memories.add("we deploy on Fridays", type="decision").result().id
        assert watcher.wait_idle(10)
        memory = project.memories.get(about)
        assert set(memory.code_anchors) == {"app/db.py"} and memory.commit_sha == head
        assert project.memories.get(no_files).code_anchors == {}
        (repo / "app" / "db.py").write_text("def connect():\n    return make_new_connection()\n")
        report = check_staleness(project.db, repo)
        assert about in [c["id"] for c in report.changed]
        flagged = project.memories.get(about)
        assert flagged.needs_review and flagged.confidence < memory.confidence
    finally:
        watcher.close()
        project.close()
