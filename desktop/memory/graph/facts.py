"""Per-file resolver facts kept in ``graph_files.facts``, and the symbol index rebuilt from them.

Resolving one changed file needs the symbols *and raw import statements* of every
other file (re-exports are followed through barrels and ``__init__`` files). The
nodes table already holds the symbols; the imports and package clause are stored
here as JSON, so the watcher and later runs rebuild the index with one query
instead of re-parsing the whole project.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterable
from typing import Any

from desktop.memory.graph.model import FileExtraction, GraphNode, RawImport, parent_dir
from desktop.memory.graph.resolve import SymbolIndex

log = logging.getLogger("engram.graph")


def dump(ex: FileExtraction) -> str:
    """Serialise what the resolver needs from an extraction besides its nodes."""
    return json.dumps({"imports": [[i.specifier, [list(n) for n in i.names], i.line, i.kind, i.alias]
                                   for i in ex.imports], "package": ex.package})


def _imports(blob: str | None) -> tuple[tuple[RawImport, ...], str | None]:
    if not blob:
        return (), None
    try:
        data = json.loads(blob)
        imps = tuple(RawImport(s, tuple((a, b) for a, b in names), line, kind, alias)
                     for s, names, line, kind, alias in data.get("imports", []))
        return imps, data.get("package")
    except (ValueError, TypeError) as exc:
        log.warning("unreadable graph facts, file will resolve without imports: %s", exc)
        return (), None


def load_index(conn: Any) -> SymbolIndex:
    """Build the project's SymbolIndex from the database (no parsing)."""
    symbols: dict[str, list[GraphNode]] = {}
    for nid, ntype, label, fpath, meta in conn.execute(
            "SELECT id, type, label, file_path, metadata FROM graph_nodes"
            " WHERE file_path IS NOT NULL AND type <> 'file'"):
        try:
            md = json.loads(meta or "{}")
        except ValueError:
            md = {}
        symbols.setdefault(fpath, []).append(GraphNode(nid, ntype, label, fpath, None, None, None, md))
    extractions: dict[str, FileExtraction] = {}
    files: set[str] = set()
    for path, language, status, blob in conn.execute(
            "SELECT file_path, language, status, facts FROM graph_files"):
        if status == "skipped":
            continue
        files.add(path)
        imps, package = _imports(blob)
        extractions[path] = FileExtraction(path, language, tuple(symbols.get(path, ())), (), imps,
                                           package=package)
    return SymbolIndex.build(extractions, files)


def shape(index: SymbolIndex, path: str) -> tuple[Any, ...]:
    """What other files' resolution depends on: symbol names/types, imports, package."""
    syms = tuple(sorted((q, s.type) for q, s in index.symbols.get(path, {}).items()))
    return syms, index.imports.get(path), index.packages.get(path)


def files_importing(index: SymbolIndex, paths: Iterable[str]) -> set[str]:
    """Files whose raw imports mention the stem of one of ``paths`` (new or deleted files
    may change what those imports resolve to)."""
    stems = set()
    for p in paths:
        name = p.rsplit("/", 1)[-1]
        stem = name.split(".", 1)[0]
        stems.add(parent_dir(p).rsplit("/", 1)[-1] if stem in ("__init__", "index", "mod") else stem)
    stems.discard("")
    if not stems:
        return set()
    out: set[str] = set()
    for f, imps in index.imports.items():
        for imp in imps:
            words = set(imp.specifier.replace("::", "/").replace(".", "/").split("/"))
            words.update(n for n, _ in imp.names)
            if words & stems:
                out.add(f)
                break
    return out


def guess_modules(conn: Any, paths: Iterable[str]) -> dict[str, str]:
    """Module for new files between full runs: the most common module of their folder."""
    out: dict[str, str] = {}
    for p in paths:
        d = parent_dir(p)
        rows = conn.execute("SELECT module FROM graph_files WHERE module IS NOT NULL AND file_path<>?"
                            " AND file_path LIKE ? AND status<>'skipped'", (p, f"{d}/%" if d else "%")).fetchall()
        same_dir = [m for (m,) in rows]
        if same_dir:
            out[p] = Counter(same_dir).most_common(1)[0][0]
        else:
            out[p] = p.split("/", 1)[0] if "/" in p else "."
    return out
