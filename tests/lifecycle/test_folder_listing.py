"""What a folder holds now, as a wrong-place lesson says it (issue 25): short, grouped, safe."""

from __future__ import annotations

from pathlib import Path

from desktop.memory.lifecycle.folder_listing import existing_folder, listing


def _files(root: Path, folder: str, names: list[str]) -> None:
    (root / folder).mkdir(parents=True, exist_ok=True)
    for name in names:
        (root / folder / name).write_text("x\n")


def test_files_sharing_a_prefix_are_one_pattern_nearest_the_guess_first(tmp_path: Path) -> None:
    _files(tmp_path, "cli/strategy", ["manual_commit.go", "manual_commit_git.go", "manual_commit_hooks.go",
                                      "manual_commit_push.go", "auto_commit.go", "common.go",
                                      "common_test.go", "hooks_test.go"])
    said = listing(tmp_path, "cli/strategy/manual_commit", "manual_commit")
    assert said == ("`cli/strategy/` holds now: `manual_commit_*.go` (3 files), `manual_commit.go`, "
                    "`auto_commit.go`, `common.go`, 2 test files.")


def test_a_long_folder_is_cut_and_counted(tmp_path: Path) -> None:
    _files(tmp_path, "src", [f"{w}.py" for w in ("alpha", "bravo", "delta", "echo", "golf", "hotel", "kilo",
                                                 "lima")])
    (tmp_path / "src" / "pkg").mkdir()
    said = listing(tmp_path, "src")
    assert said.startswith("`src/` holds now: `alpha.py`, `bravo.py`") and said.endswith(", 3 more.")


def test_nothing_outside_the_project_or_hostile_in_names(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    _files(root, "docs", ["a`b\nc.md"])
    (tmp_path / "secret").mkdir()
    (root / "link").symlink_to(tmp_path / "secret")
    assert existing_folder(root, "../secret") is None and existing_folder(root, "/etc") is None
    assert existing_folder(root, "link/x") is None and listing(root, "link") == ""
    assert listing(root, "docs/gone/x.md") == "`docs/` holds now: `abc.md`."  # no backtick or line break
    assert listing(root, "nothing/here").startswith("`./` holds now:")


def test_the_name_a_call_looks_for_orders_the_listing(tmp_path: Path) -> None:
    from desktop.memory.lifecycle.folder_listing import looked_for

    _files(tmp_path, "s", ["strategy.go", "manual_commit_a.go", "manual_commit_b.go", "manual_commit_c.go",
                           "session.go"])
    near = looked_for({"pattern": "PostCommit", "path": "/p/s/manual_commit"})
    assert near == "manual_commit"
    assert listing(tmp_path, "s", near).startswith("`s/` holds now: `manual_commit_*.go` (3 files), `session.go`")
    assert looked_for({"pattern": "s/helpers*.go"}) == "helpers.go"


def test_a_hidden_name_guessed_hears_of_the_hidden_names_near_it_and_only_those(tmp_path: Path) -> None:
    """A guessed `.golangci.yml` where `.golangci.yaml` is: the listing names it first. Other hidden
    names (`.env`, `.git`) stay out, and no hidden name is shown for a guess that is not hidden."""
    _files(tmp_path, ".", [".golangci.yaml", ".env", ".gitignore", "go.mod", "main.go", "README.md"])
    (tmp_path / ".git").mkdir()
    said = listing(tmp_path, ".golangci.yml", ".golangci.yml")
    assert said.startswith("`./` holds now: `.golangci.yaml`, ") and ".env" not in said and ".git`" not in said
    assert ".gitignore" not in said  # shares only `.g` with the guess
    assert "." + "golangci" not in listing(tmp_path, "golangci.yml", "golangci.yml")
    assert "`.git/`" not in listing(tmp_path, ".github/workflows", ".github")  # the repository's own folder, never
