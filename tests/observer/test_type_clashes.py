"""A type of the project's own mixed up with its plain type (issue 26): learned when two sessions'
builds fail on the same pair, never from one session, never from a mix-up of two named types."""

from __future__ import annotations

import pytest
from obs_helpers import Seq, digest_of, kinds

from desktop.memory.observer.novelty import HashingEmbedder, Novelty
from desktop.memory.observer.promotion import Promoter
from desktop.memory.observer.type_clashes import clash
from desktop.memory.store.database import Database

GO = ("Exit code 1\n# entire.io/cli/cmd/entire/cli/strategy\n"
      "cmd/entire/cli/strategy/cleanup.go:299:35: cannot use checkpointID (variable of type string) as "
      "id.CheckpointID value in argument to paths.CheckpointPath\n"
      "cmd/entire/cli/resume.go:371:32: cannot use checkpointID (variable of string type id.CheckpointID) as "
      "string value in argument to slog.String\n")


@pytest.mark.parametrize(("line", "expected"), [
    ("x.go:1:2: cannot use id (variable of type string) as id.CheckpointID value in assignment",
     ("id.CheckpointID", "string")),
    ("x.go:1:2: cannot use cp.ID (variable of string type id.CheckpointID) as string value in map index",
     ("id.CheckpointID", "string")),
    ("x.go:3:9: invalid operation: a == b (mismatched types id.CheckpointID and string)",
     ("id.CheckpointID", "string")),
    ("src/a.ts(4,7): error TS2345: Argument of type 'string' is not assignable to parameter of type 'UserId'.",
     ("UserId", "string")),
    ('app/x.py:9: error: Argument 1 to "load" has incompatible type "str"; expected "AccountId"  [arg-type]',
     ("AccountId", "str")),
    ('app/x.py:9: error: Incompatible types in assignment (expression has type "int", variable has type '
     '"Port")  [assignment]', ("Port", "int")),
    ("error[E0308]: mismatched types: expected `UserId`, found `String`", ("UserId", "String")),
    # Two named types, or two plain ones: one bug, not a type the project keeps apart.
    ("x.go:1:2: cannot use r (variable of type *Request) as Handler value in argument", None),
    ("x.go:3:9: invalid operation: b == \"x\" (mismatched types byte and untyped string)", None),
    ("x.go:3:9: invalid operation: err != nil (mismatched types bool and untyped nil)", None),
    ("FAIL\tpkg\t0.1s", None),
])
def test_each_compilers_words_give_the_named_type_and_the_plain_one(line: str,
                                                                   expected: tuple[str, str] | None) -> None:
    assert clash(line) == expected


def test_one_session_counts_once_and_only_a_failed_check_teaches() -> None:
    s = Seq().bash("go build ./...", GO, error=True).bash("go build ./...", GO, error=True)
    found = kinds(digest_of(s.end()))["type_clash"]
    assert len(found) == 1 and found[0].data["type"] == "id.CheckpointID" and found[0].data["plain"] == "string"
    # The same words in a passing run, or printed by cat, are no build that failed.
    assert "type_clash" not in kinds(digest_of(Seq().bash("go build ./...", GO).end()))
    assert "type_clash" not in kinds(digest_of(Seq().bash("cat notes.txt", GO, error=True).end()))


def test_two_sessions_store_the_type_one_does_not(db: Database) -> None:
    promoter = Promoter(db, novelty=Novelty(HashingEmbedder()))

    def stored() -> list[tuple[str, str]]:
        return [(str(t), str(c)) for t, c in db.reads.conn().execute(
            "SELECT type, content FROM memories WHERE json_extract(metadata, '$.signal') = 'type_clash' "
            "AND candidate = 0").fetchall()]

    promoter.promote(digest_of(Seq("a").bash("go build ./...", GO, error=True).end()))
    assert stored() == []  # one session's mix-up is that day's refactoring
    promoter.promote(digest_of(Seq("b").bash("go test ./cmd/...", GO, error=True).end()))
    rows = stored()
    assert len(rows) == 1 and rows[0][0] == "gotcha"
    assert rows[0][1].startswith("`id.CheckpointID` is a type of its own here, not a plain `string`: ")
    assert "checkpointID (variable of type string)" in rows[0][1]  # the compiler's words, not the path
