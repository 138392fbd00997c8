"""Staleness anchored to code, on a real git repository created in the test."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from desktop.memory.lifecycle.staleness import (
    anchor_hash,
    anchor_memory,
    changed_fraction,
    check_staleness,
    compute_anchors,
    injection_policy,
    split_anchor,
)
from desktop.memory.types import Memory
from tests.support.git import git


def _lines(n: int, tag: str = "line") -> str:
    return "".join(f"{tag} {i}\n" for i in range(n))


def _commit_all(repo: Path, msg: str = "c") -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", msg)


def test_change_flags_review_in_proportion_and_delete_marks_stale(repo, svc, cdb) -> None:  # type: ignore[no-untyped-def]
    (repo / "src").mkdir()
    (repo / "src" / "small.py").write_text(_lines(100))
    (repo / "src" / "big.py").write_text(_lines(100))
    (repo / "src" / "gone.py").write_text("x = 1\n")
    (repo / "src" / "same.py").write_text("y = 2\n")
    _commit_all(repo)
    ids = {name: svc.add(f"memory about {name}", related_files=[f"src/{name}.py"]).result().id
           for name in ("small", "big", "gone", "same")}
    for name, mid in ids.items():
        anchors = anchor_memory(cdb, mid, repo)
        assert list(anchors) == [f"src/{name}.py"]
    head = git(repo, "rev-parse", "HEAD").strip()
    assert svc.get(ids["small"]).commit_sha == head
    assert check_staleness(cdb, repo).changed == []
    (repo / "src" / "small.py").write_text(_lines(95) + _lines(5, "edited"))
    (repo / "src" / "big.py").write_text(_lines(20) + _lines(80, "rewritten"))
    (repo / "src" / "gone.py").unlink()
    _commit_all(repo, "change")
    rep = check_staleness(cdb, repo)
    assert rep.git and rep.stale == [ids["gone"]]
    by_id = {c["id"]: c for c in rep.changed}
    assert set(by_id) == {ids["small"], ids["big"]}
    small, big, same = svc.get(ids["small"]), svc.get(ids["big"]), svc.get(ids["same"])
    assert small.needs_review and big.needs_review and not same.needs_review
    assert 0.8 * 0.9 < small.confidence < 0.8 and big.confidence < small.confidence
    assert svc.get(ids["gone"]).stale_at is not None
    assert svc.history(ids["big"])[-1]["action"] == "code_changed"
    assert svc.history(ids["gone"])[-1]["action"] == "stale"
    # Re-anchored: the same change is not punished twice.
    again = check_staleness(cdb, repo)
    assert again.changed == [] and again.stale == []
    assert svc.get(ids["big"]).confidence == big.confidence


def test_uncommitted_edit_and_line_range_anchor(repo, svc, cdb) -> None:  # type: ignore[no-untyped-def]
    (repo / "a.py").write_text(_lines(50))
    _commit_all(repo)
    chunk = svc.add("function at lines 10-20").result().id
    other = svc.add("function at lines 30-40").result().id
    anchor_memory(cdb, chunk, repo, ["a.py#L10-20"])
    anchor_memory(cdb, other, repo, ["a.py#L30-40"])
    text = _lines(50).splitlines(keepends=True)
    text[14] = "changed line\n"
    (repo / "a.py").write_text("".join(text))  # not committed: the working tree counts
    rep = check_staleness(cdb, repo)
    assert [c["id"] for c in rep.changed] == [chunk]
    assert svc.get(chunk).needs_review and not svc.get(other).needs_review


def test_outside_git_hashes_every_anchor(tmp_path, svc, cdb) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello\n")
    mid = svc.add("notes say hello").result().id
    anchor_memory(cdb, mid, folder, ["notes.txt"])
    assert svc.get(mid).commit_sha is None
    (folder / "notes.txt").write_text("goodbye\n")
    rep = check_staleness(cdb, folder)
    assert not rep.git and rep.changed[0]["fraction"] == 0.5  # unknown old text: half
    assert svc.get(mid).needs_review


def test_anchor_helpers() -> None:
    assert split_anchor("src/a.py#L3-9") == ("src/a.py", (3, 9))
    assert split_anchor("weird#name.py") == ("weird#name.py", None)
    data = b"a\nb\nc\n"
    assert anchor_hash(data, (2, 2)) == anchor_hash(b"b\n")
    assert changed_fraction(b"a\nb\n", b"a\nb\n") == 0.0 and changed_fraction(b"a\n", b"z\n") == 1.0
    assert compute_anchors(Path("/nonexistent"), ["x.py"]) == {}


@pytest.mark.parametrize(("flags", "level", "expected"), [
    ({}, "strict", "inject"),
    ({"stale_at": "2025-01-01"}, "strict", "withhold"),
    ({"stale_at": "2025-01-01"}, "balanced", "inject_marked_stale"),
    ({"stale_at": "2025-01-01"}, "permissive", "inject_marked_stale"),
    ({"needs_review": True}, "strict", "inject_marked_stale"),
    ({"needs_review": True}, "balanced", "inject_marked_stale"),
    ({"needs_review": True}, "permissive", "inject"),
    ({"candidate": True}, "strict", "withhold"),
    ({"candidate": True}, "balanced", "inject"),
    ({"deprecated": True}, "permissive", "withhold"),
])
def test_injection_policy(flags, level, expected) -> None:  # type: ignore[no-untyped-def]
    assert injection_policy(Memory(id=1, type="note", content="x", **flags), level) == expected


def test_five_hundred_changed_files_check_fast(repo, svc, cdb) -> None:  # type: ignore[no-untyped-def]
    for i in range(500):
        (repo / f"f{i}.py").write_text(_lines(30, f"v{i}"))
    _commit_all(repo)
    from desktop.memory.lifecycle.staleness import head_commit
    from desktop.memory.store.memory_ops import NewMemory

    head = head_commit(repo)
    items = [NewMemory(content=f"about file {i}", related_files=[f"f{i}.py"],
                       code_anchors=compute_anchors(repo, [f"f{i}.py"]), commit_sha=head) for i in range(500)]
    svc.add_many(items).result()
    for i in range(500):
        (repo / f"f{i}.py").write_text(_lines(25, f"v{i}") + "new\n" * 5)
    _commit_all(repo, "touch all")
    t0 = time.perf_counter()
    rep = check_staleness(cdb, repo)
    assert len(rep.changed) == 500 and time.perf_counter() - t0 < 5.0
