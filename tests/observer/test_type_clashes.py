"""A type of the project's own mixed up with its plain type (issue 26): learned when two sessions'
compilers report the same pair, never from one session, never from a mix-up of two named types, a
missing check (``None``, ``undefined``) or words that only quote a compiler."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from obs_helpers import Seq, digest_of, kinds

from desktop.memory.observer.events import AgentEvent, SessionStart
from desktop.memory.observer.novelty import HashingEmbedder, Novelty
from desktop.memory.observer.observer import Observer, SessionDigest
from desktop.memory.observer.promotion import Promoter
from desktop.memory.observer.templates import render
from desktop.memory.observer.type_clashes import MAX_PER_SESSION, clash, declared_in
from desktop.memory.store.database import Database

GO = ("Exit code 1\n# entire.io/cli/cmd/entire/cli/strategy\n"
      "cmd/entire/cli/strategy/cleanup.go:299:35: cannot use checkpointID (variable of type string) as "
      "id.CheckpointID value in argument to paths.CheckpointPath\n"
      "cmd/entire/cli/resume.go:371:32: cannot use checkpointID (variable of string type id.CheckpointID) as "
      "string value in argument to slog.String\n")


@pytest.mark.parametrize(("line", "expected"), [
    ("x.go:1:2: cannot use id (variable of type string) as id.CheckpointID value in assignment",
     ("id.CheckpointID", "string", ".go")),
    ("x.go:1:2: cannot use cp.ID (variable of string type id.CheckpointID) as string value in map index",
     ("id.CheckpointID", "string", ".go")),
    ("x.go:4:5: cannot use 3 (constant 3 of int type Port) as int value in return statement", ("Port", "int", ".go")),
    ("x.go:3:9: invalid operation: a == b (mismatched types id.CheckpointID and string)",
     ("id.CheckpointID", "string", ".go")),
    ("src/a.ts(4,7): error TS2345: Argument of type 'string' is not assignable to parameter of type 'UserId'.",
     ("UserId", "string", ".ts")),
    ("src/a.ts:4:7 - error TS2322: Type 'number' is not assignable to type 'Cents'.", ("Cents", "number", ".ts")),
    ('app/x.py:9: error: Argument 1 to "load" has incompatible type "str"; expected "AccountId"  [arg-type]',
     ("AccountId", "str", ".py")),
    ('app/x.py:9: error: Incompatible types in assignment (expression has type "int", variable has type '
     '"Port")  [assignment]', ("Port", "int", ".py")),
    ('app/x.py:12: error: Incompatible return value type (got "str", expected "UserId")  [return-value]',
     ("UserId", "str", ".py")),
    ("4 |     let u: UserId = \"ab\".to_string();\n", None),
    ("  |                     ^^^^^^^^^^^^^^^^ expected `UserId`, found `String`", ("UserId", "String", ".rs")),
    ("  |     --------   ^^^^ expected `ids::UserId`, found `&str`", ("ids::UserId", "&str", ".rs")),
    # Two named types, a struct as a string, a pointer, an interface, a missing check, a type parameter,
    # an inference: one bug each, not a type the project keeps apart from its plain one.
    ("x.go:1:2: cannot use r (variable of type *Request) as Handler value in argument", None),
    ("x.go:1:2: cannot use cfg (variable of struct type Config) as string value in argument to f", None),
    ("x.go:1:2: cannot use e (value of type *MyErr) as error value in return statement", None),
    ("x.go:1:2: cannot use v (variable of type any) as Foo value in argument to g: need type assertion", None),
    ("x.go:1:2: cannot use s (variable of type string) as T value in argument to h", None),
    ("x.go:3:9: invalid operation: b == \"x\" (mismatched types byte and untyped string)", None),
    ("src/a.ts(4,7): error TS2322: Type 'undefined' is not assignable to type 'User'.", None),
    ("src/a.ts(4,7): error TS2345: Argument of type 'string' is not assignable to parameter of type 'never'.", None),
    ('app/x.py:9: error: Argument 1 to "f" has incompatible type "None"; expected "Config"  [arg-type]', None),
    # The words without the compiler's place: a test's source or a log quoting them.
    ('    ("x.go:1:2: cannot use id (variable of type string) as id.CheckpointID value in assignment",', None),
    ("note: cannot use id (variable of type string) as id.CheckpointID value in assignment", None),
    ("FAIL\tpkg\t0.1s", None),
])
def test_each_compilers_words_give_the_named_type_and_the_plain_one(
        line: str, expected: tuple[str, str, str] | None) -> None:
    assert clash(line) == expected


def _on_disk(events: list[AgentEvent], root: Path) -> SessionDigest:
    start = events[0]
    assert isinstance(start, SessionStart)
    events[0] = dataclasses.replace(start, cwd=str(root))
    obs = Observer(start.session_id)
    for ev in events:
        obs.observe(ev)
    return obs.finalize()


def test_one_session_counts_once_and_only_a_failed_check_teaches() -> None:
    s = Seq().bash("go build ./...", GO, error=True).bash("go build ./...", GO, error=True)
    found = kinds(digest_of(s.end()))["type_clash"]
    assert len(found) == 1 and found[0].data["type"] == "id.CheckpointID" and found[0].data["plain"] == "string"
    assert found[0].data["error"].startswith("cannot use checkpointID (variable of type string)")  # no place
    # A piped build whose exit code the pipe hid still shows the compiler's lines.
    piped = Seq().bash("go build ./... 2>&1 | head -40", GO.removeprefix("Exit code 1\n") + "\nFAIL")
    assert "type_clash" in kinds(digest_of(piped.end()))
    # The same words in a passing run, or shown by a program that compiles nothing, teach nothing.
    assert "type_clash" not in kinds(digest_of(Seq().bash("go build ./...", GO).end()))
    assert "type_clash" not in kinds(digest_of(Seq().bash("cat build.log", GO, error=True).end()))
    assert "type_clash" not in kinds(digest_of(Seq().bash("gh run view 12 --log", GO, error=True).end()))


def test_a_session_keeps_at_most_a_few_pairs_and_redacts_what_it_quotes() -> None:
    lines = "".join(f"a.go:{i}:1: cannot use v (variable of type string) as pkg.T{i}x value in assignment\n"
                    for i in range(MAX_PER_SESSION + 3))
    assert len(kinds(digest_of(Seq().bash("go vet ./...", lines, error=True).end()))["type_clash"]) == MAX_PER_SESSION
    secret = "ghp_" + "a1B2" * 9
    leaky = f'a.go:1:1: cannot use "{secret}" (untyped string constant) as Token value in assignment\n' \
            f"a.go:2:1: cannot use tok(\"{secret}\") (value of type string) as Token value in assignment\n"
    [sig] = kinds(digest_of(Seq().bash("go build ./...", leaky, error=True).end()))["type_clash"]
    assert secret not in str(sig.data) and secret not in " ".join(sig.evidence)


def test_the_file_that_declares_the_type_is_named_and_a_library_type_teaches_nothing(tmp_path: Path) -> None:
    """The judges of the first wording: "here" without the package's path. Go qualifies a type by its
    package's folder; another folder's type of the same name is not it; two declarations name none; a
    type the project declares nowhere is a library's."""
    pkg = tmp_path / "cmd" / "checkpoint" / "id"
    pkg.mkdir(parents=True)
    (pkg / "id.go").write_text("package id\n\n// CheckpointID is typed.\ntype CheckpointID string\n", encoding="utf-8")
    (tmp_path / "cmd" / "other").mkdir()
    (tmp_path / "cmd" / "other" / "x.go").write_text("package other\ntype CheckpointID int\n", encoding="utf-8")
    (tmp_path / "node_modules" / "id").mkdir(parents=True)
    (tmp_path / "node_modules" / "id" / "y.go").write_text("type CheckpointID string\n", encoding="utf-8")
    assert declared_in(str(tmp_path), "id.CheckpointID", ".go") == "cmd/checkpoint/id/id.go"
    assert declared_in(str(tmp_path), "CheckpointID", ".go") == ""  # two of that name: which one is unknown
    assert declared_in(str(tmp_path / "missing"), "id.CheckpointID", ".go") is None
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "ids.ts").write_text("export type UserId = string & { __brand: 'user' };\n", encoding="utf-8")
    (tmp_path / "app.py").write_text("from typing import NewType\nAccountId = NewType('AccountId', str)\n",
                                     encoding="utf-8")
    assert declared_in(str(tmp_path), "UserId", ".ts") == "src/ids.ts"
    assert declared_in(str(tmp_path), "AccountId", ".py") == "app.py"

    [sig] = [s for s in _on_disk(Seq().bash("go build ./...", GO, error=True).end(), tmp_path).signals
             if s.kind == "type_clash"]
    said = render(sig)
    assert said is not None and sig.files == ["cmd/checkpoint/id/id.go"]
    assert said.content.startswith("`id.CheckpointID` (declared in `cmd/checkpoint/id/id.go`) is a type of its own "
                                   "here, not plain `string`: ")
    library = "a.go:1:1: cannot use n (variable of type int64) as time.Duration value in argument to sleep\n"
    digest = _on_disk(Seq().bash("go build ./...", library, error=True).end(), tmp_path)
    assert not [s for s in digest.signals if s.kind == "type_clash"]
    # A struct, an interface or a class of the project's is no wrapper of the plain type it was mixed with.
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "c.go").write_text("package cfg\ntype Config struct {\n\tPath string\n}\n", encoding="utf-8")
    (tmp_path / "src" / "user.ts").write_text("export interface User { name: string }\n", encoding="utf-8")
    assert declared_in(str(tmp_path), "cfg.Config", ".go", "string") == ""
    assert declared_in(str(tmp_path), "User", ".ts", "string") == ""
    assert declared_in(str(tmp_path), "UserId", ".ts", "string") == "src/ids.ts"
    assert declared_in(str(tmp_path), "AccountId", ".py", "str") == "app.py"
    assert declared_in(str(tmp_path), "id.CheckpointID", ".go", "int") == ""
    struct = "a.go:1:1: cannot use p (variable of type string) as cfg.Config value in argument to load\n"
    digest = _on_disk(Seq().bash("go build ./...", struct, error=True).end(), tmp_path)
    assert not [s for s in digest.signals if s.kind == "type_clash"]


