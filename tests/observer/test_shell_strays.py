"""A call that failed from a subfolder on a path from the project root (issue 26): the shell keeps
its folder, a lesson once a second session shows it."""

from __future__ import annotations

from obs_helpers import Seq, digest_of, kinds

from desktop.memory.observer.novelty import HashingEmbedder, Novelty
from desktop.memory.observer.promotion import Promoter
from desktop.memory.store.database import Database

MISSING = "Exit code 1\nstat ./cmd/cli/strategy/...: directory not found"


def strayed(sid: str = "s1") -> Seq:
    return Seq(sid).bash("cd cmd/cli/strategy && go test ./...", "ok").bash("go test ./cmd/cli/strategy/...", MISSING,
                                                                         error=True)


def test_a_root_path_failing_from_a_subfolder_is_the_shells_folder() -> None:
    found = kinds(digest_of(strayed().end())).get("shell_stray", [])
    assert len(found) == 1 and found[0].data["folder"] == "cmd/cli/strategy"
    assert found[0].data["path"] == "./cmd/cli/strategy/..."


def test_near_misses_are_not() -> None:
    # the same failure from the root: a wrong path, not the shell's folder
    at_root = Seq().bash("go test ./cmd/cli/strategy/...", MISSING, error=True)
    assert "shell_stray" not in kinds(digest_of(at_root.end()))
    # from a subfolder, a path relative to it that is missing: not a root path
    local = Seq().bash("cd cmd/cli && ls", "ok").bash("cat strategy/x.go", "cat: strategy/x.go: No such file "
                                                                          "or directory", error=True)
    assert "shell_stray" not in kinds(digest_of(local.end()))
    # from a subfolder, a root path that failed for another reason
    other = Seq().bash("cd cmd/cli && ls", "ok").bash("go test ./cmd/cli/...", "FAIL: TestX", error=True)
    assert "shell_stray" not in kinds(digest_of(other.end()))


def test_a_second_session_makes_it_a_lesson(db: Database) -> None:
    promoter = Promoter(db, novelty=Novelty(HashingEmbedder()))
    promoter.promote(digest_of(strayed("s1").end()))
    assert db.reads.conn().execute("SELECT count(*) FROM memories WHERE json_extract(metadata, '$.signal') = "
                                   "'shell_stray'").fetchall()[0][0] == 0
    promoter.promote(digest_of(strayed("s2").end()))
    rows = db.reads.conn().execute("SELECT content, candidate, needs_review FROM memories "
                                   "WHERE json_extract(metadata, '$.signal') = 'shell_stray'").fetchall()
    assert len(rows) == 1 and rows[0][1] == 0 and rows[0][2] == 0
    assert "keeps its folder" in rows[0][0] and "`cd cmd/cli/strategy`" in rows[0][0]


def test_an_error_about_another_path_is_not_the_shells_folder() -> None:
    """From a subfolder, a command whose failure names another file (a hook's script) did not
    miss the path it was given."""
    s = Seq().bash("cd specs/fixtures && ls", "ok").bash(
        "cd specs/fixtures && echo hi", "python3: can't open file '.claude/validate.py': [Errno 2] No such file "
        "or directory", error=True)
    assert "shell_stray" not in kinds(digest_of(s.end()))


def test_a_shell_search_read_as_a_search_is_quoted_as_it_ran() -> None:
    """``rg x docs/a.md`` relabelled as a Grep (``observer/shell``) failed from ``docs/``: the lesson
    quotes the command the agent typed, not "Grep docs/a.md", a call that never ran."""
    error = "Error: rg: docs/a.md: IO error for operation on docs/a.md: No such file or directory (os error 2)"
    s = Seq().bash("cd docs && ls", "ok").call("Grep", (), error, True, raw="Bash", command='rg -n "x" docs/a.md',
                                                pattern="x", path="docs/a.md")
    found = kinds(digest_of(s.end())).get("shell_stray", [])
    assert len(found) == 1 and found[0].data["call"] == 'rg -n "x" docs/a.md'
