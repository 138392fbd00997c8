"""Talking to the team's PostgreSQL server: connect, migrate, create and identify teams.

Everything here does network I/O: callers are the sync thread, the CLI, or a UI
worker thread, never the GUI thread.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import secrets
import uuid
from dataclasses import dataclass
from urllib.parse import parse_qs, quote, urlsplit, urlunsplit

import psycopg
from psycopg import sql

from desktop import __version__
from desktop.memory.team.errors import (
    AuthFailedError,
    InvalidUrlError,
    NotATeamRoleError,
    ServerSchemaMissingError,
    ServerSchemaNewerError,
    ServerUnreachableError,
    TeamError,
)
from desktop.memory.team.server_schema import MEMBER_ROLE, SERVER_MIGRATIONS

log = logging.getLogger("engram.team")

LEDGER = "engram.schema_migrations"
SECURE_SSLMODES = ("require", "verify-ca", "verify-full")
# One lock id for "someone is migrating the Engram schema" (any constant works; this spells ENGRAM).
_MIGRATION_LOCK = 0x454E4752414D


def check_url(url: str) -> list[str]:
    """Validate a connection string; returns warning codes (e.g. `insecure_transport`).

    Raises InvalidUrlError for something that is not a postgresql:// URL. A server
    that is not on this machine without `sslmode=require` (or verify-*) earns the
    warning: credentials and memories would cross the network in the clear.
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("postgresql", "postgres") or not parts.hostname:
        raise InvalidUrlError("The team server must be given as postgresql://user:password@host/database.")
    mode = parse_qs(parts.query).get("sslmode", [""])[0]
    if mode in SECURE_SSLMODES or _is_loopback(parts.hostname):
        return []
    return ["insecure_transport"]


def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.startswith("/"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def with_credentials(url: str, user: str, password: str) -> str:
    """The same server and options with another role's login."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    netloc = f"{quote(user, safe='')}:{quote(password, safe='')}@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def connect(url: str, *, autocommit: bool = False, timeout: float = 5.0) -> psycopg.Connection:
    """Open a connection; failures become ServerUnreachableError / AuthFailedError (never with the URL)."""
    check_url(url)
    try:
        return psycopg.connect(url, autocommit=autocommit, connect_timeout=max(1, int(timeout)),
                               application_name="engram")
    except psycopg.OperationalError as exc:
        text = str(exc)
        if "password authentication failed" in text or "no password supplied" in text:
            raise AuthFailedError("The team server refused these credentials.") from None
        # The message can echo the host, never the password; keep only its first line.
        raise ServerUnreachableError(f"Cannot reach the team server: {text.splitlines()[0] if text else 'no answer'}"
                                     ) from None


def applied(conn: psycopg.Connection) -> list[str]:
    """Migration names in the server's ledger (empty when there is no Engram schema)."""
    exists = conn.execute("SELECT to_regclass(%s)", (LEDGER,)).fetchone()
    if not exists or exists[0] is None:
        return []
    return [r[0] for r in conn.execute(f"SELECT name FROM {LEDGER} ORDER BY seq")]


def check_schema(conn: psycopg.Connection) -> None:
    """Refuse a newer schema; require every migration this build knows."""
    names = applied(conn)
    known = [n for n, _ in SERVER_MIGRATIONS]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ServerSchemaNewerError(unknown)
    missing = [n for n in known if n not in names]
    if missing:
        raise ServerSchemaMissingError(missing)


def migrate_server(conn: psycopg.Connection) -> list[str]:
    """Create or upgrade the Engram schema (admin credentials); returns the names applied now."""
    done: list[str] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute("CREATE SCHEMA IF NOT EXISTS engram")
        conn.execute(f"CREATE TABLE IF NOT EXISTS {LEDGER} (seq serial PRIMARY KEY, name text NOT NULL UNIQUE,"
                     " applied_at timestamptz NOT NULL DEFAULT now(), app_version text NOT NULL)")
        names = applied(conn)
        unknown = [n for n in names if n not in {k for k, _ in SERVER_MIGRATIONS}]
        if unknown:
            raise ServerSchemaNewerError(unknown)
        for name, script in SERVER_MIGRATIONS:
            if name in names:
                continue
            conn.execute(script)
            conn.execute(f"INSERT INTO {LEDGER}(name, app_version) VALUES (%s, %s)", (name, __version__))
            done.append(name)
    if done:
        log.info("applied server migrations %s", done)
    return done


@dataclass(frozen=True)
class TeamInfo:
    """Who the connection's role is on the server."""

    team_id: str
    name: str
    role: str


def create_team(conn: psycopg.Connection, name: str) -> tuple[TeamInfo, str]:
    """Create a team with its own LOGIN role (admin credentials); returns it and the role's password."""
    name = name.strip()
    if not name:
        raise TeamError("A team needs a name.")
    team_id = uuid.uuid4()
    role = f"engram_team_{team_id.hex[:12]}"
    password = secrets.token_urlsafe(24)
    with conn.transaction():
        if conn.execute("SELECT 1 FROM engram.teams WHERE name = %s", (name,)).fetchone():
            raise TeamError(f"A team named '{name}' already exists on this server.")
        # Role names cannot be parameters; `role` is built from hex digits only.
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE {}").format(
            sql.Identifier(role), sql.Literal(password), sql.Identifier(MEMBER_ROLE)))
        conn.execute("INSERT INTO engram.teams(id, name, role_name) VALUES (%s, %s, %s)", (team_id, name, role))
    log.info("created team %s with role %s", name, role)
    return TeamInfo(str(team_id), name, role), password


