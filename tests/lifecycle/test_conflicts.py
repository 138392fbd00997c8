"""Conflict detection on positive and negative pairs; links, groups, resolution and chains."""

from __future__ import annotations

import numpy as np
import pytest

from desktop.memory.lifecycle.conflict_store import (
    check_on_write,
    conflict_groups,
    resolve_conflict,
    supersession_chain,
)
from desktop.memory.lifecycle.conflicts import ConflictText, detect_conflicts, texts_conflict

POSITIVE = [
    ("Use bcrypt for password hashing", "Don't use bcrypt for password hashing"),
    ("Always run migrations before tests", "Never run migrations before tests"),
    ("Enable strict mode in tsconfig", "Disable strict mode in tsconfig"),
    ("You should squash commits before merging", "You shouldn't squash commits before merging"),
    ("Add an index on users.email", "Remove the index on users.email"),
    ("Use tabs for indentation in Makefiles", "Do not use tabs for indentation in Makefiles"),
    ("Always mock the database in unit tests", "Never mock the database in unit tests"),
    ("Turn on the query cache for reports", "Turn off the query cache for reports"),
    ("Allow force pushes to main", "Forbid force pushes to main"),
    ("Prefer async handlers in the API layer", "Avoid async handlers in the API layer"),
    ("Do retry failed uploads", "Don't retry failed uploads"),
    ("We must log request bodies", "We must not log request bodies"),
    ("Use bcrypt for password hashing.", "Don't use bcrypt, use argon2 instead."),
]
NEGATIVE = [
    ("Use bcrypt for password hashing", "Use argon2 for token signing"),
    ("Never use var in JavaScript", "Always use const in JavaScript"),
    ("Always run tests before commit", "Never skip tests"),
    ("Enable strict mode in tsconfig", "Enable source maps in tsconfig"),
    ("Don't use print for logging", "Use logging.getLogger for logging"),
    ("Add an index on users.email", "Add a column to orders"),
    ("The cache is enabled in production", "Redis is used for sessions"),
    ("Use pytest fixtures for database setup", "Use pytest fixtures for database setup in integration tests"),
    ("Never commit .env files", "Always commit the lock file"),
    ("Disable telemetry in CI", "Disable animations in UI tests"),
    ("Avoid global state in the parser", "Use dependency injection for the parser config"),
    ("Should use UTC timestamps everywhere", "Should store timestamps as ISO 8601"),
]


@pytest.mark.parametrize(("a", "b"), POSITIVE)
def test_opposition_pairs_conflict(a: str, b: str) -> None:
    assert texts_conflict(a, b) and texts_conflict(b, a)


@pytest.mark.parametrize(("a", "b"), NEGATIVE)
def test_unrelated_or_agreeing_pairs_do_not_conflict(a: str, b: str) -> None:
    assert not texts_conflict(a, b) and not texts_conflict(b, a)


def test_different_files_are_not_a_shared_topic() -> None:
    a = ConflictText(1, "Use tabs for indentation", files=["Makefile"])
    b = ConflictText(2, "Don't use tabs for indentation", files=["src/app.py"])
    assert detect_conflicts(a, [b]) == []
    b.files = ["Makefile"]
    assert [c.b for c in detect_conflicts(a, [b])] == [2]


def test_embedding_similarity_with_opposite_negation() -> None:
    vocab = ["cache", "session", "token", "redis"]

    def embed(texts: list[str]) -> np.ndarray:  # a bag-of-words stand-in for a real model
        return np.array([[t.lower().count(w) + 0.01 for w in vocab] for t in texts], dtype=np.float32)

    new = ConflictText(1, "Cache the session token in redis")
    similar_negated = ConflictText(2, "The session token is not cached in redis cache")
    similar_same = ConflictText(3, "Session token cache lives in redis")
    assert detect_conflicts(new, [similar_negated, similar_same]) == []  # no rule phrase matches
    found = detect_conflicts(new, [similar_negated, similar_same], embed=embed)
    assert [c.b for c in found] == [2] and found[0].detail["by"] == "embedding"


def test_links_groups_resolution_and_chain(cdb, svc) -> None:  # type: ignore[no-untyped-def]
    old = svc.add("Use bcrypt for password hashing", related_files=["auth.py"]).result().id
    svc.add("Deploy with make deploy").result()
    new = svc.add("Don't use bcrypt for password hashing, use argon2", related_files=["auth.py"]).result().id
    found = check_on_write(cdb, [new])
    assert [(c.a, c.b) for c in found] == [(new, old)]
    assert check_on_write(cdb, [new]) and svc.get(old).relations[0]["type"] == "contradicts"
    assert len(svc.get(old).relations) == 1  # recording twice adds no second link
    groups = conflict_groups(cdb, [new])
    assert len(groups) == 1 and groups[0].ids == sorted([old, new]) and groups[0].missing == [old]
    assert "CONFLICT" in groups[0].marker() and f"#{old}" in groups[0].marker()
    conflict = svc.history(new)[-1]
    assert conflict["action"] == "conflict" and conflict["actor"] == "engram" and "bcrypt" not in conflict["reason"]
    resolve_conflict(cdb, new, old, "keep_new")
    assert conflict_groups(cdb, [old, new]) == []
    assert svc.get(old).deprecated and supersession_chain(cdb, old) == [old, new]
    assert {"supersedes", "contradicts"} <= {r["type"] for r in svc.get(new).relations}
    assert [h["action"] for h in svc.history(old)][-1] == "supersede"


def test_keep_both_and_keep_old(cdb, svc) -> None:  # type: ignore[no-untyped-def]
    a = svc.add("Always rebase feature branches").result().id
    b = svc.add("Never rebase feature branches").result().id
    check_on_write(cdb, [b])
    resolve_conflict(cdb, b, a, "keep_both")
    assert conflict_groups(cdb, [a, b]) == [] and not svc.get(a).deprecated and not svc.get(b).deprecated
    c = svc.add("Enable verbose logging in CI").result().id
    d = svc.add("Disable verbose logging in CI").result().id
    check_on_write(cdb, [d])
    resolve_conflict(cdb, d, c, "keep_old")
    assert svc.get(d).deprecated and not svc.get(c).deprecated and supersession_chain(cdb, d) == [d, c]
    with pytest.raises(Exception, match="Resolution"):
        resolve_conflict(cdb, d, c, "flip_a_coin")


def test_watcher_detects_conflicts_on_write(cdb, svc) -> None:  # type: ignore[no-untyped-def]
    from desktop.memory.lifecycle.conflict_store import ConflictWatcher

    seen: list = []
    watcher = ConflictWatcher(cdb, on_conflicts=seen.extend).start()
    try:
        first = svc.add("Always squash merge pull requests").result().id
        assert watcher.wait_idle()
        second = svc.add("Never squash merge pull requests").result().id
        assert watcher.wait_idle()
        assert [(c.a, c.b) for c in seen] == [(second, first)]
        svc.add("Use tabs in Makefiles", source="imported").result()
        svc.add("Don't use tabs in Makefiles", source="imported").result()
        assert watcher.wait_idle() and len(seen) == 1  # imports are not checked on write
        assert conflict_groups(cdb, [first])[0].ids == [first, second]
    finally:
        watcher.close()
