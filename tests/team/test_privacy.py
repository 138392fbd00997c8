"""What the server may never see or give away: secrets, other teams' rows, a schema it does not know."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from desktop.memory.store.writer import FnOp
from desktop.memory.team import server
from desktop.memory.team import service as team
from desktop.memory.team.errors import (
    AuthFailedError,
    NotATeamRoleError,
    ServerSchemaMissingError,
    ServerSchemaNewerError,
)
from tests.support.postgres import PostgresServer
from tests.team.helpers import make_pair, server_dump, server_rows, sync

GITHUB_TOKEN = "ghp_" + "R8xk2LmQ9vTzW4pN7cYb3HfJ6sDa1GeU5oKi"
AWS_KEY = "AKIA" + "Z7Q3LK5XW2MJ4RTV"


def test_a_raw_secret_never_reaches_the_server_its_wal_or_its_log(make_client: Any, admin_url: str,
                                                                 pg: PostgresServer) -> None:
    a, b, _ = make_pair(make_client, admin_url)
    mid = a.memories.add("The deploy script reads the GitHub token from the environment", type="gotcha").result().id
    # A memory stored by an older build, before its scanner knew these formats: raw in the local file.
    a.db.writer.run(FnOp("plant_secret", lambda tx: tx.execute(
        "UPDATE memories SET content = ?, tags = ?, citation_text = ? WHERE id = ?",
        (f"Deploy with token {GITHUB_TOKEN} (rotate monthly)", f'["aws:{AWS_KEY}"]', f"uses {GITHUB_TOKEN}",
         mid))))
    sync(a, b)
    dump = server_dump(admin_url)
    assert "rotate monthly" in dump  # the memory itself was shared, redacted
    assert GITHUB_TOKEN not in dump and AWS_KEY not in dump
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
    assert b"rotate monthly" in pg.log.read_bytes()  # the log does record statement parameters
    for needle in (GITHUB_TOKEN, AWS_KEY):
        assert pg.files_containing(needle.encode()) == [], needle  # data files, WAL and the statement log
    pulled = b.db.reads.conn().execute("SELECT content FROM memories").fetchall()
    assert pulled and GITHUB_TOKEN not in pulled[0][0]


def test_one_teams_role_cannot_read_or_write_another_teams_rows(make_client: Any, admin_url: str) -> None:
    a, b, first = make_pair(make_client, admin_url)
    a.memories.add("Team A's private architecture decision about the ledger", type="decision").result()
    sync(a, b)
    with server.connect(admin_url) as admin:
        other, password = server.create_team(admin, "rivals")
    rival_url = server.with_credentials(admin_url, other.role, password)
    a_team = server_rows(admin_url, "SELECT id FROM engram.teams WHERE name = 'acme'")[0][0]
    with psycopg.connect(rival_url, autocommit=True) as conn:
        for table in ("memories", "memory_versions", "members", "audit", "deletions", "conflicts"):
            assert conn.execute(f"SELECT count(*) FROM engram.{table}").fetchone() == (0,), table
        assert [r[0] for r in conn.execute("SELECT name FROM engram.teams")] == ["rivals"]
        assert conn.execute("UPDATE engram.memories SET content = 'x'").rowcount == 0
        assert conn.execute("UPDATE engram.teams SET clock = 0 WHERE id = %s", (a_team,)).rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO engram.audit(team_id, gid, action, actor) VALUES (%s, gen_random_uuid(),"
                         " 'add', 'mallory')", (a_team,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DELETE FROM engram.schema_migrations")
    # Team A's role sees its own rows.
    with psycopg.connect(first.join_url) as conn:
        assert conn.execute("SELECT count(*) FROM engram.memories").fetchone() == (1,)


def test_a_newer_server_schema_is_refused_without_writing(make_client: Any, admin_url: str) -> None:
    a, _b, result = make_pair(make_client, admin_url)
    with psycopg.connect(admin_url) as conn:
        conn.execute("INSERT INTO engram.schema_migrations(name, app_version) VALUES ('0099_from_the_future', '9')")
    c = make_client("carol")
    with pytest.raises(ServerSchemaNewerError) as err:
        team.join_team(c.db, result.join_url, member="carol", project_key="proj")
    assert "newer version of Engram" in str(err.value) and err.value.code == "team_server_newer"
    with server.connect(admin_url) as conn, pytest.raises(ServerSchemaNewerError):
        server.migrate_server(conn)
    assert not team.team_status(c.db).joined
    a.memories.add("Anything", type="gotcha").result()
    with pytest.raises(ServerSchemaNewerError):
        team.sync_now(a.db)
    assert team.team_status(a.db).error_code == "team_server_newer"


def test_a_server_without_the_schema_and_wrong_credentials_are_clear_errors(make_client: Any, admin_url: str) -> None:
    c = make_client("carol")
    with pytest.raises(ServerSchemaMissingError):
        team.join_team(c.db, admin_url, member="carol", project_key="proj")
    with server.connect(admin_url) as conn:
        server.migrate_server(conn)
        assert server.migrate_server(conn) == []  # idempotent
    with pytest.raises(NotATeamRoleError):
        team.join_team(c.db, admin_url, member="carol", project_key="proj")
    with pytest.raises(AuthFailedError):
        team.test_connection(server.with_credentials(admin_url, "engram_admin", "wrong"))


def test_a_remote_server_without_tls_earns_a_warning() -> None:
    assert server.check_url("postgresql://u:p@db.example.com/engram") == ["insecure_transport"]
    assert server.check_url("postgresql://u:p@db.example.com/engram?sslmode=verify-full") == []
    assert server.check_url("postgresql://u:p@127.0.0.1:5432/engram") == []
    with pytest.raises(Exception, match="postgresql://"):
        server.check_url("mysql://nope")


def test_a_personal_login_syncs_and_can_be_revoked_alone(make_client: Any, admin_url: str) -> None:
    a, b, _ = make_pair(make_client, admin_url)
    role, carol_url = team.invite_member(admin_url, "acme", "Carol")
    assert role.startswith("engram_m_carol_")
    carol = make_client("carol")
    team.join_team(carol.db, carol_url, member="carol", project_key="proj")
    a.memories.add("Team-wide: staging resets every Monday at 06:00", type="decision").result()
    sync(a, carol)
    assert carol.db.reads.conn().execute("SELECT count(*) FROM memories").fetchall()[0][0] == 1
    carol.memories.add("Carol's finding: the CDN caches 404s for an hour", type="gotcha").result()
    sync(carol)
    logins = {r[0] for r in server_rows(admin_url, "SELECT DISTINCT login FROM engram.audit")}
    assert role in logins  # the server records who logged in, not only the name a client claims

    assert team.revoke_member(admin_url, role)
    carol.memories.add("Written after being revoked", type="gotcha").result()
    with pytest.raises(AuthFailedError):
        team.sync_now(carol.db)
    assert "Written after being revoked" not in server_dump(admin_url)
    sync(a, b)  # everyone else keeps syncing
    assert b.db.reads.conn().execute("SELECT count(*) FROM memories").fetchall()[0][0] == 2
