"""The indexer on awkward input: skips with reasons, partial trees, bad bytes, links, cancel, chunks."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from store_helpers import copy_fixture, opened, write

from desktop.memory.graph.report import IndexProgress


def _status(db, path: str) -> tuple[str, str | None] | None:  # type: ignore[no-untyped-def]
    rows = db.reads.conn().execute("SELECT status, skip_reason FROM graph_files WHERE file_path=?",
                                   (path,)).fetchall()
    return tuple(rows[0]) if rows else None


def test_skips_binary_minified_huge_gitignored_vendor(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write(root, {"ok.py": "def f():\n    return 1\n", ".gitignore": "secret/\n*.gen.py\n",
                 "secret/hidden.py": "x = 1\n", "out.gen.py": "y = 2\n",
                 "node_modules/lib/index.js": "export const a = 1;\n", ".venv/x.py": "z = 1\n",
                 "vendor/v.go": "package v\n", "app.min.js": "var a=1;\n",
                 "bundle.js": ("var x=" + "1+" * 2000 + "1;") * 3, "package-lock.json": "{}\n"})
    (root / "blob.py").write_bytes(b"abc\x00def" * 10)
    (root / "huge.py").write_bytes(b"# big\n" * 200_000)
    with opened(tmp_path, root) as (db, ix, _q):
        rep = ix.run()
        reasons = dict(rep.skipped_files)
        assert rep.indexed == 1
        assert _status(db, "blob.py") == ("skipped", "binary")
        assert _status(db, "huge.py") == ("skipped", "too large")
        assert _status(db, "app.min.js") == ("skipped", "minified")
        assert _status(db, "bundle.js") == ("skipped", "minified")
        assert reasons["secret/"] == "gitignored" and reasons["out.gen.py"] == "gitignored"
        assert reasons["node_modules/"] == "vendor" and reasons[".venv/"] == "vendor"
        assert reasons["vendor/"] == "vendor" and reasons["package-lock.json"] == "lock file"
        assert rep.skipped["binary"] == 1 and rep.skipped["gitignored"] == 2
        files = {r[0] for r in db.reads.conn().execute(
            "SELECT file_path FROM graph_nodes WHERE type='file'")}
        assert files == {"ok.py"}


def test_syntax_error_non_utf8_links_and_odd_files(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write(root, {"broken.py": "def good():\n    return 1\n\ndef bad(:\n    pass\n\nclass After:\n    pass\n"})
    (root / "latin.py").write_bytes(b"def caf\xe9():\n    pass\n\ndef fine():\n    return '\xff'\n")
    (root / "loop_a.py").symlink_to(root / "loop_b.py")
    (root / "loop_b.py").symlink_to(root / "loop_a.py")
    (root / "dangling.py").symlink_to(root / "nowhere.py")
    (root / "dirloop").mkdir()
    (root / "dirloop" / "self").symlink_to(root / "dirloop")
    os.mkfifo(root / "pipe.py")
    with opened(tmp_path, root) as (db, ix, q):
        rep = ix.run()
        assert _status(db, "broken.py") == ("partial", "syntax errors")
        ids = {r[0] for r in db.reads.conn().execute("SELECT id FROM graph_nodes")}
        assert {"sym:broken.py:good", "sym:broken.py:After", "sym:latin.py:fine"} <= ids
        for odd in ("loop_a.py", "loop_b.py", "dangling.py", "pipe.py"):
            status = _status(db, odd)
            assert status is not None and status[0] == "skipped" and status[1].startswith("unreadable"), odd
        assert rep.partial >= 1 and q.stats()["files_by_status"]["skipped"] == 4


def test_file_deleted_while_indexing_is_not_an_error(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write(root, {f"m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(20)})
    with opened(tmp_path, root) as (db, ix, _q):
        def progress(p: IndexProgress) -> None:
            if p.phase == "parse" and p.done == 5:
                (root / "m15.py").unlink()
        rep = ix.run(progress)
        assert rep.indexed == 19 and _status(db, "m15.py") is None


def test_cancel_mid_index_then_resume(tmp_path: Path) -> None:
    root = copy_fixture("ts", tmp_path / "p")
    write(root, {f"gen/f{i}.ts": f"export function g{i}() {{ return {i}; }}\n" for i in range(60)})
    cancel = threading.Event()
    with opened(tmp_path, root) as (_db, ix, q):
        def progress(p: IndexProgress) -> None:
            if p.phase == "parse" and p.done == 10:
                cancel.set()
        rep = ix.run(progress, cancel)
        assert rep.cancelled and rep.indexed == 0
        assert "ok" not in q.stats()["files_by_status"]  # nothing half-done counts as indexed
        rep = ix.run()
        assert not rep.cancelled and rep.indexed == 65 and rep.unchanged == 0
        assert q.stats()["files_by_status"] == {"ok": 65}


def test_code_chunks_replaced_on_change(tmp_path: Path) -> None:
    root = copy_fixture("python", tmp_path / "p")
    with opened(tmp_path, root, chunks=True) as (db, ix, _q):
        rep = ix.run()
        assert rep.chunks > 0

        def chunks(path: str) -> list[tuple]:  # type: ignore[type-arg]
            return db.reads.conn().execute(
                "SELECT m.content, m.chunk_type, m.chunk_start_line, m.chunk_end_line, m.context_prefix,"
                " m.related_files, m.related_modules FROM memories m JOIN memory_files f ON f.memory_id=m.id"
                " WHERE f.file_path=? AND m.type='code' AND m.source='code_index' ORDER BY 3", (path,)).fetchall()
        old = chunks("shop/models.py")
        assert old and all(c[4].startswith("File: shop/models.py") and c[5] == '["shop/models.py"]'
                           and c[6] != "[]" for c in old)
        (root / "shop" / "models.py").write_text("def only_this():\n    return 42\n")
        ix.run(paths={"shop/models.py"})
        new = chunks("shop/models.py")
        assert [c[0] for c in new] == ["def only_this():\n    return 42"]
        assert new[0][1:4] == ("function", 1, 2)
        (root / "shop" / "models.py").unlink()
        ix.run(paths={"shop/models.py"}, deleted={"shop/models.py"})
        assert chunks("shop/models.py") == []


def test_code_chunks_are_redacted_and_get_their_final_module(tmp_path: Path) -> None:
    """Chunks are stored while files parse (module not known yet) and fixed up after Louvain;
    their text is redacted in the indexing thread before it reaches the writer."""
    root = copy_fixture("python", tmp_path / "p")
    key = "sk-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    write(root, {"shop/keys.py": f'OPENAI_API_KEY = "{key}"\n\n\ndef use():\n    return OPENAI_API_KEY\n'})
    with opened(tmp_path, root, chunks=True) as (db, ix, _q):
        ix.run()
        conn = db.reads.conn()
        rows = conn.execute(
            "SELECT f.file_path, m.content, m.related_modules, g.module FROM memories m"
            " JOIN memory_files f ON f.memory_id = m.id JOIN graph_files g ON g.file_path = f.file_path"
            " WHERE m.type='code' AND m.source='code_index'").fetchall()
        assert rows
        for path, _content, mods, module in rows:
            assert mods == (f'["{module}"]' if module else "[]"), path
        texts = [c for p, c, _, _ in rows if p == "shop/keys.py"]
        assert texts and all(key not in c for c in texts) and any("[REDACTED" in c for c in texts)
        # memory_modules (trigger-maintained) agrees with related_modules
        bad = conn.execute(
            "SELECT count(*) FROM memories m JOIN memory_files f ON f.memory_id = m.id"
            " JOIN graph_files g ON g.file_path = f.file_path WHERE m.source='code_index' AND g.module IS NOT NULL"
            " AND NOT EXISTS (SELECT 1 FROM memory_modules mm WHERE mm.memory_id = m.id AND mm.module = g.module)"
        ).fetchall()[0][0]
        assert bad == 0
