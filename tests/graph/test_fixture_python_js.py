"""Hand-checked node and edge sets for the Python and JavaScript fixture repositories."""

from __future__ import annotations

from graph_helpers import edge_set, extract_all, load


def _symbols(lang: str, path: str) -> set[tuple[str, str]]:
    ex = extract_all(load(lang))[path]
    return {(n.label, n.type) for n in ex.symbols}


def test_python_nodes() -> None:
    assert _symbols("python", "shop/models.py") == {
        ("Price", "type_alias"), ("Color", "enum"), ("Priced", "interface"),
        ("Priced.price", "method"), ("Item", "class"), ("Item.__init__", "method"),
        ("Item.price", "method"), ("Discounted", "class"), ("Discounted.price", "method"),
        ("round_price", "function"),
    }
    assert _symbols("python", "shop/cart.py") == {
        ("Cart", "class"), ("Cart.__init__", "method"), ("Cart.add", "method"),
        ("Cart.total", "method"), ("make_cart", "function"),
    }


def test_python_defined_in_and_lines() -> None:
    ex = extract_all(load("python"))["shop/models.py"]
    local = {(e.from_id, e.to_id) for e in ex.edges if e.type == "defined_in"}
    assert ("sym:shop/models.py:Item.price", "sym:shop/models.py:Item") in local
    assert ("sym:shop/models.py:round_price", "file:shop/models.py") in local
    assert ("file:shop/models.py", "mod:shop") in local
    by_id = {n.id: n for n in ex.nodes}
    item = by_id["sym:shop/models.py:Item"]
    assert (item.start_line, item.end_line) == (15, 20)
    assert by_id["sym:shop/models.py:round_price"].start_line == 28


def test_python_edges() -> None:
    m, c, t, i = "shop/models.py", "shop/cart.py", "tests/test_cart.py", "shop/__init__.py"
    assert edge_set("python", {"imports", "imports_symbol", "calls", "extends", "tested_by"}) == {
        ("calls", f"sym:{c}:Cart.total", f"sym:{m}:round_price"),
        ("calls", f"sym:{c}:make_cart", f"sym:{m}:round_price"),
        ("calls", f"sym:{m}:Item.price", f"sym:{m}:round_price"),
        ("calls", f"sym:{t}:test_total", f"sym:{c}:make_cart"),
        ("extends", f"sym:{m}:Discounted", f"sym:{m}:Item"),
        ("imports", f"file:{i}", f"file:{m}"),
        ("imports", f"file:{c}", f"file:{m}"),
        ("imports", f"file:{m}", "ext:enum"),
        ("imports", f"file:{m}", "ext:typing"),
        ("imports", f"file:{t}", f"file:{i}"),
        ("imports", f"file:{t}", f"file:{c}"),
        ("imports_symbol", f"file:{i}", f"sym:{m}:Item"),
        ("imports_symbol", f"file:{c}", f"sym:{m}:Discounted"),
        ("imports_symbol", f"file:{c}", f"sym:{m}:Item"),
        ("imports_symbol", f"file:{c}", f"sym:{m}:round_price"),
        ("imports_symbol", f"file:{t}", f"sym:{c}:make_cart"),
        # `from shop import Item` follows the package __init__ re-export to models.py.
        ("imports_symbol", f"file:{t}", f"sym:{m}:Item"),
        ("tested_by", f"file:{i}", f"file:{t}"),
        ("tested_by", f"file:{c}", f"file:{t}"),
        ("tested_by", f"sym:{c}:make_cart", f"file:{t}"),
        ("tested_by", f"sym:{m}:Item", f"file:{t}"),
    }


def test_js_nodes() -> None:
    assert _symbols("js", "src/shape.js") == {
        ("Shape", "class"), ("Shape.constructor", "method"), ("Shape.area", "method"),
        ("Square", "class"), ("Square.area", "method"), ("Square.scale", "method"),
    }
    assert _symbols("js", "src/util.js") == {("clamp", "function"), ("double", "function")}


def test_js_edges() -> None:
    s, u, x, t = "src/shape.js", "src/util.js", "src/index.js", "src/__tests__/shape.test.js"
    assert edge_set("js", {"imports", "imports_symbol", "calls", "extends", "tested_by"}) == {
        ("calls", f"file:{t}", f"sym:{u}:clamp"),  # module-level code calls too
        ("calls", f"sym:{s}:Shape.constructor", f"sym:{u}:clamp"),
        ("calls", f"sym:{s}:Square.area", f"sym:{s}:Square.scale"),
        ("calls", f"sym:{s}:Square.area", f"sym:{u}:double"),  # via `import * as util`
        ("extends", f"sym:{s}:Square", f"sym:{s}:Shape"),
        ("imports", f"file:{t}", f"file:{x}"),
        ("imports", f"file:{t}", f"file:{u}"),
        ("imports", f"file:{x}", f"file:{s}"),
        ("imports", f"file:{x}", f"file:{u}"),
        ("imports", f"file:{s}", "ext:lodash"),  # require('lodash')
        ("imports", f"file:{s}", f"file:{u}"),
        ("imports_symbol", f"file:{t}", f"sym:{s}:Square"),  # through the index.js barrel
        ("imports_symbol", f"file:{t}", f"sym:{u}:clamp"),
        ("imports_symbol", f"file:{x}", f"sym:{s}:Square"),
        ("imports_symbol", f"file:{s}", f"sym:{u}:clamp"),
        ("tested_by", f"file:{x}", f"file:{t}"),
        ("tested_by", f"file:{u}", f"file:{t}"),
        ("tested_by", f"sym:{s}:Square", f"file:{t}"),
        ("tested_by", f"sym:{u}:clamp", f"file:{t}"),
    }
