"""`engram search`: hybrid memory search from the command line, one query or a batch.

Before searching, memories that have no vector yet (added by `engram add` or
`engram import` in earlier runs) are embedded in batches, outside any write
transaction, so the dense path sees them too. A long import is embedded at most
for ``--embed-timeout`` seconds; the rest is searched by BM25 and embedded by
the next run.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from desktop.cli.common import CliError, add_common, open_project, sql_int, terminal_safe
from desktop.memory.retrieval.types import PHASES, SearchResponse

log = logging.getLogger("engram.cli")

_FILTER_KEYS = {"limit", "types", "type", "files", "modules", "scope", "min_confidence", "exclude_ids", "phase",
                "touched_files", "mode", "explain", "code"}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `engram search` to the parser."""
    p = sub.add_parser("search", help="search memories (BM25 + embeddings + graph)")
    add_common(p)
    p.add_argument("query", nargs="?", help="what to look for")
    p.add_argument("--limit", "-k", type=sql_int, default=10)
    p.add_argument("--type", action="append", default=[], dest="types", help="only this type (repeatable)")
    p.add_argument("--file", action="append", default=[], dest="files", help="only memories about this file")
    p.add_argument("--module", action="append", default=[], dest="modules")
    p.add_argument("--scope", action="append", default=[])
    p.add_argument("--min-confidence", type=float, default=None)
    p.add_argument("--phase", choices=PHASES, default=None)
    p.add_argument("--explain", action="store_true", help="say which paths found each result and why it ranks")
    p.add_argument("--code", action="store_true",
                   help="also search the code index (by default only memories: what was taught and learned)")
    p.add_argument("--batch", type=Path, default=None,
                   help='JSON Lines file of queries ({"query": "...", "limit": K, ...}); one answer per line')
    p.add_argument("--embed-timeout", type=float, default=300.0,
                   help="seconds to spend embedding memories that have no vector yet (default 300)")
    p.set_defaults(func=cmd_search)


def _answer(resp: SearchResponse, explain: bool) -> dict[str, Any]:
    return {"results": [r.to_dict(explain=explain) for r in resp.results], "degraded": resp.degraded,
            "query_type": resp.query_type, "skipped": resp.skipped}


def _human(resp: SearchResponse, explain: bool) -> str:
    if not resp.results:
        return "No memories found."
    lines = []
    for r in resp.results:
        m = r.memory
        text = " ".join(m.content.split())
        text = text if len(text) <= 100 else text[:99] + "…"
        ext = f" ({m.external_id})" if m.external_id else ""
        lines.append(f"#{m.id:<6}{ext} {r.score:6.3f}  {m.type:<14} {text}")
        if explain:
            e = r.explanation
            paths = ", ".join(f"{p} #{rank}" for p, rank in e.paths.items()) or "session neighbour"
            extras = ", ".join(f"{k} {v:+.3f}" for k, v in e.boosts.items())
            mult = ", ".join(f"{k} x{v:.2f}" for k, v in e.multipliers.items())
            lines.append(f"         found by {paths}; relevance {e.relevance:.3f}"
                         + (f"; boosts {extras}" if extras else "") + f"; {mult}")
    return "\n".join(lines)


def _request(line: str, number: int) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:  # what json.loads raises for a str that is not JSON
        raise CliError(f"batch line {number}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("query"), str) or not data["query"].strip():
        raise CliError(f"batch line {number}: needs a non-empty \"query\" string")
    unknown = set(data) - _FILTER_KEYS - {"query", "id"}
    if unknown:
        raise CliError(f"batch line {number}: unknown keys {', '.join(sorted(unknown))}")
    if "type" in data and "types" not in data:
        data["types"] = [data.pop("type")]
    for key in ("types", "files", "modules", "scope", "touched_files"):
        if isinstance(data.get(key), str):
            data[key] = [data[key]]
    return data


def cmd_search(args: argparse.Namespace) -> int:
    """engram search."""
    if (args.query is None) == (args.batch is None):
        raise CliError("give either a QUERY or --batch FILE")
    if args.limit < 1:
        raise CliError("--limit must be at least 1")
    if args.query is not None and not args.query.strip():
        raise CliError("the query is empty: give some words or identifiers to look for")
    requests: list[dict[str, Any]] = []
    if args.batch is not None:
        try:
            text = args.batch.read_text(encoding="utf-8")
        except OSError as exc:
            raise CliError(f"cannot read {args.batch}: {exc.strerror or exc}") from None
        requests = [_request(line, n) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    with open_project(args) as project:
        search = project.build_search(start_indexer=False)
        done = search.sync_vectors(timeout_s=args.embed_timeout)
        if done:
            log.info("embedded %d memories before searching", done)
        if search.embeddings is not None:
            have, live = search.embeddings.coverage()
            if have < live:
                sys.stderr.write(f"engram: {live - have} memories not embedded yet; they are found by keywords "
                                 f"only this time\n")
        if args.batch is not None:
            for req in requests:
                explain = bool(req.get("explain", args.explain))
                resp = _run(search, req["query"], req, args)
                answer = _answer(resp, explain)
                if "id" in req:
                    answer["id"] = req["id"]
                answer["query"] = req["query"]
                sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
            return 0
        resp = _run(search, args.query, {}, args)
        if args.json:
            sys.stdout.write(json.dumps({"query": args.query, **_answer(resp, args.explain)}, ensure_ascii=False)
                             + "\n")
        else:
            sys.stdout.write(terminal_safe(_human(resp, args.explain)) + "\n")
    return 0


def _run(search: Any, query: str, req: dict[str, Any], args: argparse.Namespace) -> SearchResponse:
    try:
        return search.search(
            query, limit=int(req.get("limit", args.limit)), types=req.get("types") or args.types or None,
            files=req.get("files") or args.files or None, modules=req.get("modules") or args.modules or None,
            scope=req.get("scope") or args.scope or None,
            min_confidence=req.get("min_confidence", args.min_confidence),
            exclude_ids=tuple(req.get("exclude_ids", ())), phase=req.get("phase", args.phase),
            touched_files=tuple(req.get("touched_files", ())), mode=req.get("mode", "reactive"),
            explain=bool(req.get("explain", args.explain)), code=bool(req.get("code", args.code)))
    except (ValueError, TypeError) as exc:
        raise CliError(f"bad search request: {exc}") from None
