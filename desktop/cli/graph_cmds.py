"""`engram index | impact | deps | modules`: the code graph from the command line."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any

from desktop.cli.common import CliError, add_common, emit, open_project, sql_int
from desktop.memory.graph.report import index_outcome

if TYPE_CHECKING:
    from desktop.memory.graph.report import IndexProgress

# The graph package imports networkx (0.3-0.5 s); the parser is built for every `engram`
# command, so the default depth is repeated here (tests/cli check it matches closure.DEFAULT_DEPTH).
DEFAULT_DEPTH = 3


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the graph subcommands to the parser."""
    p = sub.add_parser("index", help="index the project's code graph (later runs skip unchanged files)")
    add_common(p)
    p.add_argument("--force", action="store_true", help="re-index every file")
    p.add_argument("--no-chunks", action="store_true", help="do not store code chunks as memories")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("impact", help="what depends on TARGET (a file path or path:symbol), by depth")
    add_common(p)
    p.add_argument("target")
    p.add_argument("--depth", type=sql_int, default=DEFAULT_DEPTH)
    p.set_defaults(func=cmd_impact)

    p = sub.add_parser("deps", help="what TARGET depends on, by depth")
    add_common(p)
    p.add_argument("target")
    p.add_argument("--depth", type=sql_int, default=DEFAULT_DEPTH)
    p.set_defaults(func=cmd_deps)

    p = sub.add_parser("modules", help="modules of the project and the imports between them")
    add_common(p)
    p.set_defaults(func=cmd_modules)


class _Progress:
    """Progress on stderr, at most ten lines a second, overwritten in place on a terminal."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.last = 0.0
        self.tty = sys.stderr.isatty()

    def __call__(self, p: IndexProgress) -> None:
        now = time.monotonic()
        if self.quiet or now - self.last < 0.1:
            return
        self.last = now
        count = f"{p.done}/{p.total}" if p.total else str(p.done)
        line = f"{p.phase:<8} {count:>13} {p.current[-60:]}"
        sys.stderr.write(("\r\x1b[K" + line) if self.tty else line + "\n")
        sys.stderr.flush()

    def end(self) -> None:
        if self.tty and not self.quiet:
            sys.stderr.write("\r\x1b[K")


def cmd_index(args: argparse.Namespace) -> int:
    """engram index."""
    with open_project(args) as project:
        graph = project.build_graph(chunks=not args.no_chunks)
        progress = _Progress(args.quiet or args.json)
        try:
            report = graph.index(progress, force=args.force)
        finally:
            progress.end()
        stats = graph.stats()
    data = report.as_dict()
    data.update({"nodes": stats["nodes"], "edges": stats["edges"], "modules_total": stats["modules"],
                 "code_chunks_total": stats["code_chunks"], "closure_rows_total": stats["closure_rows"]})

    outcome = index_outcome(report)
    data["outcome"] = outcome.code
    if outcome.code == "unreadable_folder":
        raise CliError(f"cannot read this folder ({outcome.reason}); nothing was indexed, check its permissions")

    def human() -> str:
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(report.skipped.items())) or "none"
        said = _OUTCOME_WORDS.get(outcome.code, "").format(n=outcome.other_files)
        if outcome.too_large:
            said += f"{outcome.too_large} file(s) skipped as too large (over 1 MB).\n"
        return said + (f"Indexed {report.indexed} files ({report.partial} with syntax errors), "
                f"{report.unchanged} unchanged, {report.deleted} removed, skipped: {reasons}\n"
                f"{stats['nodes']} nodes, {stats['edges']} edges, {stats['modules']} modules, "
                f"{stats['code_chunks']} code chunks, {stats['closure_rows']} closure rows "
                f"in {report.seconds:.2f}s")
    emit(args, data, human)
    if report.cancelled:
        raise CliError("indexing was cancelled", 130)
    return 0


_OUTCOME_WORDS = {
    "no_source_files": "No source code here: {n} file(s), none of a kind Engram reads. Is this the right folder?\n",
    "empty_folder": "This folder is empty: there is nothing to index.\n",
}


def _levels_text(result: dict[str, Any], verb: str) -> str:
    lines = [f"{verb} {result['target']} ({result['kind']}), depth <= {result['depth']}:"]
    if not result["levels"]:
        lines.append("  nothing")
    for lv in result["levels"]:
        lines.append(f"  depth {lv['depth']}: {len(lv['files'])} file(s), {len(lv['symbols'])} symbol(s)")
        lines.extend(f"    {f}" for f in lv["files"])
        lines.extend(f"    {s['symbol']}  [{s['type']}, via {' > '.join(s['via'])}]" for s in lv["symbols"])
    return "\n".join(lines)


def _query(args: argparse.Namespace, dependents: bool) -> int:
    with open_project(args) as project:
        graph = project.graph
        if not graph.stats()["nodes"]:
            raise CliError("the project has not been indexed yet; run `engram index` first")
        try:
            result = (graph.queries.impact if dependents else graph.queries.dependencies)(
                args.target, args.depth)
        except _not_found() as exc:
            raise CliError(str(exc)) from exc
    emit(args, result, lambda: _levels_text(result, "Dependents of" if dependents else "Dependencies of"))
    return 0


def cmd_impact(args: argparse.Namespace) -> int:
    """engram impact TARGET."""
    return _query(args, True)


def cmd_deps(args: argparse.Namespace) -> int:
    """engram deps TARGET."""
    return _query(args, False)


def cmd_modules(args: argparse.Namespace) -> int:
    """engram modules."""
    with open_project(args) as project:
        data = project.graph.modules()

    def human() -> str:
        lines = [f"{m['name']}: {m['file_count']} file(s)" for m in data["modules"]]
        lines += [f"{d['from']} -> {d['to']}: {d['imports']} import(s)" for d in data["dependencies"][:30]]
        return "\n".join(lines)
    emit(args, data, human)
    return 0


def _not_found() -> type[Exception]:
    from desktop.memory.graph.queries import GraphTargetNotFound

    return GraphTargetNotFound