def identify(conn: psycopg.Connection) -> TeamInfo:
    """The team whose role this connection logged in as (RLS shows only that row)."""
    check_schema(conn)
    # The team's role or one of its personal logins; a superuser (who could see every team) is no member.
    row = conn.execute("SELECT id, name, role_name FROM engram.teams WHERE id = engram.my_team()"
                       " AND NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)").fetchone()
    conn.commit()
    if row is None:
        raise NotATeamRoleError()
    return TeamInfo(str(row[0]), str(row[1]), str(row[2]))


def invite_member(conn: psycopg.Connection, team_name: str, member: str) -> tuple[str, str]:
    """A personal LOGIN role for `member` in team `team_name` (admin credentials); returns (role, password)."""
    row = conn.execute("SELECT id FROM engram.teams WHERE name = %s", (team_name,)).fetchone()
    if row is None:
        raise TeamError(f"There is no team named '{team_name}' on this server.")
    slug = re.sub(r"[^a-z0-9]+", "_", member.lower()).strip("_")[:20] or "member"
    role = f"engram_m_{slug}_{secrets.token_hex(3)}"
    password = secrets.token_urlsafe(24)
    with conn.transaction():
        # A member of the group role that holds the table privileges, never of the team's role
        # (which it could then become and administer): team_logins says which team it is in.
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE {}").format(
            sql.Identifier(role), sql.Literal(password), sql.Identifier(MEMBER_ROLE)))
        conn.execute("INSERT INTO engram.team_logins(role_name, team_id) VALUES (%s, %s)", (role, row[0]))
    log.info("invited %s to team %s as role %s", member, team_name, role)
    return role, password


def revoke_member(conn: psycopg.Connection, role: str) -> bool:
    """Drop a member's personal role and end its sessions (admin credentials). False if unknown."""
    if not role.startswith("engram_m_"):
        raise TeamError("Only personal member roles (engram_m_…) can be revoked this way.")
    with conn.transaction():
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone() is None:
            return False
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,))
        conn.execute("DELETE FROM engram.team_logins WHERE role_name = %s", (role,))
        conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))
    log.info("revoked member role %s", role)
    return True


def register_member(conn: psycopg.Connection, team_id: str, client_id: str, name: str) -> None:
    """Record (or refresh) this machine as a member of the team."""
    with conn.transaction():
        conn.execute("INSERT INTO engram.members(team_id, client_id, name) VALUES (%s, %s, %s) "
                     "ON CONFLICT (team_id, client_id) DO UPDATE SET name = EXCLUDED.name, last_seen = now()",
                     (team_id, client_id, name))
