"""Sessions a crashed run left with only a checkpoint are finalised when the project's services start;
a checkpoint saved recently (a session still running in another process) is left alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from obs_helpers import Seq

from desktop.composition import Engram
from desktop.memory.project import Project
from desktop.memory.project_services import recover_crashed_sessions, start_background
from desktop.memory.store.writer import FnOp
from desktop.settings import Settings


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Any]:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "x.py").write_text("X = 1\n", encoding="utf-8")
    proj = Engram(Settings(data_dir=tmp_path / "data")).open_project(root, remember=False)
    yield proj
    proj.close()


def _checkpoint(project: Any, sid: str, rule: str) -> None:
    obs = project.observer.live(sid, checkpoint_every=1)
    for ev in Seq(sid).user(rule).read("x.py").events:
        obs.observe(ev)


def _backdate(project: Any, sid: str) -> None:
    def write(tx: Any) -> None:
        tx.execute("UPDATE scratchpad_checkpoints SET saved_at = '2020-01-01T00:00:00.000Z' WHERE session_id = ?",
                   (sid,))
    project.db.writer.run(FnOp("backdate_checkpoint", write))


def _checkpoints(project: Any) -> list[str]:
    return [r[0] for r in project.db.reads.conn().execute("SELECT session_id FROM scratchpad_checkpoints")]


def test_recover_finalises_only_stale_checkpoints(project: Any) -> None:
    _checkpoint(project, "crashed", "Never edit `x.py` by hand: it is generated code.")
    _checkpoint(project, "running", "Never rename `x.py`: the build imports it by path.")
    _backdate(project, "crashed")
    results = recover_crashed_sessions(project)
    assert len(results) == 1 and results[0].added
    assert _checkpoints(project) == ["running"]
    texts = [r[0] for r in project.db.reads.conn().execute("SELECT content FROM memories")]
    assert any("generated code" in t for t in texts) and not any("build imports" in t for t in texts)


def test_start_background_recovers(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _checkpoint(project, "crashed", "Never edit `x.py` by hand: it is generated code.")
    _backdate(project, "crashed")
    # only the recovery matters here: the other services are stubbed out
    monkeypatch.setattr(Project, "search", property(lambda self: None))
    monkeypatch.setattr(Project, "team", property(lambda self: None))
    monkeypatch.setattr(project, "keep_graph_live", lambda: None)
    started = start_background(project, learn_from_transcripts=False)
    assert len(started.recovered) == 1 and _checkpoints(project) == []
