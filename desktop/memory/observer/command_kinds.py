"""What a shell command is for (test, lint, format, build, install, migrate, deploy, run), and whether
its output shows it failed, read from the command line and the output alone.

Recipes (``recipes``) are learned from these kinds; the hooks decide from them whether a check just
passed (``triggers/untested``). This module only uses regular expressions, so a hook on the agent's
hot path can load it without the observer.
"""

from __future__ import annotations

import re
from typing import Final

#: Programs that show, fetch or search text, never check the code here (``gh run view`` prints a CI run's
#: log: its diagnostics are that run's, and viewing another run later proves no fix).
SHOWS_TEXT: Final = frozenset({"git", "gh", "echo", "cat", "grep", "rg", "ls", "which", "find"})

_TASK_RUNNER: Final = re.compile(
    r"^(?:mise\s+(?:run|r)|make|just|task|npm\s+run|pnpm(?:\s+run)?|yarn(?:\s+run)?|bun\s+run|poe|"
    r"uv\s+run\s+poe|nox\s+-s|tox\s+-e|rake|invoke|hatch\s+run|pdm\s+run|composer)\s+([\w:.-]+)")
_TARGET_KINDS: Final = (
    ("format", re.compile(r"\b(?:fmt|format|prettier|fix)\b")), ("lint", re.compile(r"\b(?:lint|check|vet|typecheck|"
                                                                                    r"types|mypy|clippy)\b")),
    ("test", re.compile(r"\btest|spec\b|\bcheck:ci\b|\bci\b")), ("build", re.compile(r"\b(?:build|compile|dist)\b")),
    ("install", re.compile(r"\b(?:install|setup|bootstrap|deps)\b")), ("migrate", re.compile(r"\bmigrat")),
    ("deploy", re.compile(r"\b(?:deploy|release|publish)\b")), ("run", re.compile(r"\b(?:dev|start|serve|run)\b")),
)
_PROGRAMS: Final = (
    ("test", re.compile(r"^(?:pytest|py\.test|jest|vitest|mocha|tox|nox|rspec|phpunit|ctest|cargo\s+(?:test|nextest)|"
                        r"go\s+test|(?:python3?|uv\s+run(?:\s+python3?)?)\s+-m\s+(?:pytest|unittest)|uv\s+run\s+pytest|"
                        r"poetry\s+run\s+pytest|(?:npm|pnpm|yarn|bun)\s+test|dotnet\s+test|mvn\s+test|gradle\w*\s+test|"
                        r"swift\s+test|mix\s+test|bundle\s+exec\s+rspec)\b")),
    ("format", re.compile(r"^(?:gofmt|goimports|(?:go|cargo)\s+fmt|ruff\s+format|black|isort|prettier|rustfmt|"
                          r"clang-format|(?:uv\s+run\s+)?ruff\s+format|biome\s+format)\b")),
    ("lint", re.compile(r"^(?:(?:uv\s+run\s+|poetry\s+run\s+)?(?:ruff(?:\s+check)?|mypy|pyright|flake8|pylint)|eslint|"
                        r"golangci-lint|go\s+vet|staticcheck|cargo\s+clippy|tsc\s+--noEmit|pre-commit\s+run|"
                        r"shellcheck|hadolint|biome\s+(?:lint|check))\b")),
    ("build", re.compile(r"^(?:go\s+build|cargo\s+build|tsc(?:\s+-p\s+\S+|\s+-b)?$|vite\s+build|docker\s+build|"
                         r"python3?\s+-m\s+build|uv\s+build|mvn\s+package|gradle\w*\s+build|dotnet\s+build|"
                         r"swift\s+build|goreleaser)\b")),
    ("install", re.compile(r"^(?:uv\s+(?:sync|pip\s+install)|pip3?\s+install\s+(?:-e|-r)|(?:npm|pnpm|yarn|bun)\s+"
                           r"(?:install|ci|i)\b|poetry\s+install|pre-commit\s+install|bundle\s+install|"
                           r"go\s+mod\s+download|cargo\s+fetch|mise\s+install|brew\s+bundle)")),
    ("migrate", re.compile(r"^(?:alembic\s+upgrade|python3?\s+manage\.py\s+migrate|prisma\s+migrate|knex\s+migrate|"
                           r"flyway|rails\s+db:migrate|sqlx\s+migrate)\b")),
    ("deploy", re.compile(r"^(?:gh\s+release\s+create|twine\s+upload|npm\s+publish|kubectl\s+apply|helm\s+upgrade|"
                          r"vercel|netlify\s+deploy|fly\s+deploy|cargo\s+publish)\b")),
    ("run", re.compile(r"^(?:uvicorn|flask\s+run|cargo\s+run|docker\s+compose\s+up|docker-compose\s+up|"
                       r"python3?\s+manage\.py\s+runserver|(?:npm|pnpm|yarn)\s+start)\b")),
)
#: Invocations that ask a tool about itself: they show a tool exists, not how the project works.
_QUERY: Final = re.compile(r"(?:^|\s)(?:--help|-h|--version|-V|help|version|--list|-l|linters|config)(?:\s|$)")
#: A test runner told to run nothing: compile the tests (``go test -c``, ``cargo test --no-run``) or
#: list them (``pytest --collect-only``, ``go test -list .``, ``jest --listTests``). Such a run
#: passing says nothing about the tests, and it is no recipe for running them (blind judges: "Run
#: the tests with `go test -c …`" was noise).
_NO_RUN: Final = re.compile(r"^(?:go\s+test\b.*\s-(?:c|list)\b|cargo\s+test\b.*\s--no-run\b|"
                            r"(?:(?:uv|poetry)\s+run\s+|python3?\s+-m\s+)?pytest\b.*\s--(?:collect-only|co)\b|"
                            r"(?:npx\s+)?(?:jest|vitest)\b.*\s--(?:listTests|list)\b)")
