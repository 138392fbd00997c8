"""Issue 26: a rule said without its object gets the one the session then wrote or ran."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from obs_helpers import Seq, digest_of

from desktop.memory.observer.novelty import HashingEmbedder, Novelty
from desktop.memory.observer.promotion import Promoter
from desktop.memory.observer.referents import MAX_NAMES
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


DECLINED = "The user doesn't want to proceed with this tool use. The tool use was rejected."


def test_a_declined_edit_is_the_agents_guess_not_the_rules_object(db: Database) -> None:
    s = Seq("a").user(AUTHOR_RULE)
    for _ in range(2):
        s.call("Edit", ("a.go",), DECLINED, True, old_string="x := 1", new_string="x := GetGitAuthorFromEnv()")
    assert _stored(db, s) == [f'The user\'s instruction: "{AUTHOR_RULE}"']


def test_a_search_and_a_prohibition_name_nothing(db: Database) -> None:
    searched = Seq("a").user(MODEL_RULE).user("rikal jsem 3.1 pro!")
    for _ in range(2):
        searched.bash("grep -rn gemini-3.1-pro-preview scripts/", "scripts/review.sh:3: gemini-3.1-pro-preview")
    forbidden = "never use the old model 2.5 again, it is far too weak for reviews"
    prohibited = Seq("b").user(forbidden)
    for _ in range(2):
        prohibited.bash("sed -i s/gemini-2.5/gemini-3.1/ scripts/review.sh && ./scripts/review.sh --model 2.5", "ok")
    _stored(db, searched)
    stored = _stored(db, prohibited)  # both sessions' memories
    assert len(stored) == 2 and not any("The session that heard it" in m for m in stored), stored


def test_a_command_is_shown_as_it_ran_up_to_the_name(db: Database) -> None:
    rule = "the tests have to run on python 3.12 from now on"
    s = Seq("a").user(rule)
    for _ in range(2):
        s.bash("uv run --python 3.12 pytest -q", "12 passed")
    assert _stored(db, s) == [f'The user\'s instruction: "{rule}" The session that heard it then ran '
                              '`uv run --python 3.12`.']


@pytest.mark.timeout(60)  # a hang guard: a backtracking pattern took hours on this input
def test_a_huge_write_is_read_in_bounded_time(db: Database) -> None:
    s = Seq("a").user(MODEL_RULE).user("rikal jsem 3.1 pro!")
    for digits in ("1" * 20_000, "0." * 10_000, "a1" * 10_000):
        s.call("Write", ("big.txt",), content=digits)
    stored = _stored(db, s)
    assert len(stored) == 1 and "The session that heard it" not in stored[0]


def test_each_rule_counts_a_bounded_number_of_names(db: Database) -> None:
    """A rule's first :data:`MAX_NAMES` names are counted; a later one is not, however often it comes."""
    s = Seq("a").user(AUTHOR_RULE)
    for i in range(MAX_NAMES):
        _edit(s, "a.go", "x := 1", f"x := GitAuthor{chr(65 + i)}x()")
    for _ in range(3):
        _edit(s, "b.go", "y := 1", "y := GitAuthorLate()")
    assert _stored(db, s) == [f'The user\'s instruction: "{AUTHOR_RULE}"']


def test_only_the_sessions_last_rules_are_followed(db: Database) -> None:
    s = Seq("a").user(AUTHOR_RULE)
    for n, topic in enumerate(("cache layer", "retry policy", "release notes", "error pages")):
        s.user(f"there should be exactly one {topic} in this codebase, owned by the core team {n}")
    for _ in range(2):
        _edit(s, "a.go", "x := 1", "x := GetGitAuthorFromRepo(r)")
    stored = _stored(db, s)
    assert stored and not any("GetGitAuthorFromRepo" in m for m in stored), stored


def _model_session(*commands: str) -> Seq:
    s = Seq("a").user(MODEL_RULE).user("rikal jsem 3.1 pro!")
    for command in commands:
        s.bash(command, "ok")
    return s


