"""Read side of the code graph: impact, dependencies, neighbours, modules, stats.

Everything runs on the caller's read connection (``db.reads.conn()``) and looks only
at fresh edges: the closure is maintained over edges with ``stale_at IS NULL`` and
the edge fallbacks filter the same way. See :mod:`closure` for the direction
convention (ancestor depends on descendant).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from desktop.memory.graph.closure import DEFAULT_DEPTH, FORWARD_TYPES, REVERSED_TYPES
from desktop.memory.graph.model import SYMBOL_TYPES
from desktop.memory.store.database import Database
from desktop.memory.store.errors import EngramError
from desktop.memory.store.live import live_memory

log = logging.getLogger("engram.graph")

_FWD = ",".join(repr(t) for t in FORWARD_TYPES)
_REV = ",".join(repr(t) for t in REVERSED_TYPES)


class GraphTargetNotFound(EngramError):
    """The file or symbol named as an impact target is not in the graph."""

    code = "graph_target_not_found"


@dataclass(frozen=True)
class Target:
    """A resolved query target: the node ids it stands for and the file it lives in."""

    text: str
    kind: str  # file | symbol
    file: str
    node_ids: tuple[str, ...]


def _marks(n: int) -> str:
    return ",".join("?" * n)


class GraphQueries:
    """Read-only questions about one project's graph."""

    def __init__(self, db: Database, *, closure_depth: int = DEFAULT_DEPTH) -> None:
        self.db = db
        self.closure_depth = closure_depth

    def _conn(self) -> Any:
        return self.db.reads.conn()

    # -- targets ---------------------------------------------------------------
    def resolve(self, target: str) -> Target:
        """Turn ``path`` or ``path:symbol`` into node ids. Raises GraphTargetNotFound."""
        text = target.strip().replace("\\", "/").removeprefix("./")
        conn = self._conn()
        fid = f"file:{text}"
        if conn.execute("SELECT 1 FROM graph_nodes WHERE id=?", (fid,)).fetchall():
            syms = [r[0] for r in conn.execute(
                "SELECT id FROM graph_nodes WHERE file_path=? AND type<>'file'", (text,))]
            return Target(text, "file", text, (fid, *syms))
        path, sep, symbol = text.rpartition(":")
        if sep and path and symbol:
            exact = f"sym:{path}:{symbol}"
            if conn.execute("SELECT 1 FROM graph_nodes WHERE id=?", (exact,)).fetchall():
                return Target(text, "symbol", path, (exact,))
            # `path:method` may name `Class.method`: accept a unique dotted suffix.
            found = [r[0] for r in conn.execute(
                "SELECT id FROM graph_nodes WHERE file_path=? AND (label=? OR label LIKE ?) AND type<>'file'",
                (path, symbol, f"%.{symbol}"))]
            if found:
                return Target(text, "symbol", path, tuple(sorted(found)))
            known = conn.execute("SELECT 1 FROM graph_nodes WHERE id=?", (f"file:{path}",)).fetchall()
            if known:
                raise GraphTargetNotFound(f"No symbol '{symbol}' in {path}.")
        raise GraphTargetNotFound(f"'{target}' is not an indexed file or symbol of this project.")

    # -- impact / dependencies -------------------------------------------------
    def impact(self, target: str, depth: int = DEFAULT_DEPTH) -> dict[str, Any]:
        """What depends on ``target`` (importers, callers, subclasses, tests), grouped by depth."""
        return self._walk(self.resolve(target), depth, dependents=True)

    def dependencies(self, target: str, depth: int = DEFAULT_DEPTH) -> dict[str, Any]:
        """What ``target`` depends on (imports, callees, base classes), grouped by depth."""
        return self._walk(self.resolve(target), depth, dependents=False)

    def _closure_hits(self, ids: Sequence[str], depth: int, dependents: bool
                      ) -> dict[str, tuple[int, float, str, str]]:
        """node -> (depth, weight, path JSON, edge types JSON) of the nearest hit from any of ``ids``.

        The JSON stays undecoded: most callers need only depth and weight, and the
        impact answer decodes just the rows it reports as symbols.
        """
        mine, other = ("descendant_id", "ancestor_id") if dependents else ("ancestor_id", "descendant_id")
        best: dict[str, tuple[int, float, str, str]] = {}
        get = best.get
        conn = self._conn()
        for i in range(0, len(ids), 400):
            part = list(ids[i:i + 400])
            for node, d, path, types, w in conn.execute(
                    f"SELECT {other}, depth, path, edge_types, total_weight FROM graph_closure "
                    f"WHERE {mine} IN ({_marks(len(part))}) AND depth <= ?", [*part, depth]):
                cur = get(node)
                if cur is None or d < cur[0] or (d == cur[0] and w > cur[1]):
                    best[node] = (d, w, path, types)
        return best

    def _edge_level(self, frontier: Iterable[str], dependents: bool) -> dict[str, str]:
        """One hop over fresh edges (used beyond the closure's stored depth)."""
        out: dict[str, str] = {}
        conn = self._conn()
        for node in frontier:
            if dependents:
                rows = conn.execute(
                    f"SELECT from_id, type FROM graph_edges WHERE to_id=? AND stale_at IS NULL AND type IN ({_FWD}) "
                    f"UNION ALL SELECT to_id, type FROM graph_edges WHERE from_id=? AND stale_at IS NULL "
                    f"AND type IN ({_REV})", (node, node))
            else:
                rows = conn.execute(
                    f"SELECT to_id, type FROM graph_edges WHERE from_id=? AND stale_at IS NULL AND type IN ({_FWD}) "
                    f"UNION ALL SELECT from_id, type FROM graph_edges WHERE to_id=? AND stale_at IS NULL "
                    f"AND type IN ({_REV})", (node, node))
            for nid, etype in rows:
                out.setdefault(nid, etype)
        return out

    def _walk(self, tgt: Target, depth: int, *, dependents: bool) -> dict[str, Any]:
        depth = max(1, int(depth))
        hits = self._closure_hits(tgt.node_ids, min(depth, self.closure_depth), dependents)
        exclude = set(tgt.node_ids)
        if depth > self.closure_depth:
            frontier = [n for n, h in hits.items() if h[0] == self.closure_depth]
            for d in range(self.closure_depth + 1, depth + 1):
                level = {n: t for n, t in self._edge_level(frontier, dependents).items()
                         if n not in hits and n not in exclude}
                for n, t in level.items():
                    hits[n] = (d, 0.0, "[]", json.dumps([t]))
                frontier = list(level)
                if not frontier:
                    break
        info = self._nodes([n for n in hits if n not in exclude])
        levels: dict[int, dict[str, Any]] = {}
        file_depth: dict[str, int] = {}
        for node, (d, w, path, types) in sorted(hits.items(), key=lambda kv: (kv[1][0], -kv[1][1], kv[0])):
            meta = info.get(node)
            if meta is None:
                continue
            ntype, label, fpath = meta
            if tgt.kind == "file" and fpath == tgt.file:
                continue  # a file's own symbols are the target, not its dependents
            bucket = levels.setdefault(d, {"depth": d, "files": [], "symbols": [], "external": []})
            if ntype in SYMBOL_TYPES:
                bucket["symbols"].append({"symbol": f"{fpath}:{label}", "type": ntype, "file": fpath,
                                          "via": json.loads(types), "weight": round(w, 4),
                                          "path": json.loads(path)})
            elif ntype == "module" and node.startswith("ext:"):
                bucket["external"].append(label)
            if fpath and fpath not in file_depth:
                file_depth[fpath] = d
                bucket["files"].append(fpath)
        ordered = [levels[d] for d in sorted(levels)]
        return {"target": tgt.text, "kind": tgt.kind, "file": tgt.file,
                "direction": "dependents" if dependents else "dependencies", "depth": depth,
                "levels": ordered, "total_files": len(file_depth),
                "total_symbols": sum(len(lv["symbols"]) for lv in ordered),
                "tests": sorted(f for f in file_depth if _is_test(f))}

    def _nodes(self, ids: Sequence[str]) -> dict[str, tuple[str, str, str | None]]:
        out: dict[str, tuple[str, str, str | None]] = {}
        conn = self._conn()
        for i in range(0, len(ids), 400):
            part = list(ids[i:i + 400])
            for nid, ntype, label, fpath in conn.execute(
                    f"SELECT id, type, label, file_path FROM graph_nodes WHERE id IN ({_marks(len(part))})", part):
                out[nid] = (ntype, label, fpath)
        return out

    # -- retrieval support -----------------------------------------------------
    def neighbours(self, files: Sequence[str], depth: int = 1) -> list[dict[str, Any]]:
        """Files related to ``files`` within ``depth`` in either direction, strongest first.

        Used by the retrieval graph path and neighbourhood boost; score = weight / depth.
        """
        if not files:
            return []
        conn = self._conn()
        ids: list[str] = []
        for f in files:
            ids.append(f"file:{f}")
            ids.extend(r[0] for r in conn.execute("SELECT id FROM graph_nodes WHERE file_path=? AND type<>'file'",
                                                  (f,)))
        depth = max(1, min(int(depth), self.closure_depth))
        scores: dict[str, dict[str, Any]] = {}
        own = set(files)
        for direction, dependents in (("dependent", True), ("dependency", False)):
            hits = self._closure_hits(ids, depth, dependents)
            info = self._nodes(list(hits))
            for node, (d, w, _path, _types) in hits.items():
                fpath = info.get(node, ("", "", None))[2]
                if not fpath or fpath in own:
                    continue
                score = w / d
                cur = scores.get(fpath)
                if cur is None:
                    scores[fpath] = {"file": fpath, "depth": d, "score": score, "direction": direction}
                else:
                    if cur["direction"] != direction:
                        cur["direction"] = "both"
                    cur["depth"] = min(cur["depth"], d)
                    cur["score"] = max(cur["score"], score)
        return sorted(scores.values(), key=lambda s: (-s["score"], s["depth"], s["file"]))

    # -- modules and stats -----------------------------------------------------
    def modules(self) -> dict[str, Any]:
        """Files per module and import counts between modules."""
        conn = self._conn()
        members: dict[str, list[str]] = {}
        for path, module in conn.execute("SELECT file_path, module FROM graph_files WHERE status<>'skipped'"
                                         " ORDER BY file_path"):
            members.setdefault(module or ".", []).append(path)
        deps = [{"from": a, "to": b, "imports": n} for a, b, n in conn.execute(
            "SELECT fa.module, fb.module, count(*) FROM graph_edges e "
            "JOIN graph_nodes na ON na.id = e.from_id JOIN graph_nodes nb ON nb.id = e.to_id "
            "JOIN graph_files fa ON fa.file_path = na.file_path JOIN graph_files fb ON fb.file_path = nb.file_path "
            "WHERE e.type='imports' AND e.stale_at IS NULL AND na.type='file' AND nb.type='file' "
            "AND fa.module IS NOT fb.module GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2")]
        return {"modules": [{"name": m, "files": fs, "file_count": len(fs)} for m, fs in sorted(members.items())],
                "dependencies": deps}

    def module_of(self, path: str) -> str | None:
        """The module a file belongs to (None when unknown)."""
        rows = self._conn().execute("SELECT module FROM graph_files WHERE file_path=?", (path,)).fetchall()
        return rows[0][0] if rows else None

    def stats(self) -> dict[str, Any]:
        """Counts for dashboards and the CLI summary."""
        conn = self._conn()

        def grouped(sql: str) -> dict[str, int]:
            return {str(k): int(v) for k, v in conn.execute(sql)}

        def one(sql: str) -> int:
            return int(conn.execute(sql).fetchall()[0][0])

        return {
            "nodes": one("SELECT count(*) FROM graph_nodes"),
            "nodes_by_type": grouped("SELECT type, count(*) FROM graph_nodes GROUP BY type"),
            "edges": one("SELECT count(*) FROM graph_edges WHERE stale_at IS NULL"),
            "edges_by_type": grouped("SELECT type, count(*) FROM graph_edges WHERE stale_at IS NULL GROUP BY type"),
            "stale_edges": one("SELECT count(*) FROM graph_edges WHERE stale_at IS NOT NULL"),
            "closure_rows": one("SELECT count(*) FROM graph_closure"),
            "files_by_status": grouped("SELECT status, count(*) FROM graph_files GROUP BY status"),
            "skip_reasons": grouped("SELECT skip_reason, count(*) FROM graph_files WHERE status='skipped'"
                                    " GROUP BY skip_reason"),
            "modules": one("SELECT count(DISTINCT module) FROM graph_files WHERE status<>'skipped'"),
            "code_chunks": one("SELECT count(*) FROM memories WHERE source='code_index' AND type='code'"),
        }


def _is_test(path: str) -> bool:
    from desktop.memory.text.file_kinds import is_test_file

    return is_test_file(path)


def module_memory_counts(conn: Any) -> dict[str, int]:
    """Live, non-code memories per module: named in ``related_modules`` or about a file of it.

    The one count the module map and the health dashboard both show (each memory once per module).
    """
    rows = conn.execute(
        "SELECT x.module, count(DISTINCT x.memory_id) FROM ("
        " SELECT mm.module AS module, mm.memory_id AS memory_id FROM memory_modules mm"
        " UNION SELECT coalesce(f.module, '.'), mf.memory_id FROM memory_files mf"
        " JOIN graph_files f ON f.file_path = mf.file_path) x"
        f" JOIN memories m ON m.id = x.memory_id WHERE {live_memory('m')} GROUP BY 1")
    return {str(module): int(n) for module, n in rows}
