"""Rule import on real rule files of public repositories (rule_fixtures/SOURCES.md): whole rules.

The same rules reach the first-run dialog (scan_rule_files) and `engram import`; each
assertion below failed on the line-by-line cutter this replaced (wrapped bullets were
cut in two, the include line and the file's sentence about itself became rules).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from desktop.cli.main import main
from desktop.memory.lifecycle.rule_files import parse_rule_file, rule_type, scan_rule_files

FIXTURES = Path(__file__).resolve().parent / "rule_fixtures"
REAL_FILES = ["mcp-python-sdk/AGENTS.md", "laravel-love/CLAUDE.md", "laravel-love/AGENTS.md",
              "browser-use/.cursorrules", "gemini-cli/GEMINI.md"]


def rules_of(rel: str) -> list[str]:
    return [r.text for r in parse_rule_file((FIXTURES / rel).read_text(encoding="utf-8"))]


@pytest.mark.parametrize("rel", REAL_FILES)
def test_no_rule_is_a_fragment_an_include_or_code(rel: str) -> None:
    source = (FIXTURES / rel).read_text(encoding="utf-8")
    wrapped_tails = {ln.strip() for ln in source.splitlines() if ln.startswith("  ") and ln.strip()
                     and not ln.strip().startswith(("-", "*", "```", "#"))}
    for text in rules_of(rel):
        first = text.splitlines()[0]
        assert not first.startswith("@") and "```" not in text and "<!--" not in text, text
        assert first not in wrapped_tails, f"a wrapped continuation line became a rule: {first!r}"
        assert not first.startswith(("This file", "# ")), text


def test_wrapped_bullets_are_joined_and_nested_ones_stay_with_their_parent() -> None:
    rules = rules_of("mcp-python-sdk/AGENTS.md")
    assert ("`main` is currently the V2 rework. Breaking changes are expected here — when removing or replacing "
            "an API, delete it outright and document the change in `docs/migration.md`. Do not add `@deprecated` "
            "shims or backward-compat layers on `main`.") in rules
    waits = next(r for r in rules if r.startswith("Avoid `anyio.sleep()`"))
    assert waits.count("\n- ") == 3 and "Use `anyio.Event`" in waits  # three sub-bullets, one rule
    # A list introduced by "Include:" belongs to that sentence.
    assert ("When making breaking changes, document them in `docs/migration.md`. Include:\n- What changed\n"
            "- Why it changed\n- How to migrate existing code") in rules
    # A shell block inside a bullet completes it; a code block of its own is not a rule.
    targeted = next(r for r in rules if r.startswith("Targeted check while iterating"))
    assert "`uv run --frozen coverage erase`" in targeted
    assert not any("git diff origin/main" in r for r in rules)
    assert len(rules) == 37


def test_gemini_two_level_wrapped_bullets() -> None:
    rules = rules_of("gemini-cli/GEMINI.md")
    tech = next(r for r in rules if r.startswith("**Main Technologies:**"))
    assert "- **UI Framework:** React (using [Ink](https://github.com/vadimdemedes/ink) for CLI rendering)" in tech
    assert "**Build All:** `npm run build:all` (Builds packages, sandbox, and VS Code companion)" in rules
    assert len(rules) == 11


def test_include_line_and_self_description_are_skipped_and_commented_commands_kept() -> None:
    claude = rules_of("laravel-love/CLAUDE.md")
    assert len(claude) == 1 and claude[0].startswith("**CRITICAL**")
    agents = rules_of("laravel-love/AGENTS.md")
    assert "Run all tests (uses in-memory SQLite): `docker compose exec php85 composer test`" in agents
    entities = next(r for r in agents if r.startswith("The package models a **reaction system**"))
    assert entities.count("\n- ") == 4


def test_headings_give_context_and_a_type_hint() -> None:
    rules = parse_rule_file((FIXTURES / "browser-use/.cursorrules").read_text(encoding="utf-8"))
    assert len(rules) == 16 and all(r.section for r in rules)
    never = next(r for r in rules if r.text.startswith("DOM manipulation"))
    assert never.section == "Inline Edit Rules" and rule_type(never.text, never.headings) == "gotcha"
    laravel = parse_rule_file((FIXTURES / "laravel-love/AGENTS.md").read_text(encoding="utf-8"))
    overview = laravel[0]
    assert overview.headings == ["AGENTS.md", "Project Overview"]
    assert rule_type("Tests use Orchestra Testbench with in-memory SQLite.", ["Testing"]) == "workflow_recipe"


def test_the_app_and_the_cli_propose_the_same_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "laravel-love"
    project.mkdir()
    for name in ("CLAUDE.md", "AGENTS.md"):
        shutil.copy(FIXTURES / "laravel-love" / name, project / name)
    shutil.copy(FIXTURES / "mcp-python-sdk" / "AGENTS.md", project / "GEMINI.md")  # a third file, another name
    app = {m.content for m in scan_rule_files(project)}
    env = ["--project", str(project), "--data-dir", str(tmp_path / "data")]
    for name in ("CLAUDE.md", "AGENTS.md", "GEMINI.md"):
        assert main(["import", *env, str(project / name)]) == 0
    capsys.readouterr()
    assert main(["list", *env, "--json", "--limit", "500"]) == 0
    cli = {m["content"] for m in json.loads(capsys.readouterr().out)["memories"]}
    assert app == cli and len(app) == len(rules_of("laravel-love/AGENTS.md")) + 1 + 37
