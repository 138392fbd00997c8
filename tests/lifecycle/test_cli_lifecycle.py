"""The lifecycle commands through desktop.cli.main.main([...]) with --data-dir tmp."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from desktop.cli.main import main


@pytest.fixture
def env(tmp_path: Path) -> list[str]:
    project = tmp_path / "proj"
    project.mkdir()
    return ["--project", str(project), "--data-dir", str(tmp_path / "data")]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_prune_dry_run_and_json(capsys, env) -> None:  # type: ignore[no-untyped-def]
    run(capsys, "add", *env, "Use argon2 for passwords", "--type", "decision")
    code, out, _ = run(capsys, "prune", *env, "--dry-run", "--json")
    report = json.loads(out)
    assert code == 0 and report["dry_run"] is True and report["live_before"] == 1
    code, out, _ = run(capsys, "prune", *env)
    assert code == 0 and out.startswith("Changed: 0 decayed")
    code, out, _ = run(capsys, "prune", *env, "--json", "--soft-limit", "1")
    assert json.loads(out)["evicted"] == 0  # the only memory is recent


def test_audit_browse_filter_and_export(capsys, env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run(capsys, "add", *env, "first")
    run(capsys, "add", *env, "second")
    run(capsys, "pin", *env, "1")
    code, out, _ = run(capsys, "audit", *env, "--json", "--limit", "2")
    entries = json.loads(out)
    assert code == 0 and [e["action"] for e in entries] == ["pin", "add"]
    code, out, _ = run(capsys, "audit", *env, "--action", "pin")
    assert code == 0 and "pin" in out and out.count("\n") == 1
    code, out, _ = run(capsys, "audit", *env, "--export", str(tmp_path / "audit.csv"))
    with (tmp_path / "audit.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert code == 0 and [r["action"] for r in rows] == ["add", "add", "pin"]
    run(capsys, "audit", *env, "--export", str(tmp_path / "audit.jsonl"))
    lines = (tmp_path / "audit.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["detail"]["excerpt"] == "first"


def test_export_formats_and_import_each(capsys, env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run(capsys, "add", *env, "Use argon2 for passwords", "--type", "decision", "--pin")
    run(capsys, "add", *env, "The CI cache breaks on lockfile changes", "--type", "gotcha")
    outputs = {}
    for fmt, name in (("json", "m.json"), ("markdown", "m.md"), ("claude-md", "CLAUDE.md"),
                      ("agents-md", "AGENTS.md")):
        code, _, err = run(capsys, "export", *env, "--format", fmt, "-o", str(tmp_path / name))
        assert code == 0, err
        outputs[fmt] = tmp_path / name
    assert "engram:begin" in outputs["claude-md"].read_text()
    code, out, _ = run(capsys, "export", *env, "--format", "markdown")
    assert "## Gotchas" in out
    for fmt, path in outputs.items():
        other = tmp_path / f"other-{fmt}"
        other.mkdir()
        code, out, err = run(capsys, "import", "--project", str(other), "--data-dir", str(tmp_path / "d2"),
                             "--json", str(path))
        assert code == 0 and json.loads(out)["added"] == 2, (fmt, out, err)
    code, out, _ = run(capsys, "import", *env, "--json", "--format", "json", str(outputs["json"]))
    assert json.loads(out)["unchanged"] == 2


def test_delete_all_needs_yes_and_auto_memory_toggle(capsys, env) -> None:  # type: ignore[no-untyped-def]
    run(capsys, "add", *env, "something")
    code, _, err = run(capsys, "delete-all", *env)
    assert code == 1 and "--yes" in err
    code, out, _ = run(capsys, "delete-all", *env, "--yes", "--json")
    assert code == 0 and json.loads(out) == {"deleted": 1}
    code, out, _ = run(capsys, "auto-memory", *env, "--json")
    assert json.loads(out) == {"auto_memory": "on"}
    run(capsys, "auto-memory", *env, "off")
    code, out, _ = run(capsys, "auto-memory", *env, "--json")
    assert json.loads(out) == {"auto_memory": "off"}
    code, out, _ = run(capsys, "add", *env, "--json", "the agent still works with auto-memory off")
    assert code == 0 and json.loads(out)["created"]


def test_check_stale_outside_git(capsys, env) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, "check-stale", *env, "--json")
    assert code == 0 and json.loads(out)["git"] is False
