"""The code graph's closure, kept up to date inside the write that changes its edges.

The closure (see :mod:`closure` for the direction convention) is updated in the same
transaction as the edges, incrementally and row by row: only rows whose stored path used
a removed hop, or whose new best path uses an added hop, are written or deleted (see
:class:`ClosureTracker`). Sources that may gain a path are the added hops' tails plus
every node that reached a tail within ``depth - 1`` hops *before* the change; the old
closure is enough to find them, because on any new path the first changed edge is
reached through unchanged edges only. Their reach is recomputed in memory from
neighbours fetched a BFS level at a time, so a widely imported file costs a few
queries and a few hundred in-memory BFS runs, not thousands of queries and rewrites.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from desktop.memory.graph.closure import (
    FORWARD_TYPES,
    REVERSED_TYPES,
    ClosureRow,
    Params,
    Step,
    dep_step,
    reach_through,
)
from desktop.memory.store.writer import Tx

CHUNK = 500  # SQLite variable limit is generous, but keep IN lists short


def ids_in(tx: Tx, sql: str, ids: Sequence[Any]) -> list[tuple[Any, ...]]:
    """Run ``sql`` (with one ``{marks}`` placeholder) over ids in chunks."""
    out: list[tuple[Any, ...]] = []
    for i in range(0, len(ids), CHUNK):
        part = list(ids[i:i + CHUNK])
        out.extend(tx.execute(sql.format(marks=",".join("?" * len(part))), part).fetchall())
    return out


class ClosureTracker:
    """Collects the hops that changed (added, removed), then fixes the affected closure rows.

    Exactness rests on two facts about reach() (every prefix of a stored path is the
    stored path of its end node, and the choice per pair is a total order):

    * a source none of whose stored paths uses a removed hop keeps every row, except
      rows whose new best path uses an added hop -- so for it only those rows are written;
    * a source can only gain a path through an added hop if it reached the hop's tail
      within ``depth - 1`` hops before the change (read from the old closure).

    Rows whose stored path went through a removed hop are found from the rows that end
    with that hop (see :meth:`affected`); they are rewritten from the fresh reach, or
    deleted when no path is left. Everything else is left alone.
    """

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self.added: set[Step] = set()
        self.removed: set[Step] = set()
        self.dead: set[str] = set()

    @property
    def changed(self) -> bool:
        """True when some closure hop changed or some node died."""
        return bool(self.added or self.removed or self.dead)

    def note(self, from_id: str, to_id: str, etype: str, *, added: bool) -> None:
        """Record one edge that appeared (``added``) or disappeared."""
        step = dep_step(from_id, to_id, etype)
        if step is not None:
            (self.added if added else self.removed).add(step)

    def affected(self, tx: Tx) -> tuple[set[str], dict[str, set[str]]]:
        """(sources that may gain rows through an added hop, {source: rows whose path used a removed hop}).

        Reads the OLD closure: call it before any closure row is changed. A stored path
        through a removed hop ``u -> v`` has the stored path of ``(source, v)`` as its
        prefix, and that one ends with the hop: so the rows ending with a removed hop
        are found by descendant, and the rest are the source's rows with ``v`` at the
        same position of the path.
        """
        tails = sorted({s[0] for s in self.added})
        grow = set(tails)
        for (anc,) in ids_in(tx, "SELECT DISTINCT ancestor_id FROM graph_closure WHERE "
                              f"descendant_id IN ({{marks}}) AND depth <= {self.depth - 1}", tails):
            grow.add(anc)
        broken: dict[str, set[str]] = {}
        cuts: list[tuple[str, str, int]] = []
        removed = sorted(self.removed)
        for i in range(0, len(removed), 2000):
            for anc, desc, depth in tx.execute(
                    "WITH r(u, v, t) AS (SELECT value->>0, value->>1, value->>2 FROM json_each(?))"
                    " SELECT c.ancestor_id, c.descendant_id, c.depth FROM r JOIN graph_closure c"
                    " ON c.descendant_id = r.v WHERE c.path->>'$[#-2]' = r.u AND c.edge_types->>'$[#-1]' = r.t",
                    (json.dumps(removed[i:i + 2000]),)):
                broken.setdefault(anc, set()).add(desc)
                if depth < self.depth:
                    cuts.append((anc, desc, depth))
        for i in range(0, len(cuts), 2000):
            for anc, desc in tx.execute(
                    # A path through v reaches only what v reached (within the rest of the
                    # bound): look those up by primary key instead of scanning the source.
                    "WITH b(a, v, k) AS (SELECT value->>0, value->>1, value->>2 FROM json_each(?))"
                    " SELECT c.ancestor_id, c.descendant_id FROM b"  # CROSS JOIN: keep this join order
                    " CROSS JOIN graph_closure x ON x.ancestor_id = b.v AND x.depth <= ? - b.k"
                    " CROSS JOIN graph_closure c ON c.ancestor_id = b.a AND c.descendant_id = x.descendant_id"
                    " WHERE c.depth > b.k AND c.path->>('$[' || b.k || ']') = b.v",
                    (json.dumps(cuts[i:i + 2000]), self.depth)):
                broken[anc].add(desc)
        return grow, broken

    def recompute(self, tx: Tx, affected: tuple[set[str], dict[str, set[str]]]) -> int:
        """Bring the closure rows of the affected sources up to date; returns rows written or deleted.

        Set-based: the fresh neighbours of every node within ``depth - 1`` hops of the
        sources are fetched level by level in a few IN-list queries (not one query per
        node) and each source's reach is recomputed in memory; only the rows that can
        have changed (new best path through an added hop, old path through a removed
        one) are written, and broken rows with no path left are deleted.
        """
        grow, broken = affected
        dead = sorted(self.dead)
        if dead:
            ids_in(tx, "DELETE FROM graph_closure WHERE descendant_id IN ({marks})", dead)
            ids_in(tx, "DELETE FROM graph_closure WHERE ancestor_id IN ({marks})", dead)
        sources = sorted((grow | broken.keys()) - self.dead)
        if not sources:
            return 0
        adj = fresh_adjacency(tx, sources, self.depth - 1)
        empty: list[tuple[str, str, float]] = []

        def neighbours(node: str) -> list[tuple[str, str, float]]:
            return adj.get(node, empty)

        types_json: dict[tuple[str, ...], str] = {}
        write: list[Params] = []
        delete: list[tuple[str, str]] = []
        nothing: set[str] = set()
        for s in sources:
            lost = broken.get(s, nothing)
            rows = reach_through(s, neighbours, self.added, self.depth, types_json, lost)
            write.extend(rows)
            if lost:
                delete.extend((s, d) for d in lost.difference(r[1] for r in rows))
        if delete:
            tx.conn.executemany("DELETE FROM graph_closure WHERE ancestor_id=? AND descendant_id=?", delete)
        insert_closure_params(tx, write)
        return len(write) + len(delete)


def fresh_adjacency(tx: Tx, sources: Sequence[str], hops: int) -> dict[str, list[tuple[str, str, float]]]:
    """Dependency neighbours (head, type, weight) of every node within ``hops`` of ``sources``.

    Fresh edges only, read one BFS level at a time with IN lists; the result feeds
    :func:`reach` exactly as ``NEIGHBOURS_SQL`` per node would (order does not matter:
    reach() keeps the best candidate by a total order).
    """
    adj: dict[str, list[tuple[str, str, float]]] = {}
    level = list(dict.fromkeys(sources))
    for _ in range(hops + 1):
        todo = [n for n in level if n not in adj]
        if not todo:
            break
        for n in todo:
            adj[n] = []
        for head, tail, etype, weight in ids_in(tx, _BULK_NEIGHBOURS, todo):
            adj[tail].append((head, etype, weight))
        level = list(dict.fromkeys(h for n in todo for h, _, _ in adj[n]))
    return adj


_FWD_IN = ",".join(repr(t) for t in FORWARD_TYPES)
_REV_IN = ",".join(repr(t) for t in REVERSED_TYPES)
# (head, tail, type, weight) of the fresh dependency edges leaving each listed tail; the ids
# go in once (as a JSON array) and both halves of the UNION join against them by index.
_BULK_NEIGHBOURS = (
    "WITH ids(id) AS (SELECT value FROM json_each(json_array({marks}))) "
    "SELECT e.to_id, e.from_id, e.type, e.weight FROM ids JOIN graph_edges e ON e.from_id = ids.id "
    f"WHERE e.stale_at IS NULL AND e.type IN ({_FWD_IN}) "
    "UNION ALL "
    "SELECT e.from_id, e.to_id, e.type, e.weight FROM ids JOIN graph_edges e ON e.to_id = ids.id "
    f"WHERE e.stale_at IS NULL AND e.type IN ({_REV_IN})"
)


def insert_closure(tx: Tx, rows: Iterable[ClosureRow]) -> None:
    """Insert closure rows (the caller removed the ones they replace)."""
    insert_closure_params(tx, (r.as_params() for r in rows))


def insert_closure_params(tx: Tx, params: Iterable[Params]) -> None:
    """Insert closure rows given as INSERT parameters (see ``ClosureRow.as_params``)."""
    tx.conn.executemany(
        "INSERT OR REPLACE INTO graph_closure(ancestor_id, descendant_id, depth, path, edge_types,"
        " total_weight) VALUES (?,?,?,?,?,?)", params)