def test_a_log_shown_is_no_build_and_languages_are_kept_apart() -> None:
    for viewer in ("tail -n 100 /tmp/build.log | grep -v warning", "docker compose logs api | tail -40",
                   "diff old.txt new.txt"):
        assert "type_clash" not in kinds(digest_of(Seq().bash(viewer, GO, error=True).end())), viewer
    go = "a.go:1:1: cannot use s (variable of type string) as user.ID value in argument to f\n"
    ts = "src/a.ts(4,7): error TS2345: Argument of type 'string' is not assignable to parameter of type 'ID'.\n"
    [a] = kinds(digest_of(Seq().bash("go build ./...", go, error=True).end()))["type_clash"]
    [b] = kinds(digest_of(Seq().bash("npx tsc --noEmit", ts, error=True).end()))["type_clash"]
    assert a.key != b.key  # a Go ID and a TypeScript ID are not one type seen twice


def test_two_sessions_store_the_type_whatever_its_spelling_one_does_not(db: Database) -> None:
    promoter = Promoter(db, novelty=Novelty(HashingEmbedder()))

    def stored() -> list[tuple[str, str]]:
        return [(str(t), str(c)) for t, c in db.reads.conn().execute(
            "SELECT type, content FROM memories WHERE json_extract(metadata, '$.signal') = 'type_clash' "
            "AND candidate = 0").fetchall()]

    promoter.promote(digest_of(Seq("a").bash("go build ./...", GO, error=True).end()))
    assert stored() == []  # one session's mix-up is that day's refactoring
    inside = "id.go:9:2: cannot use s (variable of type string) as CheckpointID value in return statement\n"
    promoter.promote(digest_of(Seq("b").bash("go test ./cmd/...", inside, error=True).end()))
    rows = stored()
    assert len(rows) == 1 and rows[0][0] == "gotcha"  # Go names it bare inside its own package
    assert rows[0][1].startswith("`CheckpointID` is a type of its own here, not plain `string`: ")


