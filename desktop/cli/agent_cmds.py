"""`engram mcp` (serve memory over MCP / print client config), `engram run` (a headless session) and
`engram tour` (the guided tour's scripted agent on Engram's sample project)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from desktop.cli.common import CliError, add_common, emit, engram_from, open_project, sql_int

log = logging.getLogger("engram.agents")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the agent subcommands."""
    from desktop.agents.mcp_config import CLIENTS
    from desktop.agents.mcp_front import add_options

    p = sub.add_parser("mcp", help="serve the memory of the project it is started in over MCP (stdio)")
    add_options(p)
    p.add_argument("--print-config", action="store_true",
                   help="print each client's entries (the project's portable one, the user's own) and exit")
    p.add_argument("--client", default="all", choices=["all", *CLIENTS])
    p.set_defaults(func=cmd_mcp)

    p = sub.add_parser("run", help="run Engram's own agent on a task (headless); several tasks run at once")
    add_common(p)
    p.add_argument("task", nargs="+",
                   help="the task; with several, each runs concurrently as a sub-agent of one group with its own"
                        " scratchpad, merged when all have ended")
    p.add_argument("--provider", default="ollama", choices=["ollama", "openai", "anthropic", "scripted"])
    p.add_argument("--model", default="")
    p.add_argument("--host", default=None, help="Ollama host or OpenAI-compatible base URL")
    p.add_argument("--script", type=Path, default=None, help="turns for --provider scripted (JSON)")
    p.add_argument("--max-steps", type=sql_int, default=40)
    p.add_argument("--group", default=None, choices=["control", "passive", "full"])
    p.add_argument("--allow-writes", action="store_true")
    p.add_argument("--allow-commands", action="store_true")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("tour", help="run the guided tour's scripted agent on Engram's sample project "
                                    "(created in the data folder; your projects are not touched)")
    p.add_argument("task", nargs="?", default=None, help="what to ask (default: a task the sample answers)")
    p.add_argument("--data-dir", type=Path, default=None,
                   help="where Engram keeps its databases (default: the user-data folder)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_tour)


def cmd_mcp(args: argparse.Namespace) -> int:
    """Print the configuration entries, or serve MCP on stdio (``main`` normally serves it first)."""
    if args.print_config:
        from desktop.agents.mcp_config import client_config

        sys.stdout.write(json.dumps(client_config(args.client, args.data_dir), indent=2) + "\n")
        return 0
    from desktop.agents.mcp_front import main as serve_mcp

    argv = [*(["--project", str(args.project)] if args.project else []),
            *(["--data-dir", str(args.data_dir)] if args.data_dir else [])]
    return serve_mcp(argv)


def _stderr_event(event: Any) -> None:
    """Human-readable progress on stderr (stdout keeps the summary clean)."""
    if event.kind == "text":
        return
    detail = {k: v for k, v in event.data.items() if k not in ("content", "output", "metrics")}
    sys.stderr.write(f"[{event.kind} step {event.step}] {json.dumps(detail, default=str)[:300]}\n")


def cmd_run(args: argparse.Namespace) -> int:
    """A headless session, or a parallel group for several tasks; exit 0 when every session succeeded."""
    from desktop.agents.errors import AgentError
    from desktop.agents.parallel import run_parallel
    from desktop.agents.providers import make_provider
    from desktop.agents.session import AgentSession
    from desktop.agents.session_types import SessionConfig
    from desktop.agents.tools.registry import ApprovalPolicy

    with open_project(args) as project:
        options: dict[str, Any] = {}
        if args.provider == "scripted":
            if args.script is None:
                raise CliError("--provider scripted needs --script FILE")
            options["script"] = args.script
        if args.host and args.provider == "ollama":
            options["host"] = args.host
        if args.host and args.provider == "openai":
            options["base_url"] = args.host
        providers: list[Any] = []
        try:
            # One provider per session: a scripted one keeps its place in the script, and
            # each concurrent session streams on its own connection.
            for _ in args.task:
                providers.append(make_provider(args.provider, model=args.model, settings=project.settings,
                                               **options))
            configs = [SessionConfig(task=task, provider=provider, max_steps=args.max_steps, ab_group=args.group,
                                     approval=ApprovalPolicy(allow_writes=args.allow_writes,
                                                             allow_commands=args.allow_commands),
                                     session_type="headless")
                       for task, provider in zip(args.task, providers, strict=True)]
            if len(configs) == 1:
                result = AgentSession(project, configs[0], on_event=_stderr_event).run()
                emit(args, result.as_dict(),
                     lambda: f"{result.outcome}: {result.final_text or result.error_message or ''}")
                return 0 if result.outcome == "success" else 1
            group, results = run_parallel(project, configs, on_event=_stderr_event)
        except AgentError as exc:
            raise CliError(f"{exc.code}: {exc}", 2) from exc
        finally:
            for provider in providers:
                provider.close()
        emit(args, {"group": group, "sessions": [r.as_dict() for r in results]},
             lambda: "\n".join(f"{r.session_id} {r.outcome}: {r.final_text or r.error_message or ''}"
                               for r in results))
        return 0 if all(r.outcome == "success" for r in results) else 1


def cmd_tour(args: argparse.Namespace) -> int:
    """The app's Help > Guided Tour, from the command line: the same sample project and scripted agent."""
    from desktop.tour import SUGGESTED_TASK, create_sample, seed_sample, tour_session

    app = engram_from(args)
    project = app.open_project(create_sample(app.settings.data_dir), remember=False)
    try:
        seed_sample(project)
        result = tour_session(project, args.task or SUGGESTED_TASK, on_event=_stderr_event).run()
    finally:
        project.close()
    emit(args, result.as_dict(), result.final_text or result.error_message or "")
    return 0 if result.outcome == "success" else 1
