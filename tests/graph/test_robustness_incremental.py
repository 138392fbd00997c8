"""Syntax errors, bad bytes, empty files, determinism and incremental resolution."""

from __future__ import annotations

import threading

from graph_helpers import extract_all, load

from desktop.memory.graph import SymbolIndex, extract_file, resolve_file, resolve_project
from desktop.memory.text.file_kinds import is_test_file


def test_syntax_error_keeps_nodes_around_the_error() -> None:
    src = b"def before():\n    return 1\n\ndef broken(:\n    pass\n\nclass After:\n    def m(self):\n        before()\n"
    ex = extract_file("a.py", src)
    assert ex.had_errors
    labels = {n.label for n in ex.symbols}
    assert {"before", "After", "After.m"} <= labels
    ts = extract_file("a.ts", b"export function ok() {}\nclass { oops(\nexport function later() { ok(); }\n")
    assert ts.had_errors and "ok" in {n.label for n in ts.symbols}


def test_non_utf8_and_empty_files() -> None:
    ex = extract_file("b.py", b"def caf\xe9():\n    pass\n\ndef fine():\n    return '\xff\xfe'\n")
    assert "fine" in {n.label for n in ex.symbols}
    for name in ("e.py", "e.ts", "e.go", "e.rs", "e.java", "e.md"):
        empty = extract_file(name, b"")
        assert [n.type for n in empty.nodes] == ["file"] and not empty.had_errors


def test_unknown_language_is_just_a_file() -> None:
    ex = extract_file("docs/readme.md", b"# hi\n")
    assert ex.language is None and [n.id for n in ex.nodes] == ["file:docs/readme.md"]


def test_extraction_is_deterministic_and_thread_safe() -> None:
    files = load("ts")
    first = extract_all(files)
    results: list[dict] = []
    threads = [threading.Thread(target=lambda: results.append(extract_all(files))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for other in results:
        for path, ex in first.items():
            assert other[path].nodes == ex.nodes and other[path].calls == ex.calls


def test_duplicate_names_get_stable_suffixes() -> None:
    src = b"class A:\n    @property\n    def x(self): return 1\n    @x.setter\n    def x(self, v): pass\n"
    ids = [n.id for n in extract_file("p.py", src).symbols]
    assert ids == ["sym:p.py:A", "sym:p.py:A.x", "sym:p.py:A.x#2"]


def test_resolve_file_matches_project_and_updates_incrementally() -> None:
    files = load("python")
    ex = extract_all(files)
    index = SymbolIndex.build(ex, set(files))
    whole = set(resolve_project(ex, set(files)))
    assert {e for p in ex for e in resolve_file(p, ex[p], index)} == whole
    # Rename round_price in models.py: only the cart's edges need re-resolving.
    new_models = files["shop/models.py"].replace(b"round_price", b"round_it")
    index.update("shop/models.py", extract_file("shop/models.py", new_models))
    cart = {(e.type, e.to_id) for e in resolve_file("shop/cart.py", ex["shop/cart.py"], index)}
    assert ("imports_symbol", "sym:shop/models.py:round_price") not in cart
    assert ("imports", "file:shop/models.py") in cart


def test_test_file_detection() -> None:
    for path in ("tests/x.py", "a/test_x.py", "a/x_test.py", "a/x.test.ts", "a/x.spec.js",
                 "pkg/x_test.go", "src/FooTest.java", "web/__tests__/a.js"):
        assert is_test_file(path), path
    for path in ("a/x.py", "a/testing.py", "src/Foo.java", "src/latest.ts"):
        assert not is_test_file(path), path
