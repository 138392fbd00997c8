"""Module boundaries from the import graph: Louvain communities, named by directory."""

from __future__ import annotations

import hashlib
import logging
import posixpath
from collections import defaultdict
from collections.abc import Iterable

import networkx as nx
from networkx.algorithms.community import louvain_communities

from .model import parent_dir

log = logging.getLogger("engram.graph")


def _common_dir(files: list[str]) -> str:
    dirs = [parent_dir(f) for f in files]
    common = posixpath.commonpath(dirs) if all(dirs) else ""
    # commonpath works on whole components, so 'src/a' and 'src/ab' give 'src'.
    return common


def _top_dir(rel_path: str) -> str:
    return rel_path.split("/", 1)[0] if "/" in rel_path else "."


def _tie_breaking_weight(a: str, b: str) -> float:
    """1 plus a tiny, deterministic amount per edge.

    networkx 3.6.1's Louvain can loop forever when two moves gain exactly the same and
    round-off makes each look better in turn (networkx#8739, fixed upstream by #8757, not
    released yet): an import graph as small as ten files hung indexing. Distinct weights make
    exact ties vanish while leaving every real difference (~1/edges) far above the nudge (~1e-6).
    """
    digest = hashlib.blake2b(f"{a}\0{b}".encode(), digest_size=4).digest()
    return 1.0 + int.from_bytes(digest, "big") % 1_000_003 * 1e-9


def detect_modules(import_edges: Iterable[tuple[str, str]], files: Iterable[str],
                   resolution: float = 1.0, seed: int = 0) -> dict[str, str]:
    """Map each file to a module name using seeded Louvain on the undirected import graph.

    A community is named by the longest common directory of its files, falling back
    to the directory of its most central (highest degree) file; clashing names get
    ``#2``, ``#3`` suffixes in a deterministic order. Files with no import edges are
    grouped by their top-level directory (``.`` for the project root).
    """
    file_list = sorted(set(files))
    known = set(file_list)
    graph = nx.Graph()
    for a, b in import_edges:
        if a in known and b in known and a != b:
            graph.add_edge(a, b)
    result: dict[str, str] = {}
    names_used: dict[str, int] = defaultdict(int)
    if graph.number_of_nodes():
        # Sorted insertion plus a fixed seed makes Louvain reproducible run to run.
        ordered = nx.Graph()
        ordered.add_nodes_from(sorted(graph.nodes))
        for a, b in sorted(tuple(sorted(e)) for e in graph.edges):
            ordered.add_edge(a, b, weight=_tie_breaking_weight(a, b))
        communities = louvain_communities(ordered, weight="weight", resolution=resolution, seed=seed)
        groups = sorted((sorted(c) for c in communities), key=lambda c: (-len(c), c[0]))
        for members in groups:
            name = _common_dir(members)
            if not name:
                central = max(members, key=lambda f: (ordered.degree(f), [-ord(ch) for ch in f]))
                name = parent_dir(central) or "."
            names_used[name] += 1
            if names_used[name] > 1:
                name = f"{name}#{names_used[name]}"
            for f in members:
                result[f] = name
    for f in file_list:
        if f not in result:
            result[f] = _top_dir(f)
    log.debug("detected %d modules over %d files", len(set(result.values())), len(result))
    return result
