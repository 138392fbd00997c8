"""A retry that only added a flag and got past the first run's error (issue 26, item 3): the flag is
needed, even when the retry then failed for another reason."""

from __future__ import annotations

from obs_helpers import Seq, digest_of, kinds

from desktop.memory.observer.novelty import HashingEmbedder, Novelty
from desktop.memory.observer.promotion import Promoter
from desktop.memory.observer.templates import render
from desktop.memory.store.database import Database
from desktop.memory.triggers.model import Trigger, matches, shape_of

NO_FILES = ("# example.com/app/itest\npackage example.com/app/itest: build constraints exclude all Go files in "
            "/home/u/app/itest\nFAIL\texample.com/app/itest [setup failed]\nFAIL\n")
TEST_FAILED = ("=== RUN   TestX\n    x_test.go:12: got 1, want 2\n--- FAIL: TestX (0.01s)\nFAIL\n"
               "FAIL\texample.com/app/itest\t0.2s\n")


def _fixes(s: Seq) -> list:
    return kinds(digest_of(s.end())).get("command_fix", [])


def test_a_flag_that_got_past_the_error_is_learned_though_the_retry_failed_further_on() -> None:
    """The pipe hid both exit codes; the retry's tests failed, but the build error was gone."""
    s = Seq().bash("go test -v ./app/itest -run TestX 2>&1 | tail -30", NO_FILES)
    s.bash("go test -tags=integration -v ./app/itest -run TestX 2>&1 | tail -40", TEST_FAILED)
    fixes = _fixes(s)
    assert len(fixes) == 1
    fix = fixes[0]
    assert fix.data["past"] and fix.data["worked"].startswith("go test -tags=integration")
    assert "build constraints exclude all Go files" in fix.data["error"]
    text = render(fix).content
    assert text.startswith("`go test` on `app/itest` needs `-tags=integration` here: without it, `go test -v")
    assert "got past that" in text and "works" not in text
    trigger = Trigger.from_json(fix.data["triggers"][0])
    assert trigger is not None

    def run(command: str) -> bool:
        return matches(trigger, shape_of("Bash", {"command": command}, []))

    assert run("go test -c ./app/itest/") and run("go test -run TestY ./app/itest 2>&1 | tail")
    assert not run("go test -tags integration ./app/itest")   # given the flag, in either form
    assert not run("go test ./cmd/...")                     # another target: the error never named it
    assert not run("go vet ./itest")


def test_the_same_error_in_the_retry_or_another_change_is_no_lesson() -> None:
    s = Seq().bash("go test ./itest 2>&1 | tail", NO_FILES)
    s.bash("go test -v ./itest 2>&1 | tail", NO_FILES)  # the flag did not get past it
    assert _fixes(s) == []
    s = Seq().bash("go test ./itest 2>&1 | tail", NO_FILES)
    s.bash("go test -tags=integration ./other", "ok")  # another target too: not the same run
    assert _fixes(s) == []
    s = Seq().bash("go run ./cmd/app list", "Error: unknown command\n  -h, --help   help for list\n", error=True)
    s.bash("go run ./cmd/app list --json", "[]")  # "list" is a word of the run, not a path it was given
    assert _fixes(s) == []
    s = Seq().bash("go test ./itest 2>&1 | tail", NO_FILES)
    for _ in range(5):
        s.bash("ls")
    s.bash("go test -tags=integration ./itest", "ok")  # too far apart to be a retry
    assert _fixes(s) == []


def test_a_failure_the_pipe_hid_is_no_success(db: Database) -> None:
    """``cmd | tail`` exits with tail's status: a run whose output shows it failed is no recipe, and no
    run that contradicts a lesson saying it fails."""
    s = Seq().bash("pytest -q 2>&1 | tail -5", "E   AssertionError\n1 failed, 3 passed in 0.2s")
    s.bash("ruff check . | head", "ok")
    digest = digest_of(s.end())
    assert digest.succeeded == ["ruff check . | head"]
    Promoter(db, novelty=Novelty(HashingEmbedder())).promote(digest)
    rows = db.reads.conn().execute("SELECT content FROM memories").fetchall()
    assert not any("pytest" in r[0] for r in rows)


def test_a_run_that_found_nothing_to_run_is_no_success_and_a_flag_can_get_past_it(db: Database) -> None:
    """``go test ./x/...`` without the tag: "matched no packages", exit 0. It contradicts no lesson and
    teaches no recipe; the retry with the tag that ran is the lesson."""
    s = Seq().bash("go test -v ./app/itest/... -run TestY 2>&1 | head",
                   'go: warning: "./app/itest/..." matched no packages\nno packages to test')
    s.bash("go test -v -tags integration ./app/itest/... -run TestY 2>&1 | head", "PASS\nok  \tex.com/app/itest\t0.8s")
    digest = digest_of(s.end())
    fix = kinds(digest)["command_fix"][0]
    assert fix.data["flag"] == "-tags integration" and fix.data["target"] == "app/itest"
    assert all("itest/..." not in c or "-tags" in c for c in digest.succeeded)
