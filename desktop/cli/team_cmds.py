"""`engram team init | join | status | sync | share | leave`: team memory on PostgreSQL."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict

from desktop.cli.common import CliError, add_common, emit, open_project

WARNINGS = {
    "insecure_transport": "warning: this server is not on this machine and the URL does not ask for TLS "
                          "(add ?sslmode=verify-full); memories and the password would cross the network "
                          "unencrypted.",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `engram team ...` to the parser."""
    team = sub.add_parser("team", help="share memories with a team through a PostgreSQL server")
    tsub = team.add_subparsers(dest="team_command", required=True)

    p = tsub.add_parser("init", help="create the schema and a team on a server (admin URL), and join it")
    add_common(p)
    p.add_argument("--url", required=True, help="admin connection string (postgresql://...), or - to read stdin")
    p.add_argument("--team", required=True, help="the team's name")
    _member_options(p)
    p.set_defaults(func=cmd_init)

    p = tsub.add_parser("join", help="connect this project to a team (the join URL `team init` printed)")
    add_common(p)
    p.add_argument("--url", required=True, help="the team's connection string, or - to read stdin")
    _member_options(p)
    p.set_defaults(func=cmd_join)

    p = tsub.add_parser("invite", help="create a personal login for one teammate (admin URL); prints their join URL")
    p.add_argument("--url", required=True, help="admin connection string, or - to read stdin")
    p.add_argument("--team", required=True, help="the team's name")
    p.add_argument("--name", required=True, help="the teammate's name")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_invite)

    p = tsub.add_parser("revoke", help="revoke one teammate's personal login (admin URL)")
    p.add_argument("--url", required=True, help="admin connection string, or - to read stdin")
    p.add_argument("--role", required=True, help="the role `team invite` printed (engram_m_...)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_revoke)

    p = tsub.add_parser("status", help="last sync, queued changes, last error")
    add_common(p)
    p.add_argument("--check", action="store_true", help="also test the connection to the server")
    p.set_defaults(func=cmd_status)

    p = tsub.add_parser("sync", help="push queued changes and pull the team's")
    add_common(p)
    p.add_argument("--now", action="store_true", help="run one cycle now (the default)")
    p.add_argument("--watch", action="store_true",
                   help="keep syncing in the background until interrupted (a headless machine, a CI runner)")
    p.set_defaults(func=cmd_sync)

    p = tsub.add_parser("share", help="choose what is shared: memory types, or one memory")
    add_common(p)
    p.add_argument("--types", default=None, help="comma-separated memory types to share (e.g. decision,gotcha)")
    p.add_argument("--memory", type=int, default=None, help="one memory id")
    p.add_argument("choice", nargs="?", choices=["on", "off", "default"],
                   help="with --memory: share it, keep it personal, or follow the type policy")
    p.set_defaults(func=cmd_share)

    p = tsub.add_parser("leave", help="disconnect this project (local memories are kept)")
    add_common(p)
    p.set_defaults(func=cmd_leave)


def _member_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--name", default=None, help="how teammates see you (default: your login name)")
    p.add_argument("--project-key", default=None,
                   help="what names this project on every machine (default: the git remote, else the folder name)")


def _url(args: argparse.Namespace) -> str:
    """The URL argument; `-` reads it from stdin so it stays out of shell history."""
    from desktop.memory.team.server import check_url

    url = sys.stdin.readline().strip() if args.url == "-" else args.url.strip()
    for code in check_url(url):
        sys.stderr.write(WARNINGS.get(code, code) + "\n")
    return url


def cmd_init(args: argparse.Namespace) -> int:
    """engram team init --url ADMIN_URL --team NAME."""
    from desktop.memory.team.service import default_project_key, init_team

    url = _url(args)
    with open_project(args) as project:
        key = args.project_key or default_project_key(project.info.root)
        result = init_team(project.db, url, args.team, member=args.name, project_key=key)
    emit(args, {"team": result.team.name, "team_id": result.team.team_id, "role": result.team.role,
                "join_url": result.join_url, "migrations": result.applied, "queued": result.queued},
         lambda: (f"Team '{result.team.name}' created (server migrations applied: "
                  f"{', '.join(result.applied) or 'none needed'}); this project joined it, "
                  f"{result.queued} changes queued for the first sync.\n"
                  f"Teammates join with (share it privately: it holds the team's password):\n"
                  f"  engram team join --url '{result.join_url}'"))
    return 0


def cmd_invite(args: argparse.Namespace) -> int:
    """engram team invite --url ADMIN_URL --team NAME --name TEAMMATE."""
    from desktop.memory.team.service import invite_member

    role, join_url = invite_member(_url(args), args.team, args.name)
    emit(args, {"role": role, "join_url": join_url},
         f"{args.name} can join with (share it privately; revoke with `engram team revoke --role {role}`):\n"
         f"  engram team join --url '{join_url}'")
    return 0


def cmd_revoke(args: argparse.Namespace) -> int:
    """engram team revoke --url ADMIN_URL --role ROLE."""
    from desktop.memory.team.service import revoke_member

    done = revoke_member(_url(args), args.role)
    if not done:
        raise CliError(f"There is no role {args.role} on this server.")
    emit(args, {"revoked": args.role}, f"Revoked {args.role}: its sessions were ended; the team's other logins "
                                       "keep working.")
    return 0


def cmd_join(args: argparse.Namespace) -> int:
    """engram team join --url TEAM_URL."""
    from desktop.memory.team.engine import queued_count

    url = _url(args)
    with open_project(args) as project:
        state = project.join_team(url, member=args.name, project_key=args.project_key)
        queued = queued_count(project.db.reads.conn())
    emit(args, {"team": state.team_name, "member": state.member_name, "project_key": state.project_key,
                "queued": queued},
         f"Joined team '{state.team_name}' as {state.member_name} (project '{state.project_key}'); "
         f"{queued} changes queued. Run `engram team sync --now` or open the app to sync.")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """engram team status [--check]."""
    from desktop.memory.team.service import team_status, team_url, test_connection
    from desktop.memory.team.state import read_state

    with open_project(args) as project:
        status = team_status(project.db)
        state = read_state(project.db.reads.conn())
        check = ""
        if args.check and status.joined:
            try:
                info = test_connection(team_url(project.db))
                check = f"connected to team '{info.name}'"
            except Exception as exc:  # reported as the status, not as a failure of the command
                check = f"cannot connect: {exc}"
    data = {**asdict(status), "server": state.server, "project_key": state.project_key,
            "shared_types": state.shared_types, "check": check}

    def human() -> str:
        if not status.joined:
            return "Not connected to a team (engram team join --url ...)."
        lines = [f"Team: {status.team_name} on {state.server}, as {status.member_name} "
                 f"(project '{state.project_key}')",
                 f"Last sync: {status.last_sync_at or 'never'}",
                 f"Queued changes: {status.queued}",
                 f"Shared types: {', '.join(state.shared_types)}"]
        if status.error:
            lines.append(f"Last error: {status.error}")
        if check:
            lines.append(f"Check: {check}")
        return "\n".join(lines)
    emit(args, data, human)
    return 0


def cmd_sync(args: argparse.Namespace) -> int:
    """engram team sync [--now]."""
    from desktop.memory.team.service import engine_for, sync_now

    if args.watch:
        with open_project(args) as project:
            engine = engine_for(project.db).start()
            sys.stderr.write("engram: syncing with the team; Ctrl+C stops\n")
            try:
                while True:
                    time.sleep(3600)
            finally:
                engine.close()
    with open_project(args) as project:
        report = sync_now(project.db)
    emit(args, asdict(report),
         f"Pushed {report.pushed}, merged {report.merged} with a teammate's identical memory, "
         f"pulled {report.pulled}, deleted {report.deleted}, conflicts {report.conflicts}"
         + (f", held back {report.held_back} (a secret remained after redaction)" if report.held_back else "")
         + f" in {report.seconds:.2f} s.")
    return 0


def cmd_share(args: argparse.Namespace) -> int:
    """engram team share --types a,b | --memory ID on|off|default."""
    from desktop.memory.team.service import set_shared, set_shared_types
    from desktop.memory.team.state import read_state
    from desktop.memory.types import MemoryType

    with open_project(args) as project:
        if args.types is not None:
            types = [t.strip() for t in args.types.split(",") if t.strip()]
            unknown = [t for t in types if t not in {m.value for m in MemoryType}]
            if unknown:
                raise CliError(f"Unknown memory types: {', '.join(unknown)}.")
            set_shared_types(project.db, types)
        if args.memory is not None:
            if args.choice is None:
                raise CliError("Say on, off or default after --memory ID.")
            project.memories.get(args.memory)  # a clear error for an unknown id
            set_shared(project.db, args.memory, {"on": True, "off": False, "default": None}[args.choice])
        state = read_state(project.db.reads.conn())
    emit(args, {"shared_types": state.shared_types}, f"Shared types: {', '.join(state.shared_types)}")
    return 0


def cmd_leave(args: argparse.Namespace) -> int:
    """engram team leave."""
    with open_project(args) as project:
        left = project.leave_team()
    emit(args, {"left": left}, "Left the team; local memories are kept." if left else "Not connected to a team.")
    return 0
