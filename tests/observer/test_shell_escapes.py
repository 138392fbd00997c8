"""The agent's shell tool rewrote a quoted ``!`` as ``\\!`` (issues 25 and 26): learned from the failed
run's own output in one session, said before any later command with a quoted ``!`` next to a space."""

from __future__ import annotations

from obs_helpers import Seq, digest_of, kinds

from desktop.memory.observer.command_shape import parse
from desktop.memory.observer.novelty import HashingEmbedder, Novelty
from desktop.memory.observer.promotion import Promoter
from desktop.memory.store.database import Database
from desktop.memory.triggers.model import BANG_IN_QUOTES, COMMAND, Trigger, matches, shape_of

JQ = """gh api repos/o/r/pulls/12/comments --jq '.[] | select(.user.login != "bot") | .id'"""
JQ_OUT = ("Exit code 1\nfailed to parse jq expression (line 1, column 26)\n"
          """    .[] | select(.user.login \\!= "bot") | .id\n               ^""")


def escaped(sid: str = "s1") -> Seq:
    return Seq(sid).bash(JQ, JQ_OUT, error=True).bash("gh api repos/o/r/pulls/12/comments --jq '.[].id'", "1\n2")


def test_an_output_quoting_the_command_with_a_backslash_it_never_had_is_the_lesson() -> None:
    found = kinds(digest_of(escaped().end())).get("shell_escape", [])
    assert len(found) == 1
    data = found[0].data
    # whole words around the `!`, and the error's first clause: no fragment cut mid-word
    assert data["written"] == '.user.login != "bot"' and data["ran"] == '.user.login \\!= "bot"'
    assert data["jq"] is True and data["error"] == "failed to parse jq expression"
    assert data["triggers"] == [{"kind": "command", "key": BANG_IN_QUOTES, "tokens": ["jq"]}]


def test_near_misses_are_not() -> None:
    # the backslash was the agent's own; the run succeeded; the output shows no rewrite of this command
    own = """jq '.[] | select(.a \\!= 1)' f.json"""
    for command, output, error in (
            (own, "jq: error: syntax error\n    .[] | select(.a \\!= 1)", True),
            (JQ, """[1, 2]\nnote: .user.login \\!= "bot" appears in the docs""", False),
            (JQ, "failed to parse jq expression (line 1, column 26)", True),
            ("echo hi", "hi \\! there", True)):
        assert "shell_escape" not in kinds(digest_of(Seq().bash(command, output, error=error).end())), command


def test_one_session_is_enough_the_output_is_the_evidence(db: Database) -> None:
    Promoter(db, novelty=Novelty(HashingEmbedder())).promote(digest_of(escaped().end()))
    rows = db.reads.conn().execute(
        "SELECT content, candidate, json_extract(metadata, '$.promoted_on') FROM memories "
        "WHERE json_extract(metadata, '$.signal') = 'shell_escape'").fetchall()
    assert len(rows) == 1 and rows[0][1] == 0 and rows[0][2] == "command_outcome"
    assert "adds a backslash before a `!`" in rows[0][0] and 'ran as `.user.login \\!= "bot"`' in rows[0][0]
    assert "`(.a == b) | not`" in rows[0][0]  # the jq form without `!`
    assert len(rows[0][0]) <= 290  # one line, with room for its evidence count (warn.LINE_CHARS)


def test_the_trigger_fires_on_a_quoted_bang_next_to_a_space_whatever_the_program() -> None:
    trig = Trigger(COMMAND, BANG_IN_QUOTES)
    for command in ("jq -r '.[] | select(.name != \"x\")' a.json", "python3 -c 'print(1 != 2)'",
                    "git commit -m \"works now! really\"", "awk '$1 != 0 { print }' f"):
        call = shape_of("Bash", {"command": command}, [])
        index_keys = call.keys()
        assert (COMMAND, BANG_IN_QUOTES) in index_keys and matches(trig, call), command
    # an unquoted `!` (the shell's own negation), a `!` between letters, no `!` at all: left alone
    for command in ("if ! grep -q x f; then echo no; fi", "[ ! -f x ]", "jq '.a!=1' f", "git commit -m 'fix!'",
                    "go test ./..."):
        call = shape_of("Bash", {"command": command}, [])
        index_keys = call.keys()
        assert (COMMAND, BANG_IN_QUOTES) not in index_keys and not matches(trig, call), command
    assert parse("echo 'a != b'").segments[0].args == ("a != b",)


def test_a_jq_lesson_fires_on_jq_filters_whichever_program_runs_them() -> None:
    """Replayed on real sessions, a ``!`` in a heredoc or a sed script ran unharmed: a lesson learned
    from a jq filter is about jq filters."""
    trig = Trigger(COMMAND, BANG_IN_QUOTES, tokens=("jq",))
    for command in ("jq -r '.[] | select(.name != \"x\")' a.json", JQ, "cat f.json | jq 'map(select(.a != 1))'"):
        assert matches(trig, shape_of("Bash", {"command": command}, [])), command
    for command in ("python3 -c 'print(1 != 2)'", "sed -i 's/if a {/if a != nil {/' x.go",
                    "cat >> x.go << 'EOF'\nif err != nil {\nEOF"):
        assert not matches(trig, shape_of("Bash", {"command": command}, [])), command
