"""Issue 26: a rule said without its object gets the one the session then wrote or ran."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from obs_helpers import Seq, digest_of

from desktop.memory.observer.novelty import HashingEmbedder, Novelty
from desktop.memory.observer.promotion import Promoter
from desktop.memory.store.database import Database

AUTHOR_RULE = "there should be only _one_ way for us to get the git author in this codebase"
MODEL_RULE = "ano, spust gemini review, akorat je ale potreba, aby to byl posledni model 3.1"
AUTHOR_FN = ("func GetGitAuthorFromRepo(repo *git.Repository) (string, string) {\n"
             "\tcfg := repo.Config()\n\treturn cfg.User.Name, cfg.User.Email\n}\n")


def _stored(db: Database, seq: Seq) -> list[str]:
    Promoter(db, novelty=Novelty(HashingEmbedder())).promote(digest_of(seq.end()))
    return [r[0] for r in db.reads.conn().execute("SELECT content FROM memories WHERE candidate = 0")]


def _edit(seq: Seq, path: str, old: str, new: str) -> Seq:
    return seq.call("Edit", (path,), old_string=old, new_string=new)


def test_a_name_the_session_introduced_that_spells_the_rule_is_kept_beside_it(db: Database) -> None:
    s = Seq("a").user(AUTHOR_RULE)
    _edit(s, "checkpoint/author.go", "package checkpoint\n", "package checkpoint\n\n" + AUTHOR_FN)
    _edit(s, "strategy/author.go", "return getAuthor(repo)", "return checkpoint.GetGitAuthorFromRepo(repo)")
    assert _stored(db, s) == [f'The user\'s instruction: "{AUTHOR_RULE}" '
                              "The session that heard it then wrote `GetGitAuthorFromRepo`."]


def test_a_version_the_rule_names_is_kept_with_the_command_that_ran_it(db: Database) -> None:
    s = Seq("a").user(MODEL_RULE).bash("gemini -m gemini-2.5-flash -p 'hi'", "hello")
    s.user("rikal jsem 3.1 pro!")
    s.bash("gemini -m gemini-3.1-pro -p 'hi'", "ModelNotFoundError: gemini-3.1-pro", error=True)
    s.bash("gemini -m gemini-3.1-pro-preview -p 'say hello'", "hello")
    s.bash("gemini -m gemini-3.1-pro-preview -p 'review plans/PLAN.md'", "1. the cache is never cleared")
    assert _stored(db, s) == [f'The user\'s instruction: "{MODEL_RULE}" '
                              "The session that heard it then ran `gemini -m gemini-3.1-pro-preview`."]


def test_nothing_is_added_after_one_call(db: Database) -> None:
    once = Seq("a").user(AUTHOR_RULE)
    _edit(once, "checkpoint/author.go", "package checkpoint\n", "package checkpoint\n\n" + AUTHOR_FN)
    assert _stored(db, once) == [f'The user\'s instruction: "{AUTHOR_RULE}"']


def test_nothing_is_added_without_a_clear_favourite(db: Database) -> None:
    tie = Seq("b").user(AUTHOR_RULE)
    for name in ("GitAuthorName", "GitAuthorEmail"):
        for _ in range(2):
            _edit(tie, "a.go", "x := 1", f"x := {name}()")
    assert _stored(db, tie) == [f'The user\'s instruction: "{AUTHOR_RULE}"']


def _late() -> Seq:
    late = Seq("b").user(AUTHOR_RULE).idle(100)  # written long after the rule: another task's name
    for _ in range(2):
        _edit(late, "b.go", "x := 1", "x := GetGitAuthorFromRepo(r)")
    return late


def _there_before() -> Seq:
    kept = Seq("a").user(AUTHOR_RULE)  # already in the replaced text: renamed around, not introduced
    for _ in range(3):
        _edit(kept, "a.go", "a := GetGitAuthorFromRepo(r)", "a, err := GetGitAuthorFromRepo(r)")
    return kept


def _failed() -> Seq:
    failed = Seq("c").user(MODEL_RULE)  # only in commands that failed
    for _ in range(2):
        failed.bash("gemini -m gemini-3.1-pro -p 'hi'", "ModelNotFoundError", error=True)
    return failed.user("rikal jsem 3.1 pro!")


@pytest.mark.parametrize("session", [_late, _there_before, _failed])
def test_what_was_there_before_the_rule_or_long_after_it_or_failed_is_not_its_object(
        db: Database, session: Callable[[], Seq]) -> None:
    stored = _stored(db, session())
    assert len(stored) == 1 and "The session that heard it" not in stored[0], stored


def test_a_rule_that_names_its_object_is_left_as_the_user_said_it(db: Database) -> None:
    rule = "never call `os.Getwd()` in hooks, use the repo root helper: it breaks in subdirectories"
    s = Seq("a").user(rule)
    for _ in range(3):
        _edit(s, "hooks.go", "dir, _ := os.Getwd()", "dir, err := paths.RepoRootDir()")
    stored = _stored(db, s)
    assert len(stored) == 1 and "The session that heard it" not in stored[0], stored
