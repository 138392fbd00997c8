"""Live indexing through the watcher, the GraphService facade and the `engram index|impact` commands."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from store_helpers import CHAIN, by_depth, fresh_edges, write

from desktop.cli.main import main
from desktop.memory.graph.service import GraphService
from desktop.memory.store.database import Database


def _wait_for(pred, timeout: float = 10.0) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return False


def test_watcher_edit_create_rename_delete(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write(root, CHAIN)
    db = Database(tmp_path / "g.sqlite").open()
    svc = GraphService(db, root, chunks=False, debounce=0.2)
    updates: list[float] = []
    done = threading.Event()
    svc.subscribe(lambda batch, report, secs: (updates.append(secs), done.set()))
    before = set(threading.enumerate())
    try:
        svc.start()
        assert svc.wait_idle(30)
        assert by_depth(svc.analyze_impact("d.py"))[3] == (["a.py"], ["a.py:fa"])
        # edit: b no longer calls c
        done.clear()
        write(root, {"b.py": "def fb():\n    return 7\n"})
        assert done.wait(10)
        assert _wait_for(lambda: by_depth(svc.analyze_impact("d.py")) == {1: (["c.py"], ["c.py:fc"])})
        assert not {e for e in fresh_edges(db, "b.py") if e[2] == "imports"}
        # new folder with a file that imports d
        done.clear()
        write(root, {"pkg/e.py": "from d import fd\n\n\ndef fe():\n    return fd()\n"})
        assert _wait_for(lambda: "pkg/e.py" in by_depth(svc.analyze_impact("d.py")).get(1, ([], []))[0])
        # rename: old path disappears, new path is indexed
        (root / "pkg" / "e.py").rename(root / "pkg" / "f.py")
        assert _wait_for(lambda: by_depth(svc.analyze_impact("d.py")).get(1, ([], []))[0] == ["c.py", "pkg/f.py"])
        # delete
        (root / "c.py").unlink()
        assert _wait_for(lambda: svc.analyze_impact("c.py").get("error") == "graph_target_not_found")
        assert updates and svc.stats()["stale_edges"] == 0
    finally:
        svc.close()
        db.close()
    assert _wait_for(lambda: not [t for t in threading.enumerate() if t not in before and t.is_alive()], 5)


def test_analyze_impact_is_json_ready(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write(root, CHAIN)
    db = Database(tmp_path / "g.sqlite").open()
    try:
        svc = GraphService(db, root, chunks=False)
        svc.index()
        result = svc.analyze_impact("b.py:fb", 3)
        json.dumps(result)
        assert result["total_files"] == 1 and "a.py" in result["summary"]
        assert svc.analyze_impact("zzz.py")["error"] == "graph_target_not_found"
        mods = svc.modules()
        assert sum(m["file_count"] for m in mods["modules"]) == 4
    finally:
        db.close()


def test_cli_index_and_impact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "p"
    write(root, CHAIN)
    (root / "bin.py").write_bytes(b"\x00\x01")
    base = ["--project", str(root), "--data-dir", str(tmp_path / "data")]
    assert main(["index", *base, "--json", "--no-chunks"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["indexed"] == 4 and out["skipped"] == {"binary": 1} and out["nodes"] > 0
    assert main(["index", *base, "--no-chunks", "-q"]) == 0
    assert "0 files" in capsys.readouterr().out  # nothing changed
    assert main(["impact", *base, "--json", "d.py"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [lv["files"] for lv in data["levels"]] == [["c.py"], ["b.py"], ["a.py"]]
    assert main(["impact", *base, "--depth", "1", "d.py:fd"]) == 0
    text = capsys.readouterr().out
    assert "c.py:fc" in text and "a.py" not in text
    assert main(["impact", *base, "missing.py"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("engram: ") and err.count("\n") == 1
    assert main(["deps", *base, "--json", "a.py"]) == 0
    assert json.loads(capsys.readouterr().out)["levels"][0]["files"] == ["b.py"]
