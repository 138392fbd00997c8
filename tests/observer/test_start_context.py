"""Prefetch from everything a session start knows: command expansion, git state, handoff notes.

Real git repositories (tests/support/git.py), real SQLite, real CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from obs_helpers import Seq, digest_of

from desktop.cli.main import main as cli_main
from desktop.memory.observer.novelty import HashingEmbedder, Novelty
from desktop.memory.observer.prefetch import PrefetchParams, prefetch_features, prefetch_plan, rank
from desktop.memory.observer.promotion import Promoter
from desktop.memory.observer.start_context import (
    StartContext,
    expand_command,
    git_state,
    handoff_files,
    named_files,
    start_context,
)
from desktop.memory.store.database import Database
from tests.support.git import git

CONTEXT = PrefetchParams(mention=0.5, uncommitted=0.3, committed=0.1, handoff=0.3, handoff_named=0.2)


def write(root: Path, rel: str, text: str = "x\n") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "Test")
    for rel in ("app/cli.py", "app/db.py", "app/old.py", "README.md", "docs/apple_books.md"):
        write(root, rel)
    write(root, ".claude/commands/hi.md", "---\ndescription: catch up\n---\nRead @docs/apple_books.md and "
          "@TODO.md, then run `pytest --spec`. Focus: $ARGUMENTS\n")
    write(root, "TODO.md", "- [ ] finish `app/db.py` error handling\n- [x] README.md\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    write(root, "app/db.py", "changed\n")
    git(root, "commit", "-qam", "db work")
    write(root, "app/cli.py", "uncommitted change\n")
    write(root, "app/new_untracked.py")
    git(root, "mv", "app/old.py", "app/renamed.py")
    return root


def test_slash_command_expands_from_the_project_with_arguments(repo: Path, tmp_path: Path) -> None:
    text = expand_command("/hi the --user flag", repo)
    assert "@docs/apple_books.md" in text and "Focus: the --user flag" in text
    assert expand_command("no command here", repo) == ""
    assert expand_command("/unknown", repo) == ""
    home = tmp_path / "home"
    write(home, ".gemini/commands/review.toml", 'prompt = "Review {{args}} against CONTRIBUTING.md"\n')
    assert expand_command("/review app/cli.py", repo, home) == "Review app/cli.py against CONTRIBUTING.md"
    write(home, ".gemini/commands/broken.toml", "prompt = \n")
    assert expand_command("/broken", repo, home) == ""


def test_git_state_uncommitted_committed_and_branch(repo: Path, tmp_path: Path) -> None:
    git(repo, "checkout", "-qb", "feature/list-recent")
    branch, uncommitted, committed = git_state(repo)
    assert branch == "feature/list-recent"
    assert set(uncommitted) == {"app/cli.py", "app/new_untracked.py", "app/renamed.py"}
    assert committed[0] == "app/db.py", "newest commit first"
    assert "README.md" in committed
    outside = tmp_path / "plain"
    outside.mkdir()
    assert git_state(outside) == (None, [], [])


def test_handoff_notes_and_the_files_they_name(repo: Path) -> None:
    write(repo, "docs/progress-2025.md", "next: app/cli.py")
    write(repo, "docs/design.md", "not a handoff note")
    assert handoff_files(repo) == ["TODO.md", "docs/progress-2025.md"]
    assert named_files("finish `app/db.py` and README.md, see https://x.org e.g. v1.2") == ["app/db.py",
                                                                                           "README.md"]
    ctx = start_context("/hi", repo)
    assert ctx.handoff == ("TODO.md", "docs/progress-2025.md")
    assert {"app/db.py", "README.md", "app/cli.py"} <= set(ctx.handoff_named)
    assert "@TODO.md" in ctx.text()


def test_attached_file_text_is_part_of_the_prompt(repo: Path) -> None:
    ctx = start_context("execute @.claude/commands/hi.md", repo)
    assert "@docs/apple_books.md" in ctx.expansion
    write(repo.parent, "outside.md", "private.py")
    assert start_context("see @../outside.md", repo).expansion == "", "nothing outside the project is read"


def _learn(db: Database, n: int) -> None:
    promoter = Promoter(db, novelty=Novelty(HashingEmbedder()))
    for i in range(n):  # a long history that always reads README.md and app/x.py
        promoter.promote(digest_of(Seq(f"s{i}", t0=1_700_000_000.0 + 3600 * i).user("go")
                                   .read("README.md").read("app/x.py").end()))


def test_context_brings_files_history_never_saw(repo: Path, db: Database) -> None:
    _learn(db, 4)
    conn = db.reads.conn()
    history = [i.file for i in prefetch_plan(conn, "/hi", 5, exclude_missing_under=str(repo))]
    assert "docs/apple_books.md" not in history and "app/cli.py" not in history
    ctx = start_context("/hi", repo)
    plan = prefetch_plan(conn, "/hi", 5, exclude_missing_under=str(repo), params=CONTEXT, context=ctx)
    files = [i.file for i in plan]
    assert files[0] == "README.md", "read in every session, committed and named by TODO.md"
    assert {"docs/apple_books.md", "TODO.md", "app/cli.py"} <= set(files)
    parts = {i.file: i.parts for i in plan}
    assert parts["app/cli.py"]["uncommitted"] == 0.3
    assert "app/x.py" not in files or files.index("app/x.py") > files.index("app/cli.py")
    # app/x.py is not in the folder: never proposed when missing files are excluded
    assert "app/x.py" not in files


def test_context_never_proposes_removed_or_absent_files(db: Database) -> None:
    promoter = Promoter(db, novelty=Novelty(HashingEmbedder()))
    promoter.promote(digest_of(Seq("s1").user("go").read("gone.py").bash("rm gone.py").end()))
    ctx = StartContext("look at gone.py and ghost.py", uncommitted=("gone.py", "/etc/passwd"),
                       handoff_named=("ghost.py",))
    feats = prefetch_features(db.reads.conn(), ctx.prompt, ctx, exists=lambda p: False)
    assert [i.file for i in rank(feats, CONTEXT, 10)] == []


def test_cli_prefetch_uses_the_start_context(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                             ) -> None:
    args = ["--data-dir", str(tmp_path / "data"), "--project", str(repo), "--json"]
    assert cli_main(["prefetch", *args, "/hi"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"docs/apple_books.md", "TODO.md"} <= {r["file"] for r in out}
    assert cli_main(["prefetch", *args, "--history-only", "/hi"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_a_command_named_inside_the_prompt_brings_its_file(repo: Path) -> None:
    ctx = start_context("Execute /hi and wait for instructions, not /etc/passwd", repo)
    assert ".claude/commands/hi.md" in ctx.expansion and "@TODO.md" in ctx.expansion
    assert start_context("Execute /nothing", repo).expansion == ""
