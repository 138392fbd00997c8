"""Graph storage: impact on a known chain, edits/renames/deletes, staleness, closure == rebuild."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_helpers import CHAIN, by_depth, closure_rows, copy_fixture, fresh_edges, opened, rebuilt_rows, write

from desktop.memory.graph.queries import GraphTargetNotFound
from desktop.memory.graph.store import MarkStale


def test_impact_on_known_chain(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write(root, CHAIN)
    with opened(tmp_path, root) as (_db, ix, q):
        ix.run()
        assert by_depth(q.impact("d.py", 3)) == {
            1: (["c.py"], ["c.py:fc"]),
            2: (["b.py"], ["b.py:fb"]),
            3: (["a.py"], ["a.py:fa"]),
        }
        assert by_depth(q.impact("d.py", 2)) == {1: (["c.py"], ["c.py:fc"]), 2: (["b.py"], ["b.py:fb"])}
        assert by_depth(q.impact("c.py:fc", 3)) == {1: (["b.py"], ["b.py:fb"]), 2: (["a.py"], ["a.py:fa"])}
        # beyond the stored depth the walk continues over fresh edges
        assert by_depth(q.impact("d.py", 5)) == by_depth(q.impact("d.py", 3))
        deps = by_depth(q.dependencies("a.py", 3))
        assert deps[1] == (["b.py"], ["b.py:fb"]) and deps[3] == (["d.py"], ["d.py:fd"])
        assert {n["file"] for n in q.neighbours(["b.py"], 1)} == {"a.py", "c.py"}
        with pytest.raises(GraphTargetNotFound):
            q.impact("nope.py")
        with pytest.raises(GraphTargetNotFound):
            q.impact("d.py:missing")


def test_stale_edges_never_visible_then_fresh_after_reindex(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write(root, CHAIN)
    with opened(tmp_path, root) as (db, ix, q):
        ix.run()
        before = by_depth(q.impact("d.py"))
        assert fresh_edges(db, "c.py")
        db.writer.run(MarkStale(["c.py"]))
        assert not fresh_edges(db, "c.py")
        assert by_depth(q.impact("d.py")) == {}  # c's edges were the only way to d
        assert "c.py" not in {n["file"] for n in q.neighbours(["d.py"], 3)}
        assert closure_rows(db) == rebuilt_rows(db)
        ix.run(paths={"c.py"})  # same bytes: must still come back because its edges were stale
        assert by_depth(q.impact("d.py")) == before
        assert q.stats()["stale_edges"] == 0


def test_edit_rename_delete_update_everything(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write(root, CHAIN)
    with opened(tmp_path, root) as (db, ix, q):
        ix.run()
        # edit: b stops using c and defines a new function
        write(root, {"b.py": "def fb():\n    return 2\n\n\ndef extra():\n    return fb()\n"})
        rep = ix.run(paths={"b.py"})
        assert rep.indexed == 1
        assert by_depth(q.impact("d.py")) == {1: (["c.py"], ["c.py:fc"])}
        assert "sym:b.py:extra" in {r[0] for r in db.reads.conn().execute("SELECT id FROM graph_nodes")}
        assert closure_rows(db) == rebuilt_rows(db)
        # rename c.py -> c2.py: old nodes gone, importers re-resolved
        (root / "c.py").rename(root / "c2.py")
        write(root, {"b.py": "from c2 import fc\n\n\ndef fb():\n    return fc()\n"})
        ix.run(paths={"c2.py", "b.py"}, deleted={"c.py"})
        ids = {r[0] for r in db.reads.conn().execute("SELECT id FROM graph_nodes")}
        assert "file:c.py" not in ids and "sym:c2.py:fc" in ids
        assert by_depth(q.impact("d.py")) == {1: (["c2.py"], ["c2.py:fc"]), 2: (["b.py"], ["b.py:fb"]),
                                             3: (["a.py"], ["a.py:fa"])}
        assert closure_rows(db) == rebuilt_rows(db)
        # delete d.py: c2 loses its edges into d, nothing left to impact
        (root / "d.py").unlink()
        ix.run(paths={"d.py"}, deleted={"d.py"})
        with pytest.raises(GraphTargetNotFound):
            q.impact("d.py")
        assert not {e for e in fresh_edges(db) if "d.py" in e[1]}
        assert closure_rows(db) == rebuilt_rows(db)
        # a full walk notices nothing else changed
        rep = ix.run()
        assert rep.indexed == 0 and rep.unchanged == 3


def _random_project(rng: random.Random, n: int) -> dict[str, str]:
    files = {}
    for i in range(n):
        imports = rng.sample([j for j in range(n) if j != i], k=rng.randint(0, min(3, n - 1)))
        lines = [f"from m{j} import f{j}" for j in imports]
        body = " + ".join(f"f{j}()" for j in imports) or "0"
        lines += ["", "", f"def f{i}():", f"    return {body}", ""]
        if rng.random() < 0.3:
            lines += [f"class K{i}:", "    def run(self):", f"        return f{i}()", ""]
        files[f"m{i}.py"] = "\n".join(lines)
    return files


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000))
def test_incremental_closure_equals_rebuild(tmp_path_factory: pytest.TempPathFactory, seed: int) -> None:
    rng = random.Random(seed)
    tmp = tmp_path_factory.mktemp("prop")
    root = tmp / "p"
    n = 7
    write(root, _random_project(rng, n))
    with opened(tmp, root) as (db, ix, _q):
        ix.run()
        assert closure_rows(db) == rebuilt_rows(db)
        for _ in range(5):
            i = rng.randrange(n)
            path = root / f"m{i}.py"
            action = rng.random()
            if action < 0.2 and path.exists():
                path.unlink()
                ix.run(paths={path.name}, deleted={path.name})
            elif action < 0.35:
                db.writer.run(MarkStale([path.name]))
            else:
                write(root, {path.name: _random_project(rng, n)[path.name]})
                ix.run(paths={path.name})
            assert closure_rows(db) == rebuilt_rows(db), f"seed {seed}"


def test_module_memory_counts_one_query_each_memory_once(tmp_path: Path) -> None:
    """The module map and the health tab use this one count: a memory naming a module and a file of it counts once."""
    from desktop.memory.graph.queries import module_memory_counts
    from desktop.memory.service import MemoryService

    root = copy_fixture("python", tmp_path / "p")
    with opened(tmp_path, root) as (db, ix, _q):
        ix.run()
        module = db.reads.conn().execute("SELECT coalesce(module,'.') FROM graph_files "
                                         "WHERE file_path = 'shop/cart.py'").fetchall()[0][0]
        svc = MemoryService(db)
        svc.add("cart totals include VAT", related_files=["shop/cart.py"], related_modules=[module]).result(10)
        svc.add("old cart note", related_files=["shop/cart.py"]).result(10)
        gone = svc.add("forgotten cart note", related_files=["shop/cart.py"]).result(10).id
        svc.forget(gone).result(10)
        assert module_memory_counts(db.reads.conn())[module] == 2
