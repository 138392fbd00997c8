"""Files agents delete or move with shell commands: parsed, learned, and no longer prefetched."""

from __future__ import annotations

import pytest
from obs_helpers import Seq, digest_of

from desktop.memory.observer.file_ops import file_operations
from desktop.memory.observer.novelty import HashingEmbedder, Novelty
from desktop.memory.observer.observer import Observer
from desktop.memory.observer.prefetch import prefetch_plan
from desktop.memory.observer.promotion import Promoter
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.tool_names import plausible_file
from desktop.memory.store.database import Database

CWD = "/proj"


@pytest.mark.parametrize(("command", "removed", "moved"), [
    ("rm /proj/setup.py", ["setup.py"], []),
    ("git rm -r specs/old", ["specs/old"], []),
    ("rm -f .flake8 2>/dev/null || true", [".flake8"], []),
    ("rm docs/*.png", ["docs/*.png"], []),
    ("cd docs && rm draft.md", ["docs/draft.md"], []),
    ("mv /proj/GITHUB_SETUP.md /proj/docs/github_setup.md", [], [("GITHUB_SETUP.md", "docs/github_setup.md")]),
    ("git mv a.md docs/ && git mv x.py y.py", [], [("a.md", "docs/a.md"), ("x.py", "y.py")]),
    ("mv a.py b.py lib/", [], [("a.py", "lib/a.py"), ("b.py", "lib/b.py")]),
    ("mv notes.txt /tmp/notes.txt", ["notes.txt"], []),  # moved out of the project: gone from it
])
def test_file_operations_understood(command: str, removed: list[str], moved: list[tuple[str, str]]) -> None:
    ops = file_operations(command, CWD)
    assert ops.removed == removed
    assert ops.moved == moved


@pytest.mark.parametrize("command", [
    "git rm --cached .DS_Store",  # untracked, not deleted
    "echo rm x",  # rm is an argument, not the command
    "rm /etc/hosts",  # outside the project
    "rm $(cat list.txt)",  # substitution: cannot vouch for it
    'rm "unbalanced',
    "git mv -n a.py b.py",  # dry run
    "ls -la",
])
def test_file_operations_ignores_what_it_cannot_vouch_for(command: str) -> None:
    assert not file_operations(command, CWD)


def test_only_a_successful_command_counts_and_a_retouch_undeletes() -> None:
    events = (Seq().bash("rm gone.py").bash("rm kept.py", output="No such file", error=True)
              .bash("rm back.py").write("back.py").bash("git mv old.py new.py").end())
    d = digest_of(events)
    assert d.removed == ["gone.py"]
    assert d.moved == [("old.py", "new.py")]


def test_file_operations_survive_a_checkpoint() -> None:
    obs = Observer("s1")
    for ev in Seq().bash("rm a.py").bash("mv b.py c.py").events:
        obs.observe(ev)
    restored = Scratchpad.from_state(obs.checkpoint())
    assert restored.removed == {"a.py": 1}
    assert restored.moved == [["b.py", "c.py"]]


def _learn(db: Database, sessions: list[Seq]) -> None:
    p = Promoter(db, novelty=Novelty(HashingEmbedder()))
    for s in sessions:
        p.promote(digest_of(s.end()))


def _seq(i: int) -> Seq:
    return Seq(f"s{i}", t0=1_700_000_000.0 + 3600 * i).user("carry on")


def test_deleted_files_leave_the_prefetch_plan_and_a_rename_keeps_history(db: Database) -> None:
    _learn(db, [
        _seq(1).read("setup.py").read("core.py").read("old/a.py").read("old/b.py").read("docs/x.png")
        .read("GUIDE.md"),
        _seq(2).read("setup.py").read("core.py").read("GUIDE.md").bash("rm setup.py").bash("rm -rf old")
        .bash("rm docs/*.png").bash("git mv GUIDE.md docs/guide.md"),
    ])
    conn = db.reads.conn()
    gone = {p for (p,) in conn.execute("SELECT file_path FROM observer_file_nodes WHERE removed_at IS NOT NULL")}
    assert gone == {"setup.py", "old/a.py", "old/b.py", "docs/x.png", "GUIDE.md"}
    plan = [i.file for i in prefetch_plan(conn, "carry on", 10)]
    assert "setup.py" not in plan and "GUIDE.md" not in plan and "old/a.py" not in plan
    # The renamed file inherits the old path's two sessions, so it ranks with core.py.
    assert plan[:2] == ["core.py", "docs/guide.md"]


def test_a_recreated_file_comes_back(db: Database) -> None:
    _learn(db, [_seq(1).read("a.py").bash("rm a.py"), _seq(2).write("a.py"), _seq(3).read("a.py")])
    conn = db.reads.conn()
    assert conn.execute("SELECT removed_at FROM observer_file_nodes WHERE file_path = 'a.py'").fetchall() == [(None,)]
    assert "a.py" in [i.file for i in prefetch_plan(conn, "carry on", 5)]


@pytest.mark.parametrize(("path", "ok"), [
    ("src/a.py", True), ("Makefile", True), (".", False), ("docs/", False), ('{"content"', False), ("", False),
])
def test_plausible_file(path: str, ok: bool) -> None:
    assert plausible_file(path) is ok
