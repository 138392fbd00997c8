"""The `engram` command for memories: add, list, get, pin, forget, import, export."""

from __future__ import annotations

import json
import subprocess
import sys
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


def test_add_list_get_pin_forget(capsys, env) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, "add", *env, "--json", "--type", "gotcha", "--file", "src/db.py",
                       "Never call session.commit() inside a request handler")
    assert code == 0
    added = json.loads(out)
    assert added["type"] == "gotcha" and added["related_files"] == ["src/db.py"] and added["created"]
    mid = added["id"]
    code, out, _ = run(capsys, "list", *env, "--json")
    listing = json.loads(out)
    assert listing["total"] == 1 and listing["memories"][0]["id"] == mid
    assert run(capsys, "pin", *env, str(mid))[0] == 0
    code, out, _ = run(capsys, "get", *env, "--json", str(mid))
    record = json.loads(out)
    assert record["pinned"] is True and [h["action"] for h in record["history"]] == ["add", "pin"]
    assert run(capsys, "forget", *env, str(mid))[0] == 0
    code, out, _ = run(capsys, "list", *env, "--json")
    assert json.loads(out)["total"] == 0
    code, out, _ = run(capsys, "list", *env, "--json", "--status", "deprecated")
    assert json.loads(out)["total"] == 1


def test_import_jsonl_echoes_external_ids_and_is_idempotent(capsys, env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in [
        {"content": "Use pnpm, not npm", "type": "preference", "external_id": "a-1", "tags": ["build"]},
        {"content": "The API rate limit is 100 rps", "type": "requirement", "external_id": 42},
        {"content": "Custom field kept", "external_id": "c-3", "my_field": {"x": 1}},
    ]) + "\n", encoding="utf-8")
    code, out, _ = run(capsys, "import", *env, "--json", str(src))
    report = json.loads(out)
    assert code == 0 and report["added"] == 3 and len(report["ids"]) == 3
    code, out, _ = run(capsys, "import", *env, "--json", str(src))
    again = json.loads(out)
    assert again["added"] == 0 and again["unchanged"] == 3 and again["ids"] == report["ids"]
    code, out, _ = run(capsys, "list", *env, "--json")
    by_ext = {m["external_id"]: m for m in json.loads(out)["memories"]}
    assert set(by_ext) == {"a-1", "42", "c-3"}
    code, out, _ = run(capsys, "get", *env, "--json", str(by_ext["c-3"]["id"]))
    assert json.loads(out)["metadata"]["imported_fields"] == {"my_field": {"x": 1}}


def test_import_keeps_good_lines_and_fails_with_one_line_reason(capsys, env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "bad.jsonl"
    src.write_bytes(b'{"content": "good one"}\n{not json\n\xff\xfe broken utf8\n{"type": "gotcha"}\n'
                    b'{"content": "good two", "type": "gotcha"}\n')
    code, out, err = run(capsys, "import", *env, str(src))
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("engram: 3 line(s) rejected; line 2")
    code, out, _ = run(capsys, "list", *env, "--json")
    assert json.loads(out)["total"] == 2


def test_export_is_complete_json(capsys, env) -> None:  # type: ignore[no-untyped-def]
    run(capsys, "add", *env, "first memory")
    run(capsys, "add", *env, "second memory", "--type", "decision")
    run(capsys, "forget", *env, "1")
    code, out, _ = run(capsys, "export", *env)
    assert code == 0
    doc = json.loads(out)
    assert doc["format"] == "engram-memories"
    assert {m["content"] for m in doc["memories"]} == {"first memory", "second memory"}
    assert {m["status"] for m in doc["memories"]} == {"deprecated", "active"}


def test_failures_exit_non_zero_with_one_line(capsys, env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run(capsys, "import", *env, str(tmp_path / "missing.jsonl"))
    assert code == 1 and err.strip().startswith("engram: no such file")
    code, _, err = run(capsys, "forget", *env, "999")
    assert code == 2 and "does not exist" in err and err.count("\n") == 1
    code, _, err = run(capsys, "add", *env, "--type", "gotcha", "x" * 25_000)
    assert code == 2 and "limited" in err


def test_secret_taught_from_cli_is_refused(capsys, env) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run(capsys, "add", *env, "AWS key AKIAZ7QWERTYUIOPASDF is for prod")
    assert code == 2 and "secret" in err


def test_installed_engram_command_runs(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("engram")
    if not exe.exists():
        pytest.skip("engram entry point not installed in this environment")
    proc = subprocess.run([str(exe), "add", "--project", str(tmp_path), "--data-dir", str(tmp_path / "d"),
                           "--json", "hello from the entry point"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["content"] == "hello from the entry point"


def test_doctor_reports_a_damaged_database_and_moves_it_aside_only_when_asked(capsys, env) -> None:  # type: ignore[no-untyped-def]
    assert run(capsys, "add", *env, "kept before the damage")[0] == 0
    code, out, _ = run(capsys, "doctor", *env, "--json")
    assert code == 0 and json.loads(out)["memories"] == 1
    data_dir = Path(env[env.index("--data-dir") + 1])
    db = next(data_dir.glob("projects/*/engram.db"))
    damaged = b"not a database" * 100
    db.write_bytes(damaged)
    code, _, err = run(capsys, "doctor", *env)
    assert code == 2 and "--move-aside" in err and err.count("\n") == 1
    assert db.read_bytes() == damaged  # never touched unasked
    code, out, _ = run(capsys, "doctor", *env, "--move-aside", "--json")
    report = json.loads(out)
    assert code == 0 and Path(report["moved_aside"]).read_bytes() == damaged
    assert run(capsys, "list", *env)[0] == 0
