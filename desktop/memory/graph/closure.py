"""The bounded transitive closure of the code graph: one deterministic BFS used everywhere.

Direction convention (documented once, used by store, queries and tests):

* A *dependency edge* ``u -> v`` means "u depends on v": ``imports``,
  ``imports_symbol``, ``calls``, ``extends`` and ``implements`` are stored that way
  already; ``tested_by`` is stored ``target -> test`` and is read reversed (the test
  depends on its target). ``defined_in`` is containment, not dependency, and is not
  in the closure (queries expand a file target to its symbols instead).
* A closure row ``(ancestor_id=u, descendant_id=v, depth=k)`` means u reaches v in
  k dependency edges (k <= the bound, 3 by default): u *depends on* v.
  ``dependencies(X)`` is ``WHERE ancestor_id = X`` (the primary key) and
  ``dependents(X)`` -- impact analysis, "what breaks if X changes" -- is
  ``WHERE descendant_id = X`` (``idx_gc_descendant``). Both are index lookups.
* One row per pair: the shortest depth; among paths of that depth the one with the
  highest ``total_weight`` (product of edge weights, so 1.0 is a certain direct
  dependency and weaker/inferred hops lower it); remaining ties go to the
  lexicographically smallest path. The choice is a pure function of the edge set,
  so an incrementally maintained closure equals one rebuilt from scratch.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass

DEFAULT_DEPTH = 3
FORWARD_TYPES: tuple[str, ...] = ("imports", "imports_symbol", "calls", "extends", "implements")
REVERSED_TYPES: tuple[str, ...] = ("tested_by",)
CLOSURE_TYPES: frozenset[str] = frozenset(FORWARD_TYPES + REVERSED_TYPES)

# Strength of one hop by type; multiplied by the edge's confidence (inferred < 1).
TYPE_WEIGHTS: dict[str, float] = {
    "imports": 1.0, "imports_symbol": 1.0, "calls": 1.0, "extends": 1.0, "implements": 1.0,
    "tested_by": 0.5, "defined_in": 1.0,
}
CONFIDENCE_VALUES: dict[str, float] = {"extracted": 1.0, "inferred": 0.7}

Neighbours = Callable[[str], Iterable[tuple[str, str, float]]]

# Fresh dependency neighbours of one node, in dependency direction: (head, type, weight).
NEIGHBOURS_SQL = (
    "SELECT to_id, type, weight FROM graph_edges WHERE from_id = ? AND stale_at IS NULL "
    f"AND type IN ({','.join(repr(t) for t in FORWARD_TYPES)}) "
    "UNION ALL "
    "SELECT from_id, type, weight FROM graph_edges WHERE to_id = ? AND stale_at IS NULL "
    f"AND type IN ({','.join(repr(t) for t in REVERSED_TYPES)})"
)


@dataclass(frozen=True, slots=True)
class ClosureRow:
    """One closure row: ancestor depends on descendant through ``path``."""

    ancestor_id: str
    descendant_id: str
    depth: int
    path: tuple[str, ...]
    edge_types: tuple[str, ...]
    total_weight: float

    def as_params(self) -> tuple[str, str, int, str, str, float]:
        """Column values for an INSERT."""
        return (self.ancestor_id, self.descendant_id, self.depth,
                json_list(self.path), json_list(self.edge_types), self.total_weight)


def json_list(items: tuple[str, ...]) -> str:
    """JSON array of strings; plain ids skip json.dumps (a third of the cold closure's time)."""
    raw = "".join(items)
    if '"' in raw or "\\" in raw or not raw.isprintable():
        return json.dumps(list(items))
    return '["' + '","'.join(items) + '"]' if items else "[]"


def edge_weight(edge_type: str, confidence: str) -> float:
    """The stored weight of an edge of this type and confidence label."""
    return TYPE_WEIGHTS.get(edge_type, 1.0) * CONFIDENCE_VALUES.get(confidence, 1.0)


Step = tuple[str, str, str]  # one hop in dependency direction: (tail, head, type)


def dep_step(from_id: str, to_id: str, edge_type: str) -> Step | None:
    """The hop an edge adds to reach() (tail, head, type), None if it is not in the closure."""
    if edge_type in REVERSED_TYPES:
        return (to_id, from_id, edge_type)
    if edge_type in FORWARD_TYPES:
        return (from_id, to_id, edge_type)
    return None


def dep_tail(from_id: str, to_id: str, edge_type: str) -> str | None:
    """The node whose reach an edge extends (its dependency-direction tail), None if not in the closure."""
    if edge_type in REVERSED_TYPES:
        return to_id
    if edge_type in FORWARD_TYPES:
        return from_id
    return None


def reach(source: str, neighbours: Neighbours, depth: int = DEFAULT_DEPTH) -> list[ClosureRow]:
    """Every node ``source`` depends on within ``depth`` hops, one row per node (see module doc)."""
    return [ClosureRow(source, head, level, path, types, weight)
            for head, level, path, types, weight in _bfs(source, neighbours, depth)]


Params = tuple[str, str, int, str, str, float]


JsonList = Callable[[tuple[str, ...]], str]


def reach_params(source: str, neighbours: Neighbours, depth: int = DEFAULT_DEPTH,
                 _types_json: dict[tuple[str, ...], str] | None = None,
                 encode: JsonList = json_list) -> list[Params]:
    """Like :func:`reach` but straight to INSERT parameters (no row objects; the hot path).

    ``encode`` turns paths and edge types into JSON; it must give :func:`json_list`'s text.
    """
    tj = {} if _types_json is None else _types_json
    out: list[Params] = []
    for head, level, path, types, weight in _bfs(source, neighbours, depth):
        t = tj.get(types)
        if t is None:
            t = tj[types] = encode(types)
        out.append((source, head, level, encode(path), t, weight))
    return out


def reach_through(source: str, neighbours: Neighbours, steps: set[Step], depth: int = DEFAULT_DEPTH,
                  _types_json: dict[tuple[str, ...], str] | None = None,
                  also: frozenset[str] | set[str] = frozenset()) -> list[Params]:
    """The rows of :func:`reach_params` whose path uses at least one of ``steps`` (or ends in ``also``).

    Same BFS and the same choice per node; each best path carries a flag saying
    whether it passed through one of the steps. Only the returned rows are JSON-encoded.
    """
    tj = {} if _types_json is None else _types_json
    frontier: dict[str, tuple[float, tuple[str, ...], tuple[str, ...], bool]] = {
        source: (1.0, (source,), (), False)}
    seen: set[str] = {source}
    out: list[Params] = []
    for level in range(1, depth + 1):
        nxt: dict[str, tuple[float, tuple[str, ...], tuple[str, ...], bool]] = {}
        get = nxt.get
        for node, (weight, path, types, hit) in frontier.items():
            for head, etype, ew in neighbours(node):
                if head in seen:
                    continue
                w = weight * ew
                cur = get(head)
                if cur is None or w > cur[0] or (
                        w == cur[0] and ((*path, head), (*types, etype)) < (cur[1], cur[2])):
                    nxt[head] = (w, (*path, head), (*types, etype), hit or (node, head, etype) in steps)
        if not nxt:
            break
        for head, (weight, path, types, hit) in nxt.items():
            if hit or head in also:
                t = tj.get(types)
                if t is None:
                    t = tj[types] = json_list(types)
                out.append((source, head, level, json_list(path), t, weight))
        seen.update(nxt)
        frontier = nxt
    return out


def _bfs(source: str, neighbours: Neighbours, depth: int
         ) -> list[tuple[str, int, tuple[str, ...], tuple[str, ...], float]]:
    """The BFS behind reach(): (head, level, path, types, weight) per reached node.

    A candidate replaces the current best of its head when its weight is higher, or equal
    with a smaller (path, types); tuples are only built for candidates that can win.
    """
    frontier: dict[str, tuple[float, tuple[str, ...], tuple[str, ...]]] = {source: (1.0, (source,), ())}
    seen: set[str] = {source}
    out: list[tuple[str, int, tuple[str, ...], tuple[str, ...], float]] = []
    for level in range(1, depth + 1):
        nxt: dict[str, tuple[float, tuple[str, ...], tuple[str, ...]]] = {}
        get = nxt.get
        for node, (weight, path, types) in frontier.items():
            for head, etype, ew in neighbours(node):
                if head in seen:
                    continue
                w = weight * ew
                cur = get(head)
                if cur is None or w > cur[0] or (
                        w == cur[0] and ((*path, head), (*types, etype)) < (cur[1], cur[2])):
                    nxt[head] = (w, (*path, head), (*types, etype))
        if not nxt:
            break
        for head, (weight, path, types) in nxt.items():
            out.append((head, level, path, types, weight))
        seen.update(nxt)
        frontier = nxt
    return out


def adjacency_from_rows(rows: Iterable[tuple[str, str, str, float]]) -> dict[str, list[tuple[str, str, float]]]:
    """Build the dependency adjacency from fresh (from_id, to_id, type, weight) edge rows."""
    adj: dict[str, list[tuple[str, str, float]]] = {}
    for from_id, to_id, etype, weight in rows:
        if etype in REVERSED_TYPES:
            adj.setdefault(to_id, []).append((from_id, etype, weight))
        elif etype in FORWARD_TYPES:
            adj.setdefault(from_id, []).append((to_id, etype, weight))
    return adj


def full_closure(adj: dict[str, list[tuple[str, str, float]]], depth: int = DEFAULT_DEPTH) -> Iterable[ClosureRow]:
    """Closure rows of every node with outgoing dependencies (a generator: rows are many)."""
    empty: list[tuple[str, str, float]] = []

    def neighbours(node: str) -> list[tuple[str, str, float]]:
        return adj.get(node, empty)

    for source in sorted(adj):
        yield from reach(source, neighbours, depth)


def full_closure_params(adj: dict[str, list[tuple[str, str, float]]], depth: int = DEFAULT_DEPTH,
                        encode: JsonList = json_list) -> Iterable[list[Params]]:
    """INSERT parameters of :func:`full_closure`, one list per source (same rows, same order)."""
    empty: list[tuple[str, str, float]] = []
    types_json: dict[tuple[str, ...], str] = {}

    def neighbours(node: str) -> list[tuple[str, str, float]]:
        return adj.get(node, empty)

    for source in sorted(adj):
        yield reach_params(source, neighbours, depth, types_json, encode)
