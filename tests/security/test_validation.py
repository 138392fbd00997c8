"""Issue 14, validation at every door: bad lines reported with number and reason, good lines kept."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from desktop.cli.main import main as cli_main
from desktop.memory.lifecycle.formats import import_path
from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database
from desktop.memory.store.errors import EngramError, ValidationError

BAD_LINES = [
    {"content": "half-life as text", "decay_half_life_days": "abc"},
    {"content": "anchors as numbers", "code_anchors": [1, 2]},
    {"content": "confidence as a word", "confidence": "high"},
    {"content": "confidence as a list", "confidence": [1]},
    {"content": "a huge line number", "chunk_start_line": 10**26},
    {"content": "NaN confidence", "confidence": float("nan")},
    {"content": "metadata as a list", "metadata": [1]},
    {"content": "files as a string", "related_files": "a.py"},
]


def _write_lines(path: Path, good: int) -> None:
    lines = [json.dumps({"content": f"good line {i}"}) for i in range(good)]
    lines += [json.dumps(b) for b in BAD_LINES]
    lines.append("[" * 100_000 + "]" * 100_000)  # 100k-deep nesting
    lines.append('{"content": ' + "[" * 5000 + "]" * 5000 + "}")
    lines += [json.dumps({"content": f"good line after {i}"}) for i in range(good)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_bad_import_lines_are_reported_and_good_lines_kept(tmp_path: Path, db: Database) -> None:
    src = tmp_path / "memories.jsonl"
    _write_lines(src, 3)
    report = import_path(MemoryService(db), src)
    assert report.added == 6
    numbers = [n for n, _ in report.rejected]
    assert numbers == list(range(4, 4 + len(BAD_LINES) + 2))
    assert all(reason and "\n" not in reason for _, reason in report.rejected)
    reasons = " ".join(r for _, r in report.rejected)
    assert "decay_half_life_days" in reasons and "code_anchors" in reasons and "deeply" in reasons
    # what was stored still searches and checks fine
    svc = MemoryService(db)
    assert len(svc.list(limit=50)) == 6


def test_restore_path_validates_the_same_way(tmp_path: Path, db: Database) -> None:
    src = tmp_path / "export.json"
    src.write_text(json.dumps({"memories": [{"content": "ok"}, *BAD_LINES]}), encoding="utf-8")
    report = import_path(MemoryService(db), src)
    assert report.added == 1 and len(report.rejected) == len(BAD_LINES)


def test_ids_out_of_range_are_a_validation_error(db: Database) -> None:
    svc = MemoryService(db)
    for bad in (2**63, 10**30, -1):
        with pytest.raises(ValidationError):
            svc.pin(bad).result(5)
        with pytest.raises(ValidationError):
            svc.forget(bad).result(5)


def test_cli_large_ints_odd_paths_and_control_characters(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    base = ["--project", str(proj), "--data-dir", str(tmp_path / "data")]
    for argv in (["list", "--limit", str(2**64)], ["list", "--offset", "99999999999999999999999"],
                 ["get", str(2**70)], ["forget", "-5"]):
        with pytest.raises(SystemExit) as exc:
            cli_main([*argv, *base])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and ("out of range" in err or "whole number" in err)
    assert cli_main(["add", "Colour \x1b[31mred\x1b[0m and a bell \x07 and \u202e reversed", *base]) == 0
    capsys.readouterr()
    assert cli_main(["list", *base]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\\x1b[31m" in out


def test_database_files_are_private_and_a_folder_in_the_way_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "engram.db"
    with Database(path) as db:
        MemoryService(db).add("one").result(5)
        for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            if p.exists():
                assert stat.S_IMODE(os.stat(p).st_mode) == 0o600, p
    folder = tmp_path / "folder.db"
    folder.mkdir()
    with pytest.raises(EngramError) as exc:
        Database(folder).open()
    assert "folder" in str(exc.value) and "\n" not in str(exc.value)


def test_export_to_a_missing_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    base = ["--project", str(proj), "--data-dir", str(tmp_path / "data")]
    for fmt in ("json", "markdown", "claude-md"):
        assert cli_main(["export", "--format", fmt, "-o", str(tmp_path / "missing" / "x.out"), *base]) == 1
        err = capsys.readouterr().err
        assert err.startswith("engram: cannot write") and err.count("\n") == 1
