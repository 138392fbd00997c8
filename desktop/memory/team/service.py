"""Team actions, one implementation each: init, join, test, leave, status, sync now, share choices.

The CLI and the app both call these. The connection string goes to the keyring
(never to a file or the database); the database keeps only the team's id and
name, this member's display name and the server's host for display.
"""

from __future__ import annotations

import getpass
import logging
import re
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from desktop.memory.secrets_store import delete_api_key, get_api_key, set_api_key
from desktop.memory.team import server
from desktop.memory.team.engine import PUSH_BATCH, SyncReport, SyncStatus, TeamSync, queued_count, status_of
from desktop.memory.team.errors import NotJoinedError
from desktop.memory.team.state import (
    JoinLocal,
    LeaveLocal,
    SetShared,
    SetSharedTypes,
    TeamState,
    read_state,
)

log = logging.getLogger("engram.team")


@dataclass(frozen=True)
class InitResult:
    """A new team: its info, and the URL teammates join with (holds the team role's password)."""

    team: server.TeamInfo
    join_url: str
    applied: list[str]
    queued: int


def default_project_key(root: Path) -> str:
    """What names this project on every machine: the git remote without credentials, else the folder name."""
    try:
        out = subprocess.run(["git", "-C", str(root), "config", "--get", "remote.origin.url"],
                             capture_output=True, text=True, timeout=5, check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        out = ""
    if out:
        out = re.sub(r"^[a-z+]+://", "", out)
        out = re.sub(r"^[^@/]+@", "", out)  # drop user[:password]@
        out = out.replace(":", "/").removesuffix(".git").rstrip("/")
        return out.lower()
    return root.name or "project"


def server_label(url: str) -> str:
    """host:port/database, for display (never the login)."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.hostname}{port}{parts.path}"


def test_connection(url: str) -> server.TeamInfo:
    """Connect with `url` and say which team it belongs to. Raises TeamError subclasses."""
    with server.connect(url) as conn:
        return server.identify(conn)


def init_team(db: Any, admin_url: str, team_name: str, *, member: str | None = None,
              project_key: str) -> InitResult:
    """Create/upgrade the server schema, create a team with its role, and join this project to it."""
    with server.connect(admin_url) as conn:
        applied = server.migrate_server(conn)
        info, password = server.create_team(conn, team_name)
    join_url = server.with_credentials(admin_url, info.role, password)
    join_team(db, join_url, member=member, project_key=project_key)
    return InitResult(info, join_url, applied, queued_count(db.reads.conn()))


def invite_member(admin_url: str, team_name: str, member: str) -> tuple[str, str]:
    """A personal login for one teammate (admin URL); returns (role, join URL). Revoke it alone later."""
    with server.connect(admin_url) as conn:
        server.migrate_server(conn)  # admin credentials: bring an older server's logins up to date first
        role, password = server.invite_member(conn, team_name, member)
    return role, server.with_credentials(admin_url, role, password)


def revoke_member(admin_url: str, role: str) -> bool:
    """Revoke one teammate's personal login (admin URL): their sessions end, everyone else keeps syncing."""
    with server.connect(admin_url) as conn:
        server.migrate_server(conn)
        return server.revoke_member(conn, role)


def join_team(db: Any, url: str, *, member: str | None = None, project_key: str) -> TeamState:
    """Connect this project to the team `url` logs in as; queues every memory for the first push."""
    client_id = uuid.uuid4().hex
    name = (member or getpass.getuser() or "someone").strip()
    with server.connect(url) as conn:
        info = server.identify(conn)
        server.register_member(conn, info.team_id, client_id, name)
    state = TeamState(team_id=info.team_id, team_name=info.name, member_name=name, client_id=client_id,
                      project_key=project_key, server=server_label(url))
    old = read_state(db.reads.conn())
    if old.shared_types:
        state.shared_types = old.shared_types
    set_api_key(state.keyring_name, url)
    queued = db.writer.run(JoinLocal(state))
    log.info("joined team %s as %s (%d memories queued)", info.name, name, queued)
    state.cursor = 0
    return state


def leave_team(db: Any) -> bool:
    """Disconnect this project: keyring entry and team tables cleared, memories kept. False if not joined."""
    state = read_state(db.reads.conn())
    if not state.joined:
        return False
    try:
        delete_api_key(state.keyring_name)
    except Exception:  # a missing or locked keyring must not stop leaving
        log.warning("could not remove the team's connection string from the keyring")
    db.writer.run(LeaveLocal())
    return True


def team_url(db: Any) -> str:
    """The stored connection string of this project's team. Raises NotJoinedError."""
    state = read_state(db.reads.conn())
    if not state.joined:
        raise NotJoinedError()
    url = get_api_key(state.keyring_name)
    if not url:
        raise NotJoinedError()
    return url


def engine_for(db: Any, *, interval: float = 1.0, batch: int = PUSH_BATCH) -> TeamSync:
    """A sync engine reading the connection string from the keyring each time it connects."""
    return TeamSync(db, lambda: team_url(db), interval=interval, batch=batch)


def sync_now(db: Any) -> SyncReport:
    """One push + pull cycle, inline (CLI `team sync --now`)."""
    engine = engine_for(db)
    try:
        return engine.sync_once()
    finally:
        engine.close()


def team_status(db: Any, engine: TeamSync | None = None) -> SyncStatus:
    """Last sync, queued changes and the last error (local only, no network)."""
    return status_of(db.reads.conn(), engine)


def set_shared_types(db: Any, types: list[str]) -> None:
    """Choose which memory types this project shares."""
    db.writer.run(SetSharedTypes(types))


def set_shared(db: Any, memory_id: int, shared: bool | None) -> None:
    """Share one memory, keep it personal, or (None) follow the type policy."""
    db.writer.run(SetShared(memory_id, shared))


def shared_by(conn: Any, memory_ids: list[int]) -> dict[int, str]:
    """Who first shared each of these memories with the team (memories pulled from teammates only)."""
    out: dict[int, str] = {}
    for start in range(0, len(memory_ids), 500):
        chunk = memory_ids[start:start + 500]
        for mid, by in conn.execute(
                f"SELECT memory_id, created_by FROM team_links WHERE origin = 'remote' AND memory_id IN "
                f"({','.join('?' * len(chunk))})", chunk):
            out[int(mid)] = str(by or "")
    return out


def start_team_sync(db: Any) -> TeamSync | None:
    """A started background sync when the project joined a team, else None (``Project.team`` keeps it)."""
    if not read_state(db.reads.conn()).joined:
        return None
    return engine_for(db).start()
