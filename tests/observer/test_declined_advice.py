"""A lesson that recommends a command waits for the user's review once they decline to let it run."""

from __future__ import annotations

import json
from pathlib import Path

from obs_helpers import Seq, digest_of

from desktop.memory.observer.contradictions import declined_contradicted
from desktop.memory.observer.novelty import HashingEmbedder, Novelty
from desktop.memory.observer.promotion import Promoter
from desktop.memory.store.database import Database

DECLINED = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a "
            "file edit, the new_string was NOT written to the file). To tell you how to proceed, the user "
            "said:\ntoo slow.")
INTERRUPTED = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a "
               "file edit, the new_string was NOT written to the file). STOP what you are doing and wait for "
               "the user to tell you how to proceed.")
GAP = "SELECT id, needs_review, deprecated FROM memories WHERE json_extract(metadata, '$.signal') = 'check_gap'"


def _learn_gap(promoter: Promoter) -> int:
    """One session: `mise run test` passed, `mise run test:ci` failed, was fixed and passed."""
    s = Seq("g1").bash("mise run test", "ok  \tentire.io/cli\t1.8s")
    s.bash("mise run test:ci", "FAIL\nsetup_test.go:50:21: env.runCmd undefined\nFAIL", error=True)
    s.edit("cmd/cli/integration_test/setup_test.go")
    s.bash("mise run test:ci", "ok")
    promoter.promote(digest_of(s.end()))
    [(lesson, review, gone)] = promoter.db.reads.conn().execute(GAP).fetchall()
    assert (review, gone) == (0, 0)
    return int(lesson)


def test_the_session_records_the_shell_commands_the_user_declined_with_their_words() -> None:
    s = Seq().bash("mise run test", "ok").bash("mise run test:ci 2>&1 | tail -20", DECLINED, error=True)
    s.bash("git status", INTERRUPTED, error=True).bash("go vet ./...", "vet: exit 1", error=True)
    assert digest_of(s.end()).declined == [["mise run test:ci 2>&1 | tail -20", "too slow."], ["git status", ""]]


def test_declining_the_stronger_check_sends_its_lesson_to_review_with_the_users_words(db: Database) -> None:
    promoter = Promoter(db, novelty=Novelty(HashingEmbedder()))
    lesson = _learn_gap(promoter)
    s = Seq("g2").bash("mise run test", "ok").bash("mise run test:ci 2>&1 | tail -20", DECLINED, error=True)
    promoter.promote(digest_of(s.end()))
    assert db.reads.conn().execute(GAP).fetchall() == [(lesson, 1, 0)]  # waits for review, not retired
    [(reason,)] = db.reads.conn().execute(
        "SELECT reason FROM audit_log WHERE memory_id = ? AND action = 'review'", (lesson,)).fetchall()
    assert "mise run test:ci" in reason and "too slow." in reason


def test_a_decline_without_words_counts_too(db: Database) -> None:
    promoter = Promoter(db, novelty=Novelty(HashingEmbedder()))
    lesson = _learn_gap(promoter)
    promoter.promote(digest_of(Seq("g2").bash("mise run fmt && mise run test:ci", INTERRUPTED, error=True).end()))
    assert db.reads.conn().execute(GAP).fetchall() == [(lesson, 1, 0)]


def test_near_misses_leave_the_lesson_said(db: Database) -> None:
    """Declining the weaker check, another task, or the stronger check failing on its own: no verdict."""
    promoter = Promoter(db, novelty=Novelty(HashingEmbedder()))
    lesson = _learn_gap(promoter)
    s = Seq("g2").bash("mise run test", DECLINED, error=True).bash("mise run lint:ci", DECLINED, error=True)
    s.bash("echo mise run test:ci", DECLINED, error=True)
    s.bash("mise run test:ci", "FAIL\nsetup_test.go:9: boom\nFAIL", error=True)
    promoter.promote(digest_of(s.end()))
    assert db.reads.conn().execute(GAP).fetchall() == [(lesson, 0, 0)]


def test_a_recipe_the_user_declined_waits_for_review(db: Database) -> None:
    conn_live = ("SELECT count(*) FROM memories WHERE json_extract(metadata, '$.signal') = 'recipe' "
                 "AND needs_review = 0 AND deprecated = 0")
    promoter = Promoter(db, novelty=Novelty(HashingEmbedder()))
    for sid in ("r1", "r2", "r3"):
        promoter.promote(digest_of(Seq(sid).bash("uv run pytest -q", "12 passed in 0.4s").end()))
    before = db.reads.conn().execute(conn_live).fetchone()[0]
    assert before >= 1
    promoter.promote(digest_of(Seq("r4").bash("uv run pytest -x tests/slow", DECLINED, error=True).end()))
    assert db.reads.conn().execute(conn_live).fetchone()[0] == before  # another run of the tool: no verdict
    promoter.promote(digest_of(Seq("r5").bash("uv run pytest -q", DECLINED, error=True).end()))
    assert db.reads.conn().execute(conn_live).fetchone()[0] == before - 1


