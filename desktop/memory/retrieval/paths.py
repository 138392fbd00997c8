"""The three candidate paths (BM25, dense, graph) and the session-neighbour lookup.

Each path returns ``[(memory_id, raw_score)]`` best first and never raises for
an empty or missing table: an unavailable path simply contributes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from desktop.memory.store.live import LIVE_SQL, ids_param
from desktop.memory.text.tokens import fts_match_query

__all__ = ["bm25_path", "graph_available", "graph_files", "graph_path", "session_neighbours"]

log = logging.getLogger("engram.retrieval")


def bm25_path(conn: Any, query: str, k: int) -> tuple[list[tuple[int, float]], str | None]:
    """Top-``k`` memories by FTS5 BM25 (higher is better) and the MATCH expression used.

    The MATCH is an OR of the query's code-aware terms (identifiers split into
    parts, stopwords dropped, every term quoted so user text is never syntax),
    so ``verify jwt`` finds ``verifyJwt``, ``verify_jwt`` and ``auth/verify/jwt.ts``.
    """
    match = fts_match_query(query, "or")
    if match is None:
        return [], None
    rows = conn.execute("SELECT rowid, bm25(memories_fts) AS score FROM memories_fts "
                        "WHERE memories_fts MATCH ? ORDER BY score LIMIT ?", (match, k)).fetchall()
    # FTS5's bm25() is negative, more negative = better; flip so bigger is better everywhere.
    return [(int(r), -float(s)) for r, s in rows], match


def _table_exists(conn: Any, name: str) -> bool:
    return bool(conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchall())


def _has_rows(conn: Any, table: str) -> bool:
    """True when ``table`` exists and holds at least one row (two index probes)."""
    return _table_exists(conn, table) and bool(conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchall())


def graph_available(conn: Any, graph: Any | None) -> bool:
    """Whether any graph source (co-access edges, code-graph closure) has data: a fresh project's
    empty tables let the graph path and boost be skipped without building any query."""
    if _has_rows(conn, "observer_co_access_edges"):
        return True
    return graph is not None and (_has_rows(conn, "graph_closure") or _has_rows(conn, "graph_edges"))


def graph_files(conn: Any, touched: Sequence[str], graph: Any | None, *, limit: int = 30) -> dict[str, float]:
    """Files near the ``touched`` ones with a closeness score in (0, 1]; touched files score 1.

    Sources: observer co-access edges (files used together in past sessions)
    and code-graph neighbours (imports/calls within one hop). Empty tables give {}.
    """
    touched = [f for f in dict.fromkeys(touched) if f]
    if not touched:
        return {}
    scores: dict[str, float] = dict.fromkeys(touched, 1.0)
    if _table_exists(conn, "observer_co_access_edges"):
        marks = ",".join("?" * len(touched))
        rows = conn.execute(
            f"SELECT file_a, file_b, weight FROM observer_co_access_edges WHERE (file_a IN ({marks}) "
            f"OR file_b IN ({marks})) AND weight > 0 ORDER BY weight DESC LIMIT ?",
            [*touched, *touched, limit]).fetchall()
        top = max((float(w) for _a, _b, w in rows), default=0.0) or 1.0
        for a, b, w in rows:
            for other in (a, b):
                if other not in touched:
                    scores[other] = max(scores.get(other, 0.0), 0.8 * float(w) / top)
    if graph is not None:
        try:
            near = graph.neighbours(touched, depth=1)
        except Exception as exc:  # a graph that is being rebuilt must not break search
            log.debug("graph neighbours unavailable: %s", exc)
            near = []
        top = max((float(n["score"]) for n in near), default=0.0) or 1.0
        for n in near[:limit]:
            f = n["file"]
            if f not in touched:
                scores[f] = max(scores.get(f, 0.0), 0.7 * float(n["score"]) / top)
    return scores


def graph_path(conn: Any, files: dict[str, float], k: int) -> list[tuple[int, float]]:
    """Memories linked (``memory_files``) to the scored files, best file score first."""
    if not files:
        return []
    names = list(files)
    best: dict[int, float] = {}
    for i in range(0, len(names), 400):
        chunk = names[i:i + 400]
        for mid, path in conn.execute(
                f"SELECT memory_id, file_path FROM memory_files WHERE file_path IN ({','.join('?' * len(chunk))})",
                chunk):
            score = files.get(path, 0.0)
            if score > best.get(int(mid), 0.0):
                best[int(mid)] = score
    ranked = sorted(best.items(), key=lambda kv: (-kv[1], -kv[0]))
    return ranked[:k]


# CROSS JOIN keeps the id list outside: without ANALYZE statistics (a new project) SQLite would
# otherwise walk every live memory and test it against each window (measured: 30 ms a search).
_WINDOWS_SQL = (f"SELECT m.id, m.session_id FROM json_each(?1) AS c CROSS JOIN memories AS m "
                f"ON m.id BETWEEN c.value - ?2 AND c.value + ?2 WHERE {LIVE_SQL} AND m.session_id IS NOT NULL")


def session_neighbours(conn: Any, ids: Sequence[int], window: int = 3,
                       known: dict[int, str | None] | None = None) -> dict[int, list[int]]:
    """For each memory, the live memories written just before and after it in the same session.

    A memory's meaning often sits in its neighbours (an answer right after the
    question, a fix right after the error), so the pipeline lets neighbours
    lend each other a share of their relevance. Looked up by primary key within
    ``window`` ids either side (one query for all candidates): sessions write
    their memories in runs, and a neighbour further away than that is rarely context.
    ``known`` (id -> session, None for no live session) is what one search has already
    read: only the other ids are looked up, and what is read is added to it.
    """
    if not ids:
        return {}
    session: dict[int, str | None] = {} if known is None else known
    probe = {int(i) + d for i in ids for d in range(-window, window + 1)} - {0} - session.keys()
    if probe:
        # One primary-key range per memory whose window is not all known: ~30 % cheaper than a
        # lookup per id (the rows of ids already known are read again, with the same sessions).
        if session:
            centres = sorted({int(i) for i in ids if any(int(i) + d in probe for d in range(-window, window + 1))})
        else:  # nothing known yet (the search's first lookup): every window is read
            centres = sorted(set(map(int, ids)))
        session.update(dict.fromkeys(probe))
        for mid, sid in conn.execute(_WINDOWS_SQL, (ids_param(centres), window)):
            session[int(mid)] = sid
    out: dict[int, list[int]] = {}
    for mid in ids:
        sid = session.get(int(mid))
        if sid is None:
            continue
        near = []
        for step in (-1, 1):
            for d in range(1, window + 1):
                other = int(mid) + step * d
                if session.get(other) == sid:
                    near.append(other)
                    break
        if near:
            out[int(mid)] = near
    return out