#: In an output whose exit status was hidden: signs the run failed all the same.
#: A checker's own summary of what it found counts too (golangci-lint's "2 issues:", ruff's, mypy's
#: and tsc's "Found 3 errors", eslint's "✖ 5 problems", a task runner's "[lint] ERROR").
_FAILED_OUTPUT: Final = re.compile(r"(?m)^(?:FAIL|FAILED|ERROR|E\s{2,})\b|\bpanic:|Traceback \(most recent|npm ERR!|"
                                   r"\b\d+ failed\b|(?i:\berror\[|\berror:|exit (?:status|code) [1-9])|"
                                   r"^(?:[1-9]\d* issues?:|Found [1-9]\d* (?:errors?|problems?)\b|"
                                   r"✖ [1-9]\d* problems?\b|\[[\w:.-]+\] ERROR\b)")


#: A runner's own words for a run that matched nothing to run (go's "matched no packages", pytest's
#: "collected 0 items", unittest's "Ran 0 tests", jest's "No tests found"): it exited 0 and proved nothing.
_RAN_NOTHING: Final = re.compile(r"matched no packages|no packages to test|\bcollected 0 items\b|\bRan 0 tests\b|"
                                 r"\bNo tests found\b|\bno tests ran\b", re.I)


def ran_nothing(output: str) -> bool:
    """True when a run's output says it found nothing to run (a test selector or a package path
    that matched nothing): it is no evidence that the command works."""
    return _RAN_NOTHING.search(output[-4000:]) is not None


def shows_failure(output: str) -> bool:
    """True when a command's output shows a failure (for a run whose exit status a pager or a
    ``|| true`` hid)."""
    return _FAILED_OUTPUT.search(output[-8000:]) is not None


def category(command: str) -> str | None:
    """The kind of a command (test, lint, format, build, install, migrate, deploy, run), or None."""
    if _QUERY.search(command) or _NO_RUN.search(command):
        return None
    m = _TASK_RUNNER.match(command)
    if m:
        target = m.group(1).lower()
        return next((kind for kind, rx in _TARGET_KINDS if rx.search(target)), None)
    return next((kind for kind, rx in _PROGRAMS if rx.match(command)), None)


#: What tells how a project provides its tools (an environment manager, a package manager other than
#: the ecosystem's default, a task runner): a command that starts with one is the project's own way.
_PROJECT_WAY: Final = re.compile(r"^(?:uv|uvx|poetry|pipenv|pdm|hatch|python3?|npx|pnpm|yarn|bun|bunx|bundle|"
                                 r"mise|make|just|task|nix|docker|gradlew|\./)\b")
#: The kinds whose toolchain program an agent runs unprompted to check its work.
_CHECK_KINDS: Final = frozenset({"test", "lint", "format", "build"})
#: A path or package pattern under the project root (``.``, ``./...``, ``./cmd/app``, ``tests/``).
_ROOT_PATH: Final = re.compile(r"\.(?:/[\w.*/-]*)?|[\w*-][\w.*-]*/[\w.*/-]*")
#: One to three single-letter switches (``-v``, ``-xvs``).
_SWITCHES: Final = re.compile(r"-[A-Za-z]{1,3}")


def toolchain_default(command: str) -> bool:
    """True when ``command`` is a test, lint, format or build program of its toolchain run the way any
    agent runs it unprompted (``go build ./...``, ``pytest -xvs``, ``cargo test``): nothing in it is
    this project's choice.

    A task runner's target (``make test``, ``mise run lint``), a tool run through the project's
    environment (``uv run pytest``, ``npx vitest``), a chain, a long option, an option's value
    (``-tags=integration``, ``-o ./bin/app``) or a path outside the root make it the project's way."""
    command = " ".join(command.split())
    if not command or "&&" in command or ";" in command or _PROJECT_WAY.match(command) or _TASK_RUNNER.match(command):
        return False
    kind = category(command)
    program = next((m for k, rx in _PROGRAMS if k == kind and (m := rx.match(command))), None)
    if kind not in _CHECK_KINDS or program is None:
        return False
    words = command[program.end():].split()
    for i, word in enumerate(words):
        if _SWITCHES.fullmatch(word):
            if i + 1 < len(words) and not words[i + 1].startswith("-"):
                return False  # a switch and its value (``-o ./bin/app``), or a selection: the project's
        elif not _ROOT_PATH.fullmatch(word):
            return False
    return True