def test_a_review_recipe_the_user_declined_waits_for_review(db: Database) -> None:
    """The recipe states one PR's title and body as placeholders; the declined call gives its own."""
    live = ("SELECT count(*) FROM memories WHERE json_extract(metadata, '$.signal') = 'recipe' "
            "AND needs_review = 0 AND deprecated = 0")
    promoter = Promoter(db, novelty=Novelty(HashingEmbedder()))
    for sid in ("p1", "p2"):
        promoter.promote(digest_of(Seq(sid).bash(f"gh pr create --draft --title '{sid}' --body 'b'", "https://x/pull/1")
                                   .end()))
    assert db.reads.conn().execute(live).fetchone()[0] == 1
    promoter.promote(digest_of(Seq("p3").bash("gh pr create --title 'ready' --body 'b'", DECLINED, error=True).end()))
    assert db.reads.conn().execute(live).fetchone()[0] == 1  # not the recipe's way: no verdict on it
    promoter.promote(digest_of(Seq("p4").bash("gh pr create --draft --title 'x y' --body \"$(cat <<'EOF'\nz\nEOF\n)\"",
                                              DECLINED, error=True).end()))
    assert db.reads.conn().execute(live).fetchone()[0] == 0


def test_nothing_declined_reads_nothing(db: Database) -> None:
    assert declined_contradicted(db.reads.conn(), "s", []) == []


def test_each_clis_words_for_a_call_the_user_declined() -> None:
    from desktop.memory.observer.utterances import declined_call

    assert declined_call(DECLINED) and declined_call(INTERRUPTED)
    assert declined_call("exec command rejected by user")  # Codex
    assert declined_call("User did not allow tool call run_shell_command. Reason: too slow")  # Gemini CLI
    assert not declined_call("Exit code 1\nFAIL: the user was not found")


def test_a_secret_in_the_users_words_is_redacted_before_it_is_kept(db: Database) -> None:
    promoter = Promoter(db, novelty=Novelty(HashingEmbedder()))
    lesson = _learn_gap(promoter)
    words = DECLINED.replace("too slow.", "no, CI has it: GITHUB_TOKEN=ghp_1234567890abcdefghijklmnopqrstuvwxyz12")
    promoter.promote(digest_of(Seq("g2").bash("mise run test:ci", words, error=True).end()))
    [(reason, detail)] = db.reads.conn().execute(
        "SELECT reason, detail FROM audit_log WHERE memory_id = ? AND action = 'review'", (lesson,)).fetchall()
    assert "ghp_" not in reason + detail and "[REDACTED" in reason and "no, CI has it" in detail


def test_codex_a_command_the_user_rejected_is_a_decline_not_a_run_that_went_fine(tmp_path: Path) -> None:
    """Codex answers a human 'no' with the plain text "exec command rejected by user" (no exit code): the
    command never ran, so it neither proves a 'this fails' lesson wrong nor teaches a recipe."""
    from desktop.memory.observer.codex import import_codex_rollout

    def item(ts: str, payload: dict[str, object]) -> str:
        return json.dumps({"timestamp": f"2025-10-14T09:13:{ts}.000Z", "type": "response_item", "payload": payload})

    call = {"command": ["bash", "-lc", "make test-all"], "workdir": "/proj"}
    lines = [json.dumps({"timestamp": "2025-10-14T09:12:03.000Z", "type": "session_meta", "payload": {
                 "id": "0199e1f2-0000-7d10-b8a4-6f0e2d9c1b78", "cwd": "/proj", "originator": "codex_cli_rs"}}),
             item("00", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}),
             item("01", {"type": "function_call", "name": "shell", "arguments": json.dumps(call), "call_id": "c1"}),
             item("02", {"type": "function_call_output", "call_id": "c1", "output": "exec command rejected by user"})]
    path = tmp_path / "rollout-2025-10-14T09-12-03-0199e1f2-0000-7d10-b8a4-6f0e2d9c1b78.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    digest = digest_of(import_codex_rollout(path).events)
    assert digest.declined == [["make test-all", ""]] and "make test-all" not in digest.succeeded


def test_gemini_a_call_the_user_cancelled_is_a_decline(tmp_path: Path) -> None:
    """Gemini CLI records a call the user said no to as status "cancelled" with "User did not allow tool
    call" as its response: a decline, not a failed command to learn a fix from."""
    from desktop.memory.observer.gemini import import_gemini_chat

    cancelled = {"id": "run_shell_command-1", "name": "run_shell_command", "args": {"command": "make test-all"},
                 "status": "cancelled", "timestamp": "2025-10-20T08:15:05.000Z",
                 "result": [{"functionResponse": {"id": "run_shell_command-1", "name": "run_shell_command",
                                                  "response": {"error": "[Operation Cancelled] Reason: User did "
                                                                        "not allow tool call"}}}]}
    chat = {"sessionId": "4d9a2c1e-0000", "projectHash": "x", "startTime": "2025-10-20T08:15:00.000Z",
            "lastUpdated": "2025-10-20T08:15:06.000Z",
            "messages": [{"id": "m1", "timestamp": "2025-10-20T08:15:01.000Z", "type": "user", "content": "go"},
                         {"id": "m2", "timestamp": "2025-10-20T08:15:04.000Z", "type": "gemini", "content": "",
                          "toolCalls": [cancelled]}]}
    path = tmp_path / "session-2025-10-20T08-15-4d9a2c1e.json"
    path.write_text(json.dumps(chat), encoding="utf-8")
    digest = digest_of(import_gemini_chat(path).events)
    assert digest.declined == [["make test-all", ""]] and not digest.errors
