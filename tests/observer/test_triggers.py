"""Each trigger kind fires on the call it is about and stays silent on near misses (issue 25)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.memory.store.database import Database
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.triggers.derive import rule_triggers, triggers_of
from desktop.memory.triggers.index import ReindexTriggers, needs_reindex
from desktop.memory.triggers.model import COMMAND, EDIT, PATH, Trigger, matches, shape_of
from desktop.memory.triggers.warn import warnings_for


def bash(command: str, cwd: str = "") -> object:
    return shape_of("Bash", {"command": command}, [], cwd)


@pytest.mark.parametrize(("command", "fires"), [
    ("git show abc123 --no-stat", True),
    ("cd sub && git show HEAD --no-stat 2>&1 | head", True),
    ("git show abc123 --stat", False),          # the fix, not the failure
    ("git log --no-stat", False),               # another subcommand
    ("echo git show --no-stat", False),         # only words of another program
])
def test_command_trigger(command: str, fires: bool) -> None:
    trig = Trigger(COMMAND, "git", ("show",), ("--no-stat",))
    assert matches(trig, bash(command)) is fires  # type: ignore[arg-type]


def test_path_trigger(tmp_path: Path) -> None:
    trig = Trigger(PATH, "cmd", path="cmd/cli/commands")
    grep = shape_of("Grep", {"pattern": "start"}, ["cmd/cli/commands"])
    near = shape_of("Grep", {"pattern": "start"}, ["cmd/cli/commandsx"])
    edit = shape_of("Edit", {}, ["cmd/cli/commands/x.go"])
    assert matches(trig, grep) and not matches(trig, near) and not matches(trig, edit)
    gone = Trigger(PATH, "cmd", path="cmd/cli/commands", missing=True)
    assert matches(gone, grep, tmp_path)
    (tmp_path / "cmd/cli/commands").mkdir(parents=True)
    assert not matches(gone, grep, tmp_path)  # it exists again: the lesson no longer holds


def test_edit_trigger() -> None:
    by_kind = Trigger(EDIT, ".go")
    one_file = Trigger(EDIT, "schema.sql", path="db/schema.sql")
    assert matches(by_kind, shape_of("Edit", {}, ["cmd/a.go"]))
    assert not matches(by_kind, shape_of("Read", {}, ["cmd/a.go"]))
    assert not matches(by_kind, shape_of("Edit", {}, ["cmd/a.gox"]))
    assert matches(one_file, shape_of("Write", {}, ["db/schema.sql"]))
    assert not matches(one_file, shape_of("Write", {}, ["db/schema.sql.bak"]))


def test_a_checkers_rule_fires_at_the_checker_not_before_any_edit_of_a_file_kind() -> None:
    from desktop.memory.triggers.derive import triggers_of

    lint = Trigger(COMMAND, "mise", ("run", "lint"))
    stored = {"signal": "check_rule", "triggers": [lint.as_json(), Trigger(EDIT, ".go").as_json(),
                                                   Trigger(EDIT, "x.go", path="cmd/x.go").as_json()]}
    found = triggers_of("gotcha", "`mise run lint` reports nilerr ...", "observer_inferred", stored)
    assert lint in found and Trigger(EDIT, ".go") not in found  # lessons stored before the change too
    assert Trigger(EDIT, "x.go", path="cmd/x.go") in found
    other = {"signal": "error_fix", "triggers": [Trigger(EDIT, ".go").as_json()]}
    assert triggers_of("gotcha", "...", "observer_inferred", other) == [Trigger(EDIT, ".go")]


@pytest.mark.parametrize(("rule", "expected"), [
    ("Never run `git push --force` on main.", [Trigger(COMMAND, "git", ("push",), ("--force",))]),
    ("Use `pnpm install`, not `npm install`.", [Trigger(COMMAND, "npm", ("install",))]),
    ("Ne lance jamais `git rebase -i`.", [Trigger(COMMAND, "git", ("rebase",), ("-i",))]),
    # a recommendation fires before a run of the same kind that does not follow it
    ("Run `mise run test:ci` before saying done.", [Trigger(COMMAND, "mise", ("run",), ("test",),
                                                            unless=("test:ci",))]),
    ("Use `git status`, it is cheap.", []),                 # nothing a run could fail to follow
])
def test_rule_commands(rule: str, expected: list[Trigger]) -> None:
    assert [t for t in rule_triggers(rule) if t.kind == COMMAND] == expected


@pytest.mark.parametrize(("command", "fires"), [
    ("mise run test", True), ("cd sub && mise run test 2>&1", True),
    ("mise run test:ci", False),   # already follows the rule
    ("mise run lint", False),      # another task: not what the rule governs
])
def test_a_recommended_command_fires_before_a_run_that_does_not_follow_it(command: str, fires: bool) -> None:
    [trig] = rule_triggers("Run `mise run test:ci` before saying the work is done.")
    assert matches(trig, bash(command)) is fires  # type: ignore[arg-type]


def test_a_forbidden_folder_is_the_trigger_not_every_run_of_the_command() -> None:
    found = rule_triggers("Never `git add` the `claude-dev-log-diary/` folder: it holds huge transcripts.")
    assert not any(t.kind == COMMAND for t in found)
    assert matches(found[0], bash("git add claude-dev-log-diary/day-1.md"))  # type: ignore[arg-type]
    assert not any(matches(t, bash("git add src/app.py")) for t in found)  # type: ignore[arg-type]


def test_rule_paths_govern_reads_and_edits() -> None:
    found = rule_triggers("The schema snapshot `db/schema.sql` must never be edited.")
    assert Trigger(EDIT, "schema.sql", path="db/schema.sql") in found
    assert Trigger(PATH, "db", path="db/schema.sql") in found


def test_only_the_users_words_get_content_triggers() -> None:
    text = "Never run `git push --force` on main."
    assert triggers_of("preference", text, "user_taught", {})
    assert not triggers_of("preference", text, "observer_inferred", {})  # an agent's paraphrase
    explicit = {"triggers": [Trigger(COMMAND, "make", ("test",)).as_json()]}
    assert triggers_of("gotcha", "x", "observer_inferred", explicit) == [Trigger(COMMAND, "make", ("test",))]


def test_index_follows_adds_edits_and_deletes(db: Database) -> None:
    from desktop.memory.service import MemoryService

    mem = MemoryService(db)
    rule = mem.add(NewMemory(content="Never run `git push --force`.", type="preference")).result(10).id
    lesson = mem.add(NewMemory(content="`git show --no-stat` fails", type="gotcha", source="observer_inferred",
                               metadata={"signal": "command_fix", "triggers": [
                                   Trigger(COMMAND, "git", ("show",), ("--no-stat",)).as_json()]})).result(10).id
    waiting = mem.add(NewMemory(content="Never run `make deploy`, it is not wanted.", type="preference",
                                candidate=True)).result(10).id
    conn = db.reads.conn()
    hits = warnings_for(conn, mem, bash("git push --force origin main"), None)  # type: ignore[arg-type]
    assert [w.memory.id for w in hits] == [rule]
    exact = warnings_for(conn, mem, bash("git show HEAD --no-stat"), None)  # type: ignore[arg-type]
    assert [w.memory.id for w in exact] == [lesson] and exact[0].exact
    assert warnings_for(conn, mem, bash("make deploy"), None) == []  # type: ignore[arg-type]  # a candidate
    mem.edit(rule, {"content": "Never run `git push --force-with-lease` either."}).result(10)
    assert warnings_for(conn, mem, bash("git push --force origin"), None) == []  # type: ignore[arg-type]
    mem.forget(lesson).result(10)
    assert warnings_for(conn, mem, bash("git show HEAD --no-stat"), None) == []  # type: ignore[arg-type]
    assert waiting


def test_reindex_after_a_new_derivation(db: Database) -> None:
    from desktop.memory.service import MemoryService

    MemoryService(db).add(NewMemory(content="Stay out of `logs/`.", type="preference")).result(10)
    conn = db.reads.conn()
    assert not needs_reindex(conn)  # the open derived the (empty) index already
    db.writer.run(FnReset())
    assert conn.execute("SELECT count(*) FROM memory_triggers").fetchall()[0][0] == 0
    assert needs_reindex(conn)
    assert db.writer.run(ReindexTriggers()) == 1
    assert conn.execute("SELECT count(*) FROM memory_triggers").fetchall()[0][0] == 2
    assert not needs_reindex(conn)


class FnReset(ReindexTriggers):
    """Empties the index and forgets its version (as an older database would have it)."""

    name = "test_empty_triggers"

    def apply(self, tx):  # type: ignore[no-untyped-def]
        tx.execute("DELETE FROM memory_triggers")
        tx.execute("DELETE FROM project_meta WHERE key = 'triggers_version'")
        return 0
