"""Two machines, one real PostgreSQL: what one does appears on the other."""

from __future__ import annotations

import time
from typing import Any

from desktop.memory.lifecycle.conflict_store import conflict_groups
from desktop.memory.team import service as team
from desktop.memory.team.state import read_state
from tests.team.helpers import by_content, count_all, local_dump, make_pair, server_dump, server_rows, sync

LESSON = "The billing worker must be restarted after a schema change or it keeps stale prepared statements"


def test_add_edit_pin_deprecate_reach_the_other_machine(make_client: Any, admin_url: str) -> None:
    a, b, _ = make_pair(make_client, admin_url)
    mid = a.memories.add(LESSON, type="gotcha").result().id
    sync(a, b)
    got = by_content(b, LESSON)
    assert got is not None and got.type == "gotcha"
    assert team.shared_by(b.db.reads.conn(), [got.id]) == {got.id: "alice"}

    # Bob edits and pins; Alice sees the edit. A pin is Bob's own trust in his copy: hers stays unpinned.
    edited = LESSON + " (also the cron runner)"
    b.memories.edit(got.id, {"content": edited}).result()
    b.memories.pin(got.id).result()
    sync(b, a)
    mine = a.memories.get(mid)
    assert mine.content == edited and not mine.pinned and b.memories.get(got.id).pinned

    # Alice deprecates; Bob's copy is deprecated too, nothing is duplicated anywhere.
    a.memories.deprecate(mid, reason="no longer true").result()
    sync(a, b)
    assert b.memories.get(got.id).deprecated
    assert server_rows(admin_url, "SELECT count(*) FROM engram.memories")[0][0] == 1
    assert count_all(a) == 1 and count_all(b) == 1


def test_personal_memories_never_leave(make_client: Any, admin_url: str) -> None:
    a, b, _ = make_pair(make_client, admin_url)
    a.memories.add("I prefer reading diffs with word-level highlighting", type="preference").result()
    a.memories.add("Half-way through the auth refactor, next: the token store", type="work_state").result()
    kept = a.memories.add("Deploys go through the staging cluster first", type="decision").result().id
    team.set_shared(a.db, kept, False)  # a person's choice beats the type policy
    opted_in = a.memories.add("Run the linters with --fix before pushing", type="note").result().id
    team.set_shared(a.db, opted_in, True)
    sync(a, b)
    contents = [r[0] for r in server_rows(admin_url, "SELECT content FROM engram.memories")]
    assert contents == ["Run the linters with --fix before pushing"]
    assert by_content(b, "I prefer reading diffs with word-level highlighting") is None


def test_making_a_shared_memory_personal_withdraws_it(make_client: Any, admin_url: str) -> None:
    a, b, _ = make_pair(make_client, admin_url)
    mid = a.memories.add(LESSON, type="gotcha").result().id
    sync(a, b)
    assert by_content(b, LESSON) is not None
    team.set_shared(a.db, mid, False)
    sync(a, b)
    assert by_content(b, LESSON) is None
    assert a.memories.get(mid).content == LESSON  # still Alice's own
    assert server_rows(admin_url, "SELECT count(*) FROM engram.memories")[0][0] == 0


def test_same_lesson_on_two_machines_is_merged_not_duplicated(make_client: Any, admin_url: str) -> None:
    a, b, _ = make_pair(make_client, admin_url)
    a.memories.add(LESSON, type="gotcha").result()
    b.memories.add("  the billing worker must be restarted after a schema change or it keeps stale "
                   "prepared statements ", type="gotcha").result()
    sync(a, b)
    assert server_rows(admin_url, "SELECT count(*) FROM engram.memories")[0][0] == 1
    assert count_all(a) == 1 and count_all(b) == 1
    gids = [db.reads.conn().execute("SELECT gid FROM team_links").fetchall() for db in (a.db, b.db)]
    assert gids[0] == gids[1] and len(gids[0]) == 1


