"""The shape of a shell command: what runs, with which subcommand and flags, where (issue 25)."""

from __future__ import annotations

import pytest

from desktop.memory.observer.command_shape import parse, resolve_dir


def test_wrappers_env_and_redirections_fall_away() -> None:
    cmd = parse("cd cmd/cli && FOO=1 timeout 60 go test ./... -run TestX 2>&1 | tail -20")
    main = cmd.main()
    assert main is not None and main.program == "go" and main.words == ("test",)
    assert main.has("-run") and not main.has("2")
    assert cmd.cwd == "cmd/cli" and cmd.leaves_cwd == ""
    assert [s.piped for s in cmd.segments] == [False, True]


@pytest.mark.parametrize(("line", "program", "words", "flags"), [
    ("git show 8312232 --no-stat", "git", ("show",), ("--no-stat",)),
    ("gh pr diff 12 --stat", "gh", ("pr", "diff"), ("--stat",)),
    ("sudo -u bob env A=b python -m pytest -k foo tests/", "pytest", (), ("-k",)),
    ("mise run test:ci", "mise", ("run", "test:ci"), ()),
    ("bash -lc 'cd web && npm run build'", "npm", ("run", "build"), ()),
    ("/usr/local/bin/ruff check --fix .", "ruff", ("check",), ("--fix",)),
])
def test_program_subcommand_and_flags(line: str, program: str, words: tuple[str, ...],
                                      flags: tuple[str, ...]) -> None:
    seg = parse(line).main()
    assert seg is not None and (seg.program, seg.words, seg.flags) == (program, words, flags)


def test_a_lone_cd_moves_the_shell() -> None:
    assert parse("cd cmd/entire/cli/strategy").leaves_cwd == "cmd/entire/cli/strategy"
    assert parse("cd a && ls").leaves_cwd == ""


def test_unparseable_command_has_no_segments() -> None:
    assert parse('echo "unclosed').segments == ()


def test_flag_matching_takes_the_value_form() -> None:
    seg = parse("pytest --maxfail=2 -x").main()
    assert seg is not None and seg.has("--maxfail") and seg.has("-x") and not seg.has("--max")


def test_resolve_dir() -> None:
    assert resolve_dir("cmd/cli", "../x") == "cmd/x"
    assert resolve_dir("", "web") == "web"
    assert resolve_dir("a", "/abs") == "/abs"
