"""What an index run says to a person: failures, skips and progress numbers that mean what they count.

The CLI door runs `engram index` (as an unprivileged user where a folder must be unreadable:
root reads everything); the app door's words are tested in tests/ui/test_onboarding.py.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from desktop.cli.main import main
from desktop.memory.graph.report import IndexProgress, IndexReport, index_outcome, overall_fraction

FIXTURE = Path(__file__).resolve().parent / "fixtures"


def index_json(capsys: pytest.CaptureFixture[str], folder: Path, data: Path) -> tuple[int, dict]:  # type: ignore[type-arg]
    code = main(["index", "--project", str(folder), "--data-dir", str(data), "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


def test_folder_of_photos_and_files_too_large_are_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    photos = tmp_path / "photos"
    photos.mkdir()
    for n in range(4):
        (photos / f"IMG_{n}.jpg").write_bytes(b"\xff\xd8\xff\xe0" + bytes(100))
    code, data = index_json(capsys, photos, tmp_path / "data")
    assert code == 0 and data["outcome"] == "no_source_files" and data["unsupported"] == 4
    assert main(["index", "--project", str(photos), "--data-dir", str(tmp_path / "data")]) == 0
    assert capsys.readouterr().out.startswith("No source code here: 4 file(s)")
    project = tmp_path / "shop"
    shutil.copytree(FIXTURE, project)
    (project / "generated.py").write_text("x = 1\n" * 200_000, encoding="utf-8")  # 1.2 MB
    assert main(["index", "--project", str(project), "--data-dir", str(tmp_path / "data")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 file(s) skipped as too large (over 1 MB).")
    report = IndexReport(indexed=3, skipped={"too large": 1}, skipped_files=[("generated.py", "too large")])
    assert index_outcome(report).too_large == 1 and index_outcome(report).code == "indexed"


def unreadable_folder() -> Path:
    """A real folder this process cannot list (tests run as root, who reads every ordinary folder)."""
    path = Path("/proc/1/map_files")
    try:
        list(os.scandir(path))  # opening succeeds; reading the entries is refused
    except PermissionError:
        return path
    pytest.skip("no folder here is unreadable for this user")


def test_unreadable_folder_fails_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["index", "--project", str(unreadable_folder()), "--data-dir", str(tmp_path / "data"), "--quiet"])
    out, err = capsys.readouterr()
    assert code != 0 and not out
    assert err.count("\n") == 1 and "cannot read this folder (Permission denied)" in err and "Traceback" not in err


def test_unreadable_root_outcome_and_progress_fraction() -> None:
    report = IndexReport(skipped={"unreadable": 1}, skipped_files=[("/", "unreadable: Permission denied")])
    outcome = index_outcome(report)
    assert outcome.code == "unreadable_folder" and outcome.reason == "Permission denied"
    # One bar through every phase: it never goes back, and the closure's unknown total never reads "of 0".
    steps = [IndexProgress("scan", 0, 0), IndexProgress("parse", 10, 100), IndexProgress("parse", 100, 100),
             IndexProgress("resolve", 50, 100), IndexProgress("modules", 0, 100), IndexProgress("chunks", 0, 100),
             IndexProgress("closure", 201_617, 0)]
    fractions = [overall_fraction(p) for p in steps]
    assert fractions == sorted(fractions) and fractions[0] >= 0.0 and fractions[-1] < 1.0


def test_reopened_project_reports_its_modules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "shop"
    shutil.copytree(FIXTURE, project)
    _code, first = index_json(capsys, project, tmp_path / "data")
    _code, again = index_json(capsys, project, tmp_path / "data")
    assert first["modules"] > 0 and again["indexed"] == 0 and again["unchanged"] > 0
    assert again["modules"] == first["modules"]  # was 0: "580 files in 0 modules"
