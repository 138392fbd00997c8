"""The code index is not memories: list, counts, doctor and search keep it apart, and find it when asked.

A real project is indexed (the graph fixtures: Python, TypeScript, Go, ...) so its code
chunks outnumber the three memories taught, as on any real repository; every door
must still show the three.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from desktop.cli.main import main

FIXTURE = Path(__file__).resolve().parents[1] / "graph" / "fixtures"
TAUGHT = ["To run the tests: `make test` (it starts the fake payment gateway first)",
          "Never call the payment gateway from tests; use the FakeGateway fixture",
          "Money is stored as integer cents everywhere"]


@pytest.fixture
def env(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    project = tmp_path / "shop"
    shutil.copytree(FIXTURE, project)
    args = ["--project", str(project), "--data-dir", str(tmp_path / "data")]
    assert main(["index", *args, "--quiet"]) == 0
    for text in TAUGHT:
        assert main(["add", *args, text]) == 0
    capsys.readouterr()
    return args


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:  # type: ignore[type-arg]
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_list_and_doctor_count_memories_not_code(env: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    listing = cli_json(capsys, "list", *env)
    assert listing["total"] == 3 and {m["content"] for m in listing["memories"]} == set(TAUGHT)
    code = cli_json(capsys, "list", *env, "--type", "code", "--limit", "5")
    assert code["total"] > 20 and all(m["type"] == "code" for m in code["memories"])  # there when asked
    doctor = json.loads(_run_doctor(env, capsys))
    assert doctor["memories"] == 3 and doctor["code_chunks"] == code["total"] and doctor["needs_review"] == 0
    assert main(["list", *env]) == 0
    assert capsys.readouterr().out.rstrip().endswith("(3 of 3 memories)")


def _run_doctor(env: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    main(["doctor", *env, "--json"])  # exit 1 only when the installation is incomplete
    return capsys.readouterr().out


def test_search_answers_with_the_taught_recipe(env: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    found = cli_json(capsys, "search", *env, "how do we run the tests?", "--limit", "5")
    types = [r["type"] for r in found["results"]]
    assert found["results"][0]["content"] == TAUGHT[0]
    assert "code" not in types
    with_code = cli_json(capsys, "search", *env, "cart total discount", "--code", "--limit", "10")
    assert any(r["type"] == "code" for r in with_code["results"])  # searchable when asked
