"""The tests the user asks for once code changed without them (issues 25 and 26): learned from what
happened (untested change, the user's question, test edits answering it), a habit only when another
session shows it again; given when asked for, never volunteered (tests/hooks/test_moments.py)."""

from __future__ import annotations

import json

from obs_helpers import Seq, digest_of, kinds

from desktop.memory.observer.novelty import HashingEmbedder, Novelty
from desktop.memory.observer.promotion import Promoter
from desktop.memory.observer.signals import REVIEWED_TESTS
from desktop.memory.store.database import Database
from desktop.memory.types import Memory

ASK = "can you add some tests for the new functionality?"


def session(sid: str, ask: str = ASK, *, then: str = "cmd/cli/resume_test.go", code: str = "cmd/cli/resume.go") -> Seq:
    return Seq(sid).user("make resume work on detached heads").edit(code).user(ask).edit(then)


def test_an_ask_for_tests_answered_by_test_edits_is_evidence() -> None:
    found = kinds(digest_of(session("s1").end()))["asked_tests"]
    assert len(found) == 1 and found[0].data["text"] == ASK


def test_near_misses_are_not() -> None:
    # tests already written with the change: nothing was missing
    s = Seq("a").user("fix resume").edit("cmd/cli/resume.go").edit("cmd/cli/resume_test.go").user(ASK)
    assert "asked_tests" not in kinds(digest_of(s.edit("cmd/cli/resume_test.go").end()))
    # a report, not a question (a failure to fix), and an answer that edits code, not tests
    assert "asked_tests" not in kinds(digest_of(session("b", "integration tests are failing").end()))
    assert "asked_tests" not in kinds(digest_of(session("c", then="cmd/cli/resume.go").end()))
    # a run asked for, or a run's outcome asked about, not tests (even when test edits follow)
    for ask in ("can you run the tests?", "I'm confused, what's the issue? Were any test failing?",
                "est-ce que les tests échouent ?"):
        assert "asked_tests" not in kinds(digest_of(session("g", ask).end())), ask
    # only docs changed before the question
    assert "asked_tests" not in kinds(digest_of(session("d", code="docs/usage.md").end()))
    # a long pasted text that happens to end with a question
    long = "Review notes: " + "the function is only used in unit tests. " * 12 + "thoughts?"
    assert "asked_tests" not in kinds(digest_of(session("e", long).end()))
    # a subagent's brief is not the user
    sub = Seq("f", "subagent", parent="p").user("x").edit("a.go").user(ASK).edit("a_test.go")
    assert "asked_tests" not in kinds(digest_of(sub.end()))
    # answered by a rename inside the tests, not by tests added ("were any tests failing?")
    renamed = Seq("g").user("x").edit("cli.py").user("I'm confused, were any tests failing?")
    renamed.call("Edit", ("specs/cli_spec.py",), old_string="_format_book(b)", new_string="format(b)")
    assert "asked_tests" not in kinds(digest_of(renamed.end()))
    added = Seq("h").user("x").edit("cli.py").user(ASK)
    added.call("Edit", ("specs/cli_spec.py",), old_string="def it_a():\n    pass",
               new_string="def it_a():\n    pass\n\ndef it_b():\n    assert f() == 2")
    assert "asked_tests" in kinds(digest_of(added.end()))


def test_one_session_is_a_request_two_are_a_habit(db: Database) -> None:
    promoter = Promoter(db, novelty=Novelty(HashingEmbedder()))
    promoter.promote(digest_of(session("s1").end()))
    assert db.reads.conn().execute("SELECT count(*) FROM memories").fetchall()[0][0] == 0
    promoter.promote(digest_of(session("s2", "do we have tests for the resume path?").end()))
    rows = db.reads.conn().execute(
        "SELECT content, candidate, type FROM memories WHERE json_extract(metadata, '$.signal') = 'asked_tests'"
    ).fetchall()
    assert len(rows) == 1 and rows[0][1] == 0 and rows[0][2] == "preference"
    assert rows[0][0].startswith("Add tests with each code change here") and "resume path?" in rows[0][0]
    # learned, not volunteered: no trigger (two blind judges found it noise before every first change)
    assert db.reads.conn().execute("SELECT count(*) FROM memory_triggers").fetchall()[0][0] == 0


REVIEW = "can we double check we are not having test duplication now?"


