"""What the agent is already told (issue 26): a recipe its instruction files give is not learned again,
whichever folder the session ran in."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.memory.observer.command_kinds import toolchain_default
from desktop.memory.observer.known_already import already_told, instructions_seen, runs_unprompted
from desktop.memory.store.memory_ops import NewMemory


def recipe(command: str, source: str = "observer_inferred") -> NewMemory:
    return NewMemory(content=f"Run the tests with `{command}` from the project root.", type="workflow_recipe",
                     source=source)


def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "cmd" / "cli").mkdir(parents=True)
    (root / "CLAUDE.md").write_text("## Test\n\n```\nmise   run test\n```\n", encoding="utf-8")
    (root / "cmd" / "AGENTS.md").write_text("Build with `go build ./cmd/...`.\n", encoding="utf-8")
    return root


def test_a_recipe_the_instructions_give_is_told_already(tmp_path: Path) -> None:
    told = instructions_seen(project(tmp_path), None)
    assert already_told(recipe("mise run test"), told)          # whitespace of the file does not matter
    assert not already_told(recipe("mise run test:ci"), told)   # another command
    assert not already_told(recipe("mise run test", source="user_taught"), told)  # a person's words stay


def test_a_review_recipe_the_instructions_give_is_told_whatever_its_placeholders(tmp_path: Path) -> None:
    """One PR's text (``--title …``) and numbers (``<number>``) are the recipe's placeholders, not words
    the instructions must repeat."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "CLAUDE.md").write_text("Open PRs as drafts (`gh pr create --draft`). Answer review comments in their "
                                    "thread: `gh api repos/o/r/pulls/{pr}/comments/{id}/replies -f body=...`\n",
                                    encoding="utf-8")
    told = instructions_seen(root, None)
    pr = NewMemory(content="Open pull requests with `gh pr create --draft --title … --body …`.",
                   type="workflow_recipe", source="observer_inferred")
    reply = NewMemory(content="Answer a review comment in its own thread with "
                              "`gh api repos/o/r/pulls/<number>/comments/<id>/replies -f body=…`.",
                      type="workflow_recipe", source="observer_inferred")
    labelled = NewMemory(content="Open pull requests with `gh pr create --label ready --title …`.",
                         type="workflow_recipe", source="observer_inferred")
    assert already_told(pr, told) and already_told(reply, told)
    assert not already_told(labelled, told)  # the label is the team's choice, and the text does not give it


def test_a_chain_of_told_steps_is_told_and_a_prefix_of_a_told_command_is_not(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "CLAUDE.md").write_text("Activate: `source .venv/bin/activate`.\nTypes: `mypy .`\nCI: `make test:ci`\n",
                                    encoding="utf-8")
    told = instructions_seen(root, None)
    assert already_told(recipe("source .venv/bin/activate && mypy ."), told)   # given apart, still told
    assert not already_told(recipe("source .venv/bin/activate && pytest -x"), told)  # one step is new
    assert not already_told(recipe("make test"), told)   # not told by `make test:ci`


def test_the_files_of_every_folder_from_the_session_up_to_the_root(tmp_path: Path) -> None:
    root = project(tmp_path)
    deep = instructions_seen(root, str(root / "cmd" / "cli"))
    assert "mise run test" in deep and "go build ./cmd/..." in deep
    assert "go build ./cmd/..." not in instructions_seen(root, str(root))  # a subfolder's file is its own
    # a transcript from another machine: its folder does not exist here, the root's files still count
    assert "mise run test" in instructions_seen(root, "/Users/someone/Work/cli")
    # a session outside the project: its own folder and the project's root, nothing in between
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (tmp_path / "CLAUDE.md").write_text("`make all`", encoding="utf-8")
    assert "make all" not in instructions_seen(root, str(outside))


def test_each_project_promotes_with_its_own_root(tmp_path: Path) -> None:
    from desktop.composition import Engram
    from desktop.settings import Settings

    root = project(tmp_path)
    proj = Engram(Settings(data_dir=tmp_path / "data")).open_project(root, remember=False)
    try:
        assert proj.observer.promoter.root == root
    finally:
        proj.close()


def test_a_huge_instruction_file_is_read_up_to_its_bound_only(tmp_path: Path) -> None:
    """A hostile repository's CLAUDE.md of 64 MB (sparse: nothing on disk) costs the hook its first
    256 kB, not the whole file in memory."""
    import tracemalloc

    from desktop.memory.observer.known_already import MAX_BYTES, instructions

    root = tmp_path / "repo"
    root.mkdir()
    with (root / "CLAUDE.md").open("wb") as f:
        f.write(b"Run `mise run test:ci` before a commit.\n")
        f.truncate(64 * 1024 * 1024)
    tracemalloc.start()
    try:
        told = instructions(root)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "mise run test:ci" in told and len(told) <= MAX_BYTES
    assert peak < 8 * MAX_BYTES, peak


@pytest.mark.parametrize(("command", "default"), [
    ("go build ./...", True), ("go build ./cmd/app", True), ("pytest", True), ("pytest -xvs", True),
    ("cargo test", True), ("npm test", True), ("go vet ./...", True), ("ruff format .", True),
    # the project's choice: an option, a value, a runner, an environment, a task, a chain
    ("pytest --spec", False), ("pytest --cov=app", False), ("go test -tags=integration ./...", False),
    ("go test -race ./...", False), ("uv run pytest", False), ("python -m pytest", False), ("yarn test", False),
    ("make test", False), ("mise run lint", False), ("npx vitest run", False),
    ("source .venv/bin/activate && pytest", False), ("git status", False), ("", False),
    # not a check of the work, or a switch given a value, or outside the root
    ("cargo run", False), ("kubectl apply -f k8s/", False), ("go build -o ./bin/app .", False),
    ("pytest ../sibling", False), ("pytest /abs/tests", False), ("dotnet test", True)])
def test_a_toolchain_default_is_the_tool_with_nothing_of_the_projects(command: str, default: bool) -> None:
    assert toolchain_default(command) is default


def test_a_learned_default_from_the_root_runs_unprompted_and_a_persons_recipe_stays() -> None:
    assert runs_unprompted(recipe("go build ./..."))
    assert not runs_unprompted(recipe("pytest --spec"))
    assert not runs_unprompted(recipe("go build ./...", source="user_taught"))  # a person's words stay
    in_folder = NewMemory(content="Run the tests with `npm test` from `web/`.", type="workflow_recipe",
                          source="observer_inferred")
    with_env = NewMemory(content="Run the tests with `pytest` from the project root with `DB_URL` set.",
                         type="workflow_recipe", source="observer_inferred")
    assert not runs_unprompted(in_folder) and not runs_unprompted(with_env)
