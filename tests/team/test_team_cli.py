"""`engram team init | join | status | sync --now | share | leave` against a real server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.cli.main import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def machine(tmp_path: Path, name: str) -> list[str]:
    project = tmp_path / name / "checkout"
    project.mkdir(parents=True)
    return ["--project", str(project), "--data-dir", str(tmp_path / name / "data")]


def test_two_machines_share_through_the_cli(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                             admin_url: str) -> None:
    alice, bob = machine(tmp_path, "alice"), machine(tmp_path, "bob")
    assert run(capsys, "add", *alice, "--type", "gotcha", "The importer drops rows with a NUL byte")[0] == 0
    code, out, err = run(capsys, "team", "init", *alice, "--json", "--url", admin_url, "--team", "acme",
                         "--name", "alice", "--project-key", "shop")
    assert code == 0, err
    created = json.loads(out)
    assert created["queued"] == 1 and created["migrations"] == ["0001_team_core", "0002_team_row_security",
                                                          "0003_team_member_logins",
                                                          "0004_member_logins_are_not_team_role_members"]
    code, out, err = run(capsys, "team", "join", *bob, "--url", created["join_url"], "--name", "bob",
                         "--project-key", "shop")
    assert code == 0 and "Joined team 'acme' as bob" in out, err

    code, out, _ = run(capsys, "team", "sync", "--now", *alice, "--json")
    assert code == 0 and json.loads(out)["pushed"] == 1
    code, out, _ = run(capsys, "team", "sync", "--now", *bob, "--json")
    assert json.loads(out)["pulled"] == 1
    code, out, _ = run(capsys, "list", *bob, "--json")
    assert [m["content"] for m in json.loads(out)["memories"]] == ["The importer drops rows with a NUL byte"]

    code, out, _ = run(capsys, "team", "status", *bob, "--check")
    assert code == 0 and "Queued changes: 0" in out and "connected to team 'acme'" in out
    assert created["join_url"].split("@")[0] not in out  # the login never printed by status

    code, out, _ = run(capsys, "team", "share", *alice, "--types", "decision,gotcha", "--json")
    assert json.loads(out)["shared_types"] == ["decision", "gotcha"]
    code, _, err = run(capsys, "team", "share", *alice, "--types", "gossip")
    assert code == 1 and "Unknown memory types: gossip" in err

    assert run(capsys, "team", "leave", *bob)[0] == 0
    code, out, _ = run(capsys, "team", "status", *bob)
    assert "Not connected to a team" in out
    code, _, err = run(capsys, "team", "sync", "--now", *bob)
    assert code == 2 and "not connected to a team" in err


def test_unreachable_server_is_one_clear_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from tests.support.loopback import dead_url

    url = dead_url().replace("http://", "postgresql://u:p@") + "/db"
    code, _, err = run(capsys, "team", "join", *machine(tmp_path, "carol"), "--url", url)
    assert code == 2 and err.startswith("engram: The team server cannot be reached.") and "u:p" not in err
    assert len(err.strip().splitlines()) == 1
