"""Shared steps of the team tests: a two-machine team, syncing, reading the server as admin."""

from __future__ import annotations

from typing import Any

import psycopg

from desktop.memory.team import service as team
from desktop.memory.team.service import InitResult


def make_pair(make_client: Any, admin_url: str, key: str = "proj") -> tuple[Any, Any, InitResult]:
    """Alice creates team 'acme' on a fresh database, Bob joins it; both on project `key`."""
    a, b = make_client("alice"), make_client("bob")
    result = team.init_team(a.db, admin_url, "acme", member="alice", project_key=key)
    team.join_team(b.db, result.join_url, member="bob", project_key=key)
    return a, b, result


def sync(*clients: Any, rounds: int = 2) -> None:
    """Each client syncs, `rounds` times (a push then everyone's pull)."""
    for _ in range(rounds):
        for c in clients:
            team.sync_now(c.db)


def server_rows(admin_url: str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows read as the superuser (sees every team)."""
    with psycopg.connect(admin_url) as conn:
        return list(conn.execute(sql, params).fetchall())


def server_dump(admin_url: str) -> str:
    """Every row of every Engram table as text: for "no trace" assertions."""
    out = []
    with psycopg.connect(admin_url) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'engram'").fetchall()]
        for t in tables:
            out += [str(r) for r in conn.execute(f"SELECT t::text FROM engram.{t} t").fetchall()]
    return "\n".join(out)


def local_dump(db: Any) -> str:
    """Every row of every table of a client's SQLite file that could hold text."""
    conn = db.reads.conn()
    out = []
    tables = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
        "AND name NOT LIKE '%fts%' AND sql NOT LIKE 'CREATE VIRTUAL%'").fetchall()]
    for t in tables:
        try:
            out += [repr(r) for r in conn.execute(f"SELECT * FROM {t}").fetchall()]
        except Exception:  # shadow tables of virtual tables cannot always be read directly
            continue
    return "\n".join(out)


def by_content(client: Any, text: str) -> Any:
    """The client's memory (deprecated or not) with exactly this content, or None."""
    rows = client.db.reads.conn().execute("SELECT id FROM memories WHERE content = ?", (text,)).fetchall()
    return client.memories.get(int(rows[0][0])) if rows else None


def count_all(client: Any) -> int:
    """Every memory row of a client, deprecated included."""
    return int(client.db.reads.conn().execute("SELECT count(*) FROM memories").fetchall()[0][0])