@pytest.mark.parametrize("commands", [
    # a wrapper runs a look; a tee, a removal and a redirect name files, not what was run
    ("timeout 30 grep -rn gemini-3.1-pro-preview scripts/",) * 2,
    ("gemini -p hi | tee reviews/gemini-3.1-pro.log",) * 2,
    ("rm -rf cache/gemini-3.1-pro-preview",) * 2,
    ("bash <(curl -s https://example.com/install-3.1.sh) --model 3.1",) * 2,  # built from another command
    ("rm -rf cache-gemini-3.1-pro-preview",) * 2,                      # a removal, whatever it names
    ("python3 review.py --out gemini-3.1-pro.log",) * 2,               # a file name
    ("gemini -p $PROMPT -m gemini-3.1-pro-preview",) * 2,              # shown, it would not be what ran
    ("gemini -p hi | tee gemini-3.1-pro-preview",) * 2,                # tee writes what it is given
    ("python3 review.py out/gemini-3.1-pro-preview",) * 2,             # a path
    ("(gemini -m gemini-3.1-pro-preview)",) * 2,                       # a subshell
    ("pgrep -f gemini-3.1-pro-preview",) * 2,
    ("sudo -u deploy gemini -m gemini-3.1-pro-preview",) * 2,           # a wrapper's options: the program unclear
    ("gemini -p review-*.md -m gemini-3.1-pro-preview",) * 2,          # a glob the shell expands
    ('git commit -m "$(cat <<EOF\nSwitch reviews to gemini-3.1-pro-preview\nEOF\n)"',) * 2,  # a heredoc's body
    ("cat > plan.md <<EOF\ngemini -m gemini-3.1-pro-preview -p review\nEOF",) * 2,
    ('gemini -p "review the plan:\ncompare with gemini-3.1-pro-preview and report',) * 2,  # a cut prompt's lines
])
def test_what_a_command_looks_at_removes_or_builds_from_is_not_shown(db: Database, commands: tuple[str, ...]) -> None:
    stored = _stored(db, _model_session(*commands))
    assert len(stored) == 1 and "The session that heard it" not in stored[0], stored


def test_a_version_already_in_the_replaced_text_is_not_introduced(db: Database) -> None:
    s = Seq("a").user(MODEL_RULE).user("rikal jsem 3.1 pro!")
    for flag in ("--yolo", "--sandbox"):
        _edit(s, "review.sh", 'gemini -m gemini-3.1-pro-preview -p "$P"', f'gemini -m gemini-3.1-pro-preview {flag}')
    stored = _stored(db, s)
    assert len(stored) == 1 and "The session that heard it" not in stored[0], stored


def test_a_whole_file_written_introduces_nothing_it_can_tell(db: Database) -> None:
    s = Seq("a").user(AUTHOR_RULE)
    for _ in range(2):
        s.call("Write", ("author.go",), content=AUTHOR_FN)
    assert _stored(db, s) == [f'The user\'s instruction: "{AUTHOR_RULE}"']


def test_a_rule_follows_its_first_versions_only(db: Database) -> None:
    rule = "reviews must always use one of the newest models: 2.0, 2.5, 3.0, 3.1 or 3.5"
    s = Seq("a").user(rule)
    for _ in range(2):
        s.bash("gemini -m gemini-3.5-pro -p hi", "ok")
    stored = _stored(db, s)
    assert len(stored) == 1 and "The session that heard it" not in stored[0], stored


@pytest.mark.parametrize(("rule", "written"), [
    # negates mid-sentence: what the agent writes next is not what the rule is about
    ("the config loader should never read the env vars directly, the settings object must be the only way",
     "x := readEnvVars()"),
    ("we should always load the settings object, not the env vars", "x := readEnvVars()"),
    # names a code token of its own
    ("the git author should always come from `checkpoint.Author`, for every strategy", "x := GetGitAuthorFromRepo(r)"),
])
def test_a_rule_that_negates_or_names_its_object_is_not_followed(db: Database, rule: str, written: str) -> None:
    s = Seq("a").user(rule)
    for _ in range(2):
        _edit(s, "a.go", "x := 1", written)
    stored = _stored(db, s)
    assert len(stored) == 1 and "The session that heard it" not in stored[0], stored


@pytest.mark.parametrize(("command", "shown"), [
    ("timeout 600 gemini -m gemini-3.1-pro-preview -p 'review the plan'", "gemini -m gemini-3.1-pro-preview"),
    ("GEMINI_CLI_TRUST=1 gemini -m gemini-3.1-pro-preview -p hi", "gemini -m gemini-3.1-pro-preview"),
    ("gemini -p 'review the plan' -m gemini-3.1-pro-preview", "gemini -p 'review the plan' -m gemini-3.1-pro-preview"),
    # recorded commands are cut at a length, often inside a long quoted prompt
    ('gemini -m gemini-3.1-pro-preview -p "You are a senior reviewer. Re', "gemini -m gemini-3.1-pro-preview"),
    ("cd plans\ngemini -m gemini-3.1-pro-preview -p review", "gemini -m gemini-3.1-pro-preview"),  # a line ends it
])
def test_a_command_is_shown_as_the_shell_ran_it_up_to_the_name(db: Database, command: str, shown: str) -> None:
    """Through its wrappers and assignments, quoted where it was, up to the name."""
    assert _stored(db, _model_session(command, command)) == [
        f'The user\'s instruction: "{MODEL_RULE}" The session that heard it then ran `{shown}`.']
