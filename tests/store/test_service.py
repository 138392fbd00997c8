"""MemoryService behaviour: add, edit history, pin, forget, dedup, filters, limits, secrets."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database
from desktop.memory.store.errors import NotFoundError, SecretRefusedError, ValidationError
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.rows import MemoryQuery
from desktop.memory.types import MAX_CONTENT_CHARS

GITHUB_TOKEN = "ghp_" + "Zq8RkT2mWv9XbL4nPc7YdH1sJf6GuA3eKo5i"


def test_add_get_and_every_field_round_trips(memories: MemoryService) -> None:
    item = NewMemory(content="Use argon2id for password hashing, never bcrypt", type="decision",
                     confidence=0.9, tags=["security"], related_files=["auth/hash.py"],
                     related_modules=["auth"], scope="module", source="agent_explicit", session_id="s1",
                     commit_sha="abc123", provenance_session_ids=["s1"],
                     provenance=[{"session": "s1", "step": 4, "excerpt": "switched to argon2"}],
                     citation_text="argon2id, not bcrypt", external_id="ext-1", metadata={"k": 1})
    r = memories.add(item).result()
    assert r.created
    m = memories.get(r.id)
    assert (m.type, m.confidence, m.tags, m.related_files, m.related_modules) == (
        "decision", 0.9, ["security"], ["auth/hash.py"], ["auth"])
    assert m.decay_half_life_days is None  # decisions never decay
    assert m.provenance[0]["step"] == 4 and m.external_id == "ext-1" and m.metadata == {"k": 1}
    assert m.citation() == f"[Memory #{r.id}: argon2id, not bcrypt]"


def test_duplicate_content_reinforces_instead_of_duplicating(memories: MemoryService) -> None:
    a = memories.add("Run  `make test` before pushing.", type="workflow_recipe", confidence=0.6,
                     source="agent_explicit", related_files=["Makefile"]).result()
    b = memories.add("run make test before pushing", type="workflow_recipe", confidence=0.6,
                     source="agent_explicit", related_files=["ci.yml"]).result()
    assert b.id == a.id and not b.created
    m = memories.get(a.id)
    assert m.confidence == pytest.approx(0.65)
    assert m.related_files == ["Makefile", "ci.yml"]
    assert memories.count() == 1
    assert [h["action"] for h in memories.history(a.id)] == ["add", "reinforce"]


def test_edit_keeps_history_and_pin_forget_restore(memories: MemoryService) -> None:
    r = memories.add("The cache TTL is 5 minutes", type="gotcha").result()
    memories.edit(r.id, {"content": "The cache TTL is 10 minutes"}, reason="changed in v2").result()
    memories.pin(r.id).result()
    assert memories.get(r.id).pinned
    memories.forget(r.id).result()
    assert memories.get(r.id).status.value == "deprecated"
    assert r.id not in memories.list_ids()
    memories.restore(r.id).result()
    assert r.id in memories.list_ids()
    history = memories.history(r.id)
    assert [h["action"] for h in history] == ["add", "edit", "pin", "forget", "restore"]
    assert history[1]["detail"]["changes"]["content"] == ["The cache TTL is 5 minutes",
                                                          "The cache TTL is 10 minutes"]
    assert history[1]["reason"] == "changed in v2"


def test_hard_delete_removes_row_and_scrubs_audit_text(memories: MemoryService) -> None:
    r = memories.add("temporary note about the build", type="note").result()
    assert memories.hard_delete(r.id, reason="test").result() == 1
    with pytest.raises(NotFoundError):
        memories.get(r.id)
    history = memories.history(r.id)
    assert history[-1]["action"] == "hard_delete"
    assert all("temporary" not in str(h["detail"]) for h in history)


def test_filters_by_type_scope_source_status_file_module_and_text(memories: MemoryService) -> None:
    memories.add_many([
        NewMemory(content="alpha gotcha", type="gotcha", related_files=["a.py"], source="agent_explicit"),
        NewMemory(content="beta decision", type="decision", scope="module", related_modules=["core"]),
        NewMemory(content="gamma dead end", type="dead_end", source="observer_inferred", needs_review=True),
    ]).result()
    assert memories.count(MemoryQuery(types=["gotcha"])) == 1
    assert memories.count(MemoryQuery(scopes=["module"])) == 1
    assert memories.count(MemoryQuery(sources=["observer_inferred"])) == 1
    assert memories.count(MemoryQuery(statuses=["needs_review"])) == 1
    assert memories.count(MemoryQuery(statuses=["active"])) == 2
    assert memories.count(MemoryQuery(files=["a.py"])) == 1
    assert memories.count(MemoryQuery(modules=["core"])) == 1
    assert [m.content for m in memories.list(MemoryQuery(text="decision"))] == ["beta decision"]
    assert memories.count(MemoryQuery(text='"unbalanced AND (')) == 0


@pytest.mark.parametrize("content, message", [
    ("", "empty"), ("   ", "empty"), ("x" * (MAX_CONTENT_CHARS + 1), "limited"),
    ("bad \udcff surrogate", "UTF-8"),
])
def test_bad_content_is_rejected_before_queueing(memories: MemoryService, content: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        memories.add(content)
    assert memories.count() == 0


def test_unknown_type_is_rejected(memories: MemoryService) -> None:
    with pytest.raises(ValidationError):
        memories.add("x", type="nonsense")


def test_user_taught_secret_is_refused_with_span(memories: MemoryService) -> None:
    text = f"deploy with token {GITHUB_TOKEN} please"
    with pytest.raises(SecretRefusedError) as info:
        memories.add(text, source="user_taught").result()
    assert info.value.start == text.index("ghp_")
    assert GITHUB_TOKEN not in info.value.excerpt
    assert memories.count() == 0


def test_agent_secret_is_redacted_and_never_reaches_the_file(tmp_path: Path) -> None:
    path = tmp_path / "secret.db"
    with Database(path) as database:
        svc = MemoryService(database)
        r = svc.add(f"The CI uses {GITHUB_TOKEN} to push", source="agent_explicit", type="gotcha",
                    provenance=[{"excerpt": f"export GH={GITHUB_TOKEN}"}]).result()
        m = svc.get(r.id)
        assert GITHUB_TOKEN not in m.content and "REDACTED" in m.content
        assert GITHUB_TOKEN not in str(m.provenance)
        raw_wal = Path(str(path) + "-wal").read_bytes() if Path(str(path) + "-wal").exists() else b""
        assert GITHUB_TOKEN.encode() not in raw_wal
    assert GITHUB_TOKEN.encode() not in path.read_bytes()


def test_editing_to_a_duplicate_is_refused(memories: MemoryService) -> None:
    a = memories.add("first fact").result()
    b = memories.add("second fact").result()
    with pytest.raises(ValidationError, match=f"#{a.id}"):
        memories.edit(b.id, {"content": "First fact!"}).result()


def test_one_failing_op_does_not_undo_its_batch_neighbours(memories: MemoryService) -> None:
    futures = [memories.add(f"fact {i}") for i in range(20)]
    bad = memories.edit(999_999, {"confidence": 0.1})
    more = [memories.add(f"more {i}") for i in range(20)]
    with pytest.raises(NotFoundError):
        bad.result()
    assert all(f.result().created for f in futures + more)
    assert memories.count() == 40


def test_change_notices_name_what_changed(db: Database) -> None:
    svc = MemoryService(db)
    seen = []
    db.writer.subscribe(seen.append)
    r = svc.add("notice me").result()
    svc.pin(r.id).result()
    svc.hard_delete(r.id).result()
    assert seen[0].ids("memory", "added") == {r.id}
    assert any(cs.ids("memory", "updated") == {r.id} for cs in seen)
    assert seen[-1].ids("memory", "deleted") == {r.id}


def test_a_lesson_learned_again_gains_new_constructs_but_not_broader_commands(memories: MemoryService,
                                                                              db: Database) -> None:
    """Reinforcing adds the checker constructs another session flagged; a command trigger stays as first
    learned (a broader one would fire, and be contradicted, where the lesson was never shown true)."""
    first = [{"kind": "command", "key": "git", "words": ["add"], "tokens": ["."]},
             {"kind": "code", "key": "_ = w("}]
    again = [{"kind": "command", "key": "git", "words": ["add"]}, {"kind": "code", "key": "w, _ = w("}]
    text = "The project's hook refuses `git add .`: stage files by name."
    mid = memories.add(NewMemory(content=text, source="observer_inferred",
                                 metadata={"signal": "hook_block", "triggers": first})).result(10).id
    assert memories.add(NewMemory(content=text, source="observer_inferred",
                                  metadata={"signal": "hook_block", "triggers": again})
                        ).result(10).id == mid
    assert memories.get(mid).metadata["triggers"] == [*first, again[1]]
    rows = db.reads.conn().execute("SELECT kind, key FROM memory_triggers WHERE memory_id = ? ORDER BY kind, key",
                                   (mid,)).fetchall()
    assert [(str(k), str(v)) for k, v in rows] == [("code", "_ = w("), ("code", "w, _ = w("), ("command", "git")]