def test_the_declaration_is_the_types_identity(tmp_path: Path) -> None:
    """Go names a type bare inside its package and qualified elsewhere: one type, one key. Two packages'
    types of one name are two."""
    for pkg in ("user", "order"):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / f"{pkg}.go").write_text(f"package {pkg}\n\ntype ID string\n", encoding="utf-8")
    lines = ("user/a.go:1:1: cannot use s (variable of type string) as ID value in return statement\n"
             "api/b.go:2:1: cannot use s (variable of type string) as user.ID value in argument to f\n"
             "api/c.go:3:1: cannot use s (variable of type string) as order.ID value in argument to g\n")
    digest = _on_disk(Seq().bash("go build ./...", lines, error=True).end(), tmp_path)
    keys = sorted(s.key for s in digest.signals if s.kind == "type_clash")
    assert keys == ["type_clash:order/order.go:ID|string", "type_clash:user/user.go:ID|string"]


@pytest.mark.parametrize("output", [
    'app/x.py:12: error: Incompatible return value type (got "str", expected "UserId")  [return-value]\n',
    "src/a.ts(4,7): error TS2322: Type 'number' is not assignable to type 'Cents'.\n",
    "error[E0308]: mismatched types\n  |     ^^^^ expected `UserId`, found `String`\n",
])
def test_each_compilers_report_reaches_the_lesson_through_a_failed_run(output: str) -> None:
    """The whole path from a failed run, not only the line reader: the output's first check for compiler
    words must let every format through (mypy writes "Incompatible" with a capital)."""
    assert "type_clash" in kinds(digest_of(Seq().bash("make check", "Exit code 1\n" + output, error=True).end()))
