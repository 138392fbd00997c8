"""`engram doctor`: check a project's database, the installation and each agent's integration, read-only;
move a damaged database aside (or redact stored text) only when asked."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from desktop.cli.common import CliError, add_common, emit, engram_from
from desktop.memory.diagnostics import InstallCheck, run_install_checks
from desktop.memory.projects import move_aside_corrupt
from desktop.memory.store.errors import CorruptDatabaseError

AGENT_NAMES = {"claude-code": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI", "engram": "Engram's agent"}
# What each integration finding says (desktop/agents/integration_checks.py gives the code and the facts).
FINDINGS = {
    "cli_found": "found at {detail}",
    "cli_gone": "Engram is set up for it but `{detail}` is not on PATH any more",
    "cli_missing": "not installed (looked for `{detail}` on PATH)",
    "plugin": "hooks and MCP from Engram's plugin ({detail})",
    "settings_hooks": "Engram's hooks in {detail}",
    "engram_not_on_path": "the plugin runs `engram`, which is not on PATH: no hook or MCP call can run",
    "hooks_stale": "Engram's hooks in {detail} run another Engram or data folder than this one",
    "hooks_partial": "only some of Engram's hooks are in {detail}",
    "hooks_missing": "no Engram hooks: its sessions are neither recorded nor told what Engram remembers",
    "codex_hooks_off": "hooks are turned off in {detail}",
    "codex_flag_deprecated": "the deprecated `codex_hooks = true` an older Engram added is still in config.toml",
    "mcp_entry": "MCP server configured ({detail})",
    "mcp_command_missing": "the MCP entry runs a command that does not exist: {detail}",
    "mcp_missing": "no Engram MCP server: the agent cannot search or record memories itself",
    "service_listening": "the warm hook service answers ({detail})",
    "service_idle": "the warm hook service is not running (the next hook starts it)",
    "service_stale_socket": "a socket is left from a hook service that is gone ({detail}); the next hook replaces it",
    "service_untrusted": "the hook service socket {detail} is not this user's alone; hooks refuse it",
    "service_other_user": "the hook service socket {detail} belongs to another user; hooks refuse it",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the doctor subcommand."""
    p = sub.add_parser("doctor", help="check the project's memory, that the model, tokenizer, vector search and "
                                      "grammars load, and each agent's hooks and MCP entry (changes nothing)")
    add_common(p)
    p.add_argument("--move-aside", action="store_true",
                   help="if the database is damaged, keep it renamed (.corrupt-N) and start an empty one")
    p.add_argument("--redact", action="store_true",
                   help="pass every text already stored (any table) through the secret scanner again")
    p.set_defaults(func=cmd_doctor)


def _database(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """The project's database, opened (integrity check, migrations) only when it exists."""
    from desktop.agents.hooks.runner import find_project_root

    app = engram_from(args)
    root = find_project_root(app.settings.data_dir, str(folder.resolve()))
    if root is None and not args.project:
        return {"project": None, "folder": str(folder.resolve())}
    try:
        project = app.open_project(root or folder, remember=False, maintain=False)
    except CorruptDatabaseError as exc:
        if not args.move_aside:
            raise CliError(f"{exc} Run `engram doctor --move-aside` to keep it renamed and start an "
                           "empty memory (nothing is deleted).", code=2) from exc
        moved = move_aside_corrupt(exc)
        project = app.open_project(root or folder, remember=False, maintain=False)
        project.close()
        return {"moved_aside": str(moved)}
    try:
        out: dict[str, Any] = {"project": str(project.info.root), "database": str(project.info.db_path)}
        if args.redact:
            from desktop.memory.lifecycle.leak import redact_existing

            out["redacted_rows"] = redact_existing(project, actor="cli")
        counts = project.memories.counts()
        out.update(memories=counts.memories, needs_review=counts.needs_review, code_chunks=counts.code_chunks)
    finally:
        project.close()
    return out


def cmd_doctor(args: argparse.Namespace) -> int:
    """Report; exit 1 when something is broken, 2 for a damaged database (never touched unasked)."""
    from desktop.agents.integration_checks import PROBLEM, run_integration_checks

    folder = args.project or Path.cwd()
    db = _database(args, folder)
    if "moved_aside" in db:
        emit(args, {"ok": True, "moved_aside": db["moved_aside"], "memories": 0},
             f"The damaged database is kept as {db['moved_aside']}; this project now starts with an empty memory.")
        return 0
    checks = run_install_checks()
    app = engram_from(args)
    integration = run_integration_checks(Path(db.get("project") or folder).resolve(), Path.home(),
                                         app.settings.data_dir, data_dir_named=args.data_dir is not None)
    ok = all(c.ok for c in checks) and all(c.status != PROBLEM for c in integration)
    data = {"ok": ok, **db, "checks": [{"name": c.name, "ok": c.ok, "detail": c.detail} for c in checks],
            "integration": [c.__dict__ for c in integration]}
    emit(args, data, lambda: _human(db, checks, integration))
    return 0 if ok else 1


_LABELS = {"tokenizer": "tokenizer", "embedding_model": "embedding model", "vec0": "vector search (vec0)",
           "grammars": "code grammars"}


def _human(db: dict[str, Any], checks: list[InstallCheck], integration: list[Any]) -> str:
    """One line per check, the fix under each problem, then a verdict a user can act on."""
    if db.get("project") is None:
        lines = [f"NOTE    project: {db['folder']} is not an Engram project (nothing was created); "
                 "`engram setup` there makes it one"]
    else:
        redacted = db.get("redacted_rows")
        lines = [f"OK      database: {db['database']} ({_n(db['memories'], 'memory', 'memories')}, "
                 f"{db['needs_review']} waiting for review; code index: {_n(db['code_chunks'], 'chunk', 'chunks')})"]
        if redacted is not None:
            lines.append(f"OK      Redacted secrets in {sum(redacted.values())} stored row(s)" + (
                f": {', '.join(f'{t} {n}' for t, n in sorted(redacted.items()))}" if redacted else ""))
    lines += [f"{'OK' if c.ok else 'FAILED':<7} {_LABELS.get(c.name, c.name)}: {c.detail}" for c in checks]
    for c in integration:
        agent, _, part = c.name.partition(".")
        label = f"{AGENT_NAMES.get(agent, agent)} {part}".strip() if part else "hook service"
        word = {"ok": "OK", "problem": "FAILED", "note": "NOTE"}[c.status]
        lines.append(f"{word:<7} {label}: {FINDINGS.get(c.code, c.code).format(detail=c.detail)}")
        if c.fix:
            lines.append(f"        fix: {c.fix}")
    if not all(c.ok for c in checks):
        lines.append("Engram is not installed completely: reinstall it (pip install --force-reinstall engram-desktop).")
    return "\n".join(lines)


def _n(count: int, one: str, many: str) -> str:
    return f"{count:,} {one if count == 1 else many}"