def reviewed(sid: str, review: str = REVIEW, *, wrote: str = "cmd/cli/resume_test.go") -> Seq:
    """A turn that wrote code and tests, then the user's words about them."""
    return Seq(sid).user("make resume work on detached heads").edit("cmd/cli/resume.go").edit(wrote).user(review)


def test_the_users_words_about_tests_just_written_are_review_evidence() -> None:
    found = kinds(digest_of(reviewed("r1").end()))["reviewed_tests"]
    assert len(found) == 1 and found[0].data["text"] == REVIEW
    assert found[0].data["triggers"] == [{"kind": "edit", "key": "<tests>"}]
    # a remark counts as much as a question
    remark = "those tests are just testing that writing the metadata works..."
    assert kinds(digest_of(reviewed("r2", remark).end()))["reviewed_tests"][0].data["text"] == remark


def test_review_near_misses_are_not() -> None:
    # the turn wrote no test: words about tests then are another matter (asked_tests, or a report)
    assert "reviewed_tests" not in kinds(digest_of(reviewed("n1", wrote="cmd/cli/other.go").end()))
    # a run reported, a task named, a command quoted: not the tests themselves
    for text in ("mise run test:ci is failing", "`go test ./...` fails on my machine", 'run "make test" again',
                 "Can we not commit the doc/testing docs?"):
        assert "reviewed_tests" not in kinds(digest_of(reviewed("n2", text).end())), text
    # words about running the tests (a verb of execution in the sentence that names them) are about a
    # run, not about what the tests check; a review in another sentence of the same words still counts
    for text in ("run the tests", "don't run CI or integration tests, too slow.",
                 "but while that test is running my local git config is messed up, right?", "relance les tests"):
        assert "reviewed_tests" not in kinds(digest_of(reviewed("n6", text).end())), text
    both = "are these tests useful? Run them after."
    assert kinds(digest_of(reviewed("n7", both).end()))["reviewed_tests"][0].data["text"] == both
    # words about something else, and the review's turn over before the user spoke of tests
    assert "reviewed_tests" not in kinds(digest_of(reviewed("n3", "looks good, commit it").user(REVIEW).end()))
    # a subagent's brief is not the user
    sub = Seq("n4", "subagent", parent="p").user("x").edit("a_test.go").user(REVIEW)
    assert "reviewed_tests" not in kinds(digest_of(sub.end()))
    # one piece of evidence a session
    twice = reviewed("n5").edit("cmd/cli/resume_test.go").user("are the first two tests really testing something?")
    assert len(kinds(digest_of(twice.end()))["reviewed_tests"]) == 1


def test_two_sessions_of_review_are_a_habit_with_its_trigger(db: Database) -> None:
    promoter = Promoter(db, novelty=Novelty(HashingEmbedder()))
    promoter.promote(digest_of(reviewed("s1").end()))
    assert db.reads.conn().execute("SELECT count(*) FROM memories").fetchall()[0][0] == 0
    promoter.promote(digest_of(reviewed("s2", "hmm are the first two tests really testing something?").end()))
    rows = db.reads.conn().execute(
        "SELECT id, content, candidate FROM memories WHERE json_extract(metadata, '$.signal') = 'reviewed_tests'"
    ).fetchall()
    assert len(rows) == 1 and rows[0][2] == 0 and "really testing something?" in rows[0][1]
    triggers = db.reads.conn().execute("SELECT kind, key FROM memory_triggers WHERE memory_id = ?",
                                       (rows[0][0],)).fetchall()
    assert [tuple(t) for t in triggers] == [("edit", "<tests>")]


def _review(content: str, *words: str) -> Memory:
    return Memory(id=1, type="preference", content=content, metadata={"signal": REVIEWED_TESTS},
                  provenance=[{"session_id": f"s{i}", "evidence": [w]} for i, w in enumerate(words)])