def test_two_edits_of_one_memory_become_a_conflict_with_who_said_what(make_client: Any, admin_url: str) -> None:
    a, b, _ = make_pair(make_client, admin_url)
    mid = a.memories.add("Cache entries expire after 10 minutes", type="decision").result().id
    sync(a, b)
    bid = by_content(b, "Cache entries expire after 10 minutes").id
    a.memories.edit(mid, {"content": "Cache entries expire after 5 minutes"}).result()
    b.memories.edit(bid, {"content": "Cache entries expire after 30 minutes"}).result()
    sync(a, b, rounds=3)
    for client in (a, b):
        five = by_content(client, "Cache entries expire after 5 minutes")
        thirty = by_content(client, "Cache entries expire after 30 minutes")
        assert five is not None and thirty is not None, client.name
        groups = conflict_groups(client.db, [five.id])
        assert groups and set(groups[0].ids) == {five.id, thirty.id}, client.name
        who = client.memories.audit_log(actions=["team_conflict"])
        assert who and {who[0]["detail"]["by_a"], who[0]["detail"]["by_b"]} == {"alice", "bob"}
    assert server_rows(admin_url, "SELECT by_a, by_b FROM engram.conflicts") == [("alice", "bob")]


def test_hard_delete_leaves_no_trace_on_either_machine_or_the_server(make_client: Any, admin_url: str) -> None:
    a, b, _ = make_pair(make_client, admin_url)
    secret_ish = "Xyzzy-marker: the legacy importer silently drops rows with a NUL byte"
    mid = a.memories.add(secret_ish, type="gotcha").result().id
    sync(a, b)
    bid = by_content(b, secret_ish).id
    b.memories.edit(bid, {"content": secret_ish + " and trailing tabs"}).result()
    sync(b, a)
    a.memories.hard_delete(mid).result()
    sync(a, b)
    assert "Xyzzy" not in server_dump(admin_url)
    for client in (a, b):
        assert "Xyzzy" not in local_dump(client.db), client.name
        assert count_all(client) == 0
    # Only the global id's tombstone remains, so a late machine deletes its copy too.
    assert server_rows(admin_url, "SELECT count(*) FROM engram.deletions")[0][0] == 1


def test_background_sync_carries_a_change_within_seconds(make_client: Any, admin_url: str) -> None:
    a, b, _ = make_pair(make_client, admin_url)
    engines = [team.engine_for(c.db, interval=0.2).start() for c in (a, b)]
    try:
        a.memories.add(LESSON, type="gotcha").result()
        deadline = time.monotonic() + 20
        while by_content(b, LESSON) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert by_content(b, LESSON) is not None
        # b can pull the row before a's cycle records its own finish: a's status catches up within the
        # same few seconds (under load, CI saw it read an instant early).
        status = team.team_status(a.db, engines[0])
        while not status.last_sync_at and time.monotonic() < deadline:
            time.sleep(0.05)
            status = team.team_status(a.db, engines[0])
        assert status.joined and status.running and status.queued == 0 and status.last_sync_at
    finally:
        for e in engines:
            e.close()


def test_leave_forgets_the_credentials_and_keeps_the_memories(make_client: Any, admin_url: str) -> None:
    import keyring

    a, _b, _ = make_pair(make_client, admin_url)
    a.memories.add(LESSON, type="gotcha").result()
    sync(a)
    state_key = read_state(a.db.reads.conn()).keyring_name
    assert keyring.get_password("engram", state_key)
    assert team.leave_team(a.db)
    assert a.memories.count() == 1
    assert not team.team_status(a.db).joined
    assert keyring.get_password("engram", state_key) is None
    assert "postgresql://" not in local_dump(a.db)


