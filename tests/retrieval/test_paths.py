"""Each candidate path on small hand-built sets with known answers."""

from __future__ import annotations

from retrieval_helpers import add, pipeline

from desktop.memory.retrieval import paths as P
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.writer import FnOp


def test_bm25_is_code_aware(project_db, tiny):
    ids = add(project_db,
              NewMemory("call verifyJwt before trusting the header"),
              NewMemory("verify_jwt raises on expiry"),
              NewMemory("session cookies are signed", related_files=["auth/tokens.ts"]),
              NewMemory("the weather is nice today"))
    conn = project_db.reads.conn()
    hits, match = P.bm25_path(conn, "verify jwt", 10)
    assert {m for m, _s in hits} == {ids[0], ids[1]}
    assert all(s > 0 for _m, s in hits) and match
    hits, _ = P.bm25_path(conn, "tokens", 10)
    assert [m for m, _s in hits] == [ids[2]]
    # An identifier in the query finds its parts and the exact spelling ranks first.
    hits, _ = P.bm25_path(conn, "verifyJwt", 10)
    assert hits[0][0] == ids[0] and {m for m, _ in hits} == {ids[0], ids[1]}
    # User text is never FTS syntax.
    assert P.bm25_path(conn, 'NEAR( "" AND -*', 10)[0] == []


def test_dense_path_finds_paraphrase_with_the_real_model(project_db, minilm):
    ids = add(project_db, "Passwords are hashed with argon2id, never bcrypt",
              "The CI pipeline caches node_modules between runs",
              "Dark mode colours live in the theme file")
    pipe, emb = pipeline(project_db, minilm)
    hits, method = emb.search(emb.embed_query("which algorithm do we use to store user credentials"), 3)
    assert hits[0][0] == ids[0] and method == "exact"
    pipe.close()


def test_graph_path_is_empty_without_edges(project_db):
    add(project_db, NewMemory("pool size is 10", related_files=["db/pool.py"]))
    conn = project_db.reads.conn()
    assert P.graph_files(conn, [], None) == {}
    files = P.graph_files(conn, ["src/unrelated.py"], None)
    assert P.graph_path(conn, files, 10) == []


def test_graph_path_uses_co_access_edges(project_db):
    ids = add(project_db, NewMemory("pool size is 10", related_files=["db/pool.py"]),
              NewMemory("migrations run at start", related_files=["db/migrate.py"]),
              NewMemory("unrelated", related_files=["ui/theme.py"]))

    def edges(tx):
        tx.execute("INSERT INTO observer_co_access_edges(file_a, file_b, project_id, weight, last_observed_at) "
                   "VALUES ('api/handler.py', 'db/pool.py', ?, 0.9, ?)", (tx.project_id, tx.now))
    project_db.writer.run(FnOp("edges", edges))
    conn = project_db.reads.conn()
    files = P.graph_files(conn, ["api/handler.py"], None)
    assert files["db/pool.py"] > 0 and "ui/theme.py" not in files
    assert [m for m, _s in P.graph_path(conn, files, 10)] == [ids[0]]


class FakeGraph:
    """Code-graph neighbours as GraphQueries.neighbours returns them."""

    def __init__(self, near: dict[str, list[str]]) -> None:
        self.near = near

    def neighbours(self, files, depth=1):
        out = []
        for f in files:
            out += [{"file": n, "depth": 1, "score": 1.0, "direction": "dependency"} for n in self.near.get(f, [])]
        return out


def test_graph_path_uses_code_graph_neighbours(project_db):
    ids = add(project_db, NewMemory("tokens expire after 1h", related_files=["auth/tokens.py"]),
              NewMemory("css grid gotcha", related_files=["ui/grid.css"]))
    conn = project_db.reads.conn()
    files = P.graph_files(conn, ["auth/login.py"], FakeGraph({"auth/login.py": ["auth/tokens.py"]}))
    assert [m for m, _ in P.graph_path(conn, files, 5)] == [ids[0]]


def test_session_neighbours(project_db):
    ids = add(project_db, NewMemory("q: why is it slow", session_id="s1"),
              NewMemory("other session", session_id="s2"),
              NewMemory("a: the index was missing", session_id="s1"),
              NewMemory("no session"))
    near = P.session_neighbours(project_db.reads.conn(), ids)
    assert near[ids[0]] == [ids[2]] and near[ids[2]] == [ids[0]]
    assert ids[3] not in near and ids[1] not in near


def test_a_blank_query_embeds_nothing_but_touched_files_still_find(project_db, tiny):
    """An empty prompt has no text to embed (its vector would rank every memory by noise); the files
    an agent touched still reach the memories linked to them."""
    ids = add(project_db, NewMemory("pool size is 10", related_files=["db/pool.py"]),
              NewMemory("unrelated", related_files=["ui/theme.py"]))

    def edges(tx):
        tx.execute("INSERT INTO observer_co_access_edges(file_a, file_b, project_id, weight, last_observed_at) "
                   "VALUES ('api/handler.py', 'db/pool.py', ?, 0.9, ?)", (tx.project_id, tx.now))
    project_db.writer.run(FnOp("edges", edges))
    pipe, _emb = pipeline(project_db, tiny)
    blank = pipe.search("   ", limit=5)
    assert blank.results == [] and blank.skipped["dense"] == "empty query"
    near = pipe.search("", limit=5, touched_files=["api/handler.py"])
    assert [r.memory.id for r in near.results] == [ids[0]]
    assert pipe.search("pool size", limit=5).results[0].memory.id == ids[0]  # a real query embeds as before
    pipe.close()