def test_the_review_habit_is_said_in_the_users_whole_words_that_came_back() -> None:
    """The quotes sharing the most words with other sessions' first, each its first sentence and
    whole: one too long for what is left of the line is left out; a one-off remark is not said, and
    the subject itself ("tests", "testing" are in every review) is no shared word."""
    from desktop.memory.triggers.untested import REVIEW_LEAD, in_users_words
    from desktop.memory.triggers.warn import LINE_CHARS

    oldest = "can you add an explicit test for this?"
    long_one = ("ok, looking at the tests I doubt they duplicate nothing from the standard library, "
                + "maybe we only need one of them " * 12)
    said = in_users_words(_review(
        f'The user reviews the tests an agent writes here: after tests were written, they asked "{oldest}"',
        oldest, "are we testing the standard library here? I think so.", long_one,
        "can we double check we are not having test duplication now?",
        "hmm are these tests duplicating the standard library? Let me know."))
    assert said is not None and said.content.startswith(REVIEW_LEAD) and len(said.content) <= LINE_CHARS
    assert said.content.index("duplicating the standard library?\"") < said.content.index("standard library here?")
    assert "Let me know" not in said.content and "I think so" not in said.content  # first sentences only
    assert "doubt" not in said.content and "…" not in said.content  # did not fit whole: left out, not cut
    assert "explicit test" not in said.content
    assert said.content.index("standard library here?") < said.content.index("test duplication now?")
    assert in_users_words(_review(f'The user reviews the tests an agent writes here: after tests were written, '
                                  f'they asked "{oldest}"', oldest, "are the tests testing something?")) is None


def test_another_session_rewords_the_stored_habit_by_the_concern_that_came_back(db: Database) -> None:
    """Stored from the first session's remark; once a concern comes back, the stored words are it
    (the audit keeps the first); a person's wording stays."""
    promoter = Promoter(db, novelty=Novelty(HashingEmbedder()))
    promoter.promote(digest_of(reviewed("w1", "can you add an explicit test for this?").end()))
    promoter.promote(digest_of(reviewed("w2", "are these tests duplicating the standard library?").end()))
    sql = "SELECT id, content FROM memories WHERE json_extract(metadata, '$.signal') = 'reviewed_tests'"
    [(mid, first)] = db.reads.conn().execute(sql).fetchall()
    assert "duplicating" in first  # nothing came back yet: the newest session's words, as promotion gave them
    promoter.promote(digest_of(reviewed("w3", "do these tests duplicate the standard library checks again?").end()))
    [(_, now)] = db.reads.conn().execute(sql).fetchall()
    assert "tests duplicate the standard library checks again?" in now and "duplicating the standard library?" in now
    assert "explicit test" not in now
    edits = db.reads.conn().execute("SELECT count(*) FROM audit_log WHERE memory_id = ? AND action = 'edit'",
                                    (mid,)).fetchall()[0][0]
    assert edits >= 1


def test_a_reworded_review_habit_keeps_the_persons_words() -> None:
    from desktop.memory.triggers.untested import in_users_words

    person = "Tests here must not duplicate each other."
    said = in_users_words(_review(person, "the old words", "is there duplication again? check it",
                                  "can we double check we are not having test duplication now?"))
    assert said is not None and said.content.startswith("Tests here must not duplicate each other; in other sessions: ")
    assert "test duplication now?" in said.content and "old words" not in said.content
    alone = in_users_words(_review(person, "the old words"))
    assert alone is not None and alone.content == person  # said in the person's words, none came back
    from desktop.memory.triggers.untested import reworded_review

    assert reworded_review(person, [{"evidence": ["is there duplication again? check it"]},
                                    {"evidence": ["double check the duplication"]}]) == ""  # never replaced


def test_a_rewording_another_memory_already_says_leaves_the_habit_and_the_promotion_goes_on(db: Database) -> None:
    from desktop.memory.service import MemoryService
    from desktop.memory.triggers.untested import reworded_review

    promoter = Promoter(db, novelty=Novelty(HashingEmbedder()))
    promoter.promote(digest_of(reviewed("k1", "are these tests duplicating the standard library?").end()))
    promoter.promote(digest_of(reviewed("k2", "are these tests duplicating the standard library?").end()))
    sql = "SELECT id, content, provenance FROM memories WHERE json_extract(metadata, '$.signal') = 'reviewed_tests'"
    [(mid, before, prov)] = db.reads.conn().execute(sql).fetchall()
    third = "do these tests duplicate the standard library checks again?"
    clash = reworded_review(before, [*json.loads(prov), {"evidence": [third]}])
    assert clash
    MemoryService(db).add(clash, type="note", source="user_taught").result(10)  # a person wrote those very words
    result = promoter.promote(digest_of(reviewed("k3", third).edit("cmd/cli/x.go").end()))
    assert mid in result.reinforced
    assert db.reads.conn().execute("SELECT content FROM memories WHERE id = ?", (mid,)).fetchall()[0][0] == before