def test_a_pin_here_and_an_edit_there_merge_without_a_conflict(make_client: Any, admin_url: str) -> None:
    a, b, _ = make_pair(make_client, admin_url)
    mid = a.memories.add("Feature flags are read once at start-up", type="decision").result().id
    sync(a, b)
    bid = by_content(b, "Feature flags are read once at start-up").id
    a.memories.edit(mid, {"content": "Feature flags are re-read every 30 s"}).result()
    b.memories.pin(bid).result()  # only a flag: not a competing version of the text
    sync(a, b, rounds=3)
    for client, own in ((a, mid), (b, bid)):
        m = client.memories.get(own)
        assert m.content == "Feature flags are re-read every 30 s", client.name
        assert m.pinned == (client is b), client.name  # each machine keeps its own pins
        assert not conflict_groups(client.db, [own]), client.name
    assert server_rows(admin_url, "SELECT count(*) FROM engram.conflicts")[0][0] == 0
    assert server_rows(admin_url, "SELECT count(*) FROM engram.memories")[0][0] == 1


def test_a_nul_character_does_not_block_the_queue(make_client: Any, admin_url: str) -> None:
    from desktop.memory.store.writer import FnOp

    a, b, _ = make_pair(make_client, admin_url)
    mid = a.memories.add("Binary logs start with a NUL marker", type="gotcha").result().id
    a.db.writer.run(FnOp("nul", lambda tx: tx.execute(
        "UPDATE memories SET content = ? WHERE id = ?", ("Binary logs start with a \x00 marker", mid))))
    a.memories.add("The next lesson still syncs", type="gotcha").result()
    sync(a, b)
    assert by_content(b, "The next lesson still syncs") is not None
    assert by_content(b, "Binary logs start with a  marker") is not None
    assert team.team_status(a.db).queued == 0


def test_a_change_the_server_refuses_is_held_back_not_retried_forever(make_client: Any, admin_url: str) -> None:
    from desktop.memory.store.writer import FnOp

    a, b, _ = make_pair(make_client, admin_url)
    bad = a.memories.add("A memory with a broken timestamp", type="gotcha").result().id
    a.db.writer.run(FnOp("break", lambda tx: tx.execute(
        "UPDATE memories SET created_at = 'yesterday-ish' WHERE id = ?", (bad,))))
    a.memories.add("A healthy lesson", type="gotcha").result()
    report = team.sync_now(a.db)
    assert report.held_back == 1 and report.pushed == 1
    sync(b)
    assert by_content(b, "A healthy lesson") is not None
    assert by_content(b, "A memory with a broken timestamp") is None
    assert team.team_status(a.db).queued == 0


def test_a_teammates_push_wakes_the_sync_without_waiting_for_the_poll(make_client: Any, admin_url: str) -> None:
    a, b, _ = make_pair(make_client, admin_url)
    sync(a, b)
    engines = [team.engine_for(c.db, interval=60.0).start() for c in (a, b)]  # polling effectively off
    try:
        time.sleep(1.5)  # both listeners connected
        a.memories.add(LESSON, type="gotcha").result()
        deadline = time.monotonic() + 15
        while by_content(b, LESSON) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert by_content(b, LESSON) is not None
    finally:
        for e in engines:
            e.close()


def test_a_teammates_memory_contradicting_mine_enters_the_conflict_flow(make_client: Any, admin_url: str) -> None:
    from desktop.memory.lifecycle.conflict_store import ConflictWatcher

    a, b, _ = make_pair(make_client, admin_url)
    watcher = ConflictWatcher(b.db).start()  # what every door runs (Project.start_upkeep)
    try:
        mine = b.memories.add("Always rebase feature branches", type="decision").result().id
        a.memories.add("Never rebase feature branches", type="decision").result()
        sync(a, b)
        assert watcher.wait_idle()
        theirs = by_content(b, "Never rebase feature branches")
        groups = conflict_groups(b.db, [mine])
        assert groups and set(groups[0].ids) == {mine, theirs.id}
        assert team.shared_by(b.db.reads.conn(), [theirs.id]) == {theirs.id: "alice"}  # who said what
    finally:
        watcher.close()
