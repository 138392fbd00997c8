"""Known team-sync failures, each with a stable code the CLI and UI word."""

from __future__ import annotations

from desktop.memory.store.errors import EngramError


class TeamError(EngramError):
    """Base class of team memory problems."""

    code = "team_error"


class NotJoinedError(TeamError):
    """This project is not connected to a team."""

    code = "team_not_joined"

    def __init__(self) -> None:
        super().__init__("This project is not connected to a team (run `engram team join --url ...`).")


class ServerUnreachableError(TeamError):
    """The PostgreSQL server cannot be reached or refused the login."""

    code = "team_server_unreachable"


class AuthFailedError(TeamError):
    """The server refused the credentials."""

    code = "team_auth_failed"


class ServerSchemaNewerError(TeamError):
    """The server's schema was upgraded by a newer Engram; refused, never written."""

    code = "team_server_newer"

    def __init__(self, unknown: list[str]) -> None:
        super().__init__(
            "The team server was upgraded by a newer version of Engram "
            f"(unknown migrations: {', '.join(unknown)}). Update Engram to sync with it.")
        self.unknown = unknown


class ServerSchemaMissingError(TeamError):
    """The server has no (or an older) Engram schema and this role cannot create it."""

    code = "team_server_not_ready"

    def __init__(self, missing: list[str]) -> None:
        super().__init__(
            "The team server is not ready for this version of Engram "
            f"(missing migrations: {', '.join(missing)}). Ask the team admin to run "
            "`engram team init --url <admin url>`.")
        self.missing = missing


class NotATeamRoleError(TeamError):
    """The connection string's role is not a team role on this server."""

    code = "team_unknown_role"

    def __init__(self) -> None:
        super().__init__("These credentials do not belong to a team on this server "
                         "(use the join URL `engram team init` printed).")


class InvalidUrlError(TeamError):
    """The connection string is not a PostgreSQL URL."""

    code = "team_bad_url"
