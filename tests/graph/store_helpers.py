"""Helpers for the graph storage tests: a project folder plus its open database."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from desktop.memory.graph.closure import adjacency_from_rows, full_closure
from desktop.memory.graph.indexer import ProjectIndexer
from desktop.memory.graph.queries import GraphQueries
from desktop.memory.store.database import Database

FIXTURES = Path(__file__).parent / "fixtures"

CHAIN = {
    "d.py": "def fd():\n    return 1\n",
    "c.py": "from d import fd\n\n\ndef fc():\n    return fd()\n",
    "b.py": "from c import fc\n\n\ndef fb():\n    return fc()\n",
    "a.py": "from b import fb\n\n\ndef fa():\n    return fb()\n",
}


def write(root: Path, files: dict[str, str]) -> None:
    """Write text files under root."""
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def copy_fixture(lang: str, dest: Path) -> Path:
    """Copy a fixture repository into dest and return it."""
    shutil.copytree(FIXTURES / lang, dest)
    return dest


@contextmanager
def opened(tmp: Path, root: Path, *, chunks: bool = False) -> Iterator[tuple[Database, ProjectIndexer, GraphQueries]]:
    """An open database with an indexer and queries for ``root``."""
    db = Database(tmp / "graph.sqlite").open()
    try:
        yield db, ProjectIndexer(db, root, chunks=chunks), GraphQueries(db)
    finally:
        db.close()


def closure_rows(db: Database) -> set[tuple[object, ...]]:
    """The stored closure as a set of tuples."""
    return set(db.reads.conn().execute(
        "SELECT ancestor_id, descendant_id, depth, path, edge_types, round(total_weight, 9) FROM graph_closure"))


def rebuilt_rows(db: Database) -> set[tuple[object, ...]]:
    """The closure computed from scratch from the fresh edges."""
    adj = adjacency_from_rows(db.reads.conn().execute(
        "SELECT from_id, to_id, type, weight FROM graph_edges WHERE stale_at IS NULL").fetchall())
    out = set()
    for r in full_closure(adj):
        a, d, depth, path, types, w = r.as_params()
        out.add((a, d, depth, path, types, round(w, 9)))
    return out


def fresh_edges(db: Database, origin: str | None = None) -> set[tuple[str, str, str]]:
    """Fresh edges (from, to, type), optionally only those owned by one file."""
    sql = "SELECT from_id, to_id, type FROM graph_edges WHERE stale_at IS NULL"
    params: tuple[str, ...] = ()
    if origin:
        sql += " AND origin_file=?"
        params = (origin,)
    return set(db.reads.conn().execute(sql, params))


def by_depth(result: dict) -> dict[int, tuple[list[str], list[str]]]:
    """{depth: (files, symbols)} of an impact/dependencies result."""
    return {lv["depth"]: (sorted(lv["files"]), sorted(s["symbol"] for s in lv["symbols"]))
            for lv in result["levels"]}
