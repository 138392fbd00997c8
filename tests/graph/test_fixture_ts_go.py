"""Hand-checked node and edge sets for the TypeScript (+TSX) and Go fixture repositories."""

from __future__ import annotations

from graph_helpers import edge_set, extract_all, load

CROSS = {"imports", "imports_symbol", "calls", "extends", "implements", "tested_by"}


def test_ts_nodes() -> None:
    ex = extract_all(load("ts"))
    got = {(p, n.label, n.type) for p, e in ex.items() for n in e.symbols}
    assert got == {
        ("src/Card.tsx", "CardProps", "type_alias"), ("src/Card.tsx", "Card", "function"),
        ("src/format.ts", "formatName", "function"), ("src/format.ts", "upper", "function"),
        ("src/types.ts", "UserId", "type_alias"), ("src/types.ts", "Role", "enum"),
        ("src/types.ts", "Entity", "interface"), ("src/types.ts", "Named", "interface"),
        ("src/user.ts", "Base", "class"), ("src/user.ts", "Base.constructor", "method"),
        ("src/user.ts", "User", "class"), ("src/user.ts", "User.constructor", "method"),
        ("src/user.ts", "User.describe", "method"), ("src/user.ts", "User.suffix", "method"),
    }
    assert ex["src/Card.tsx"].language == "tsx"
    assert not any(e.had_errors for e in ex.values())


def test_ts_edges() -> None:
    c, f, t, u, s = "src/Card.tsx", "src/format.ts", "src/types.ts", "src/user.ts", "src/user.spec.ts"
    assert edge_set("ts", CROSS) == {
        ("calls", f"sym:{c}:Card", f"sym:{f}:upper"),
        ("calls", f"sym:{u}:User.describe", f"sym:{f}:formatName"),
        ("calls", f"sym:{u}:User.describe", f"sym:{u}:User.suffix"),
        ("extends", f"sym:{t}:Named", f"sym:{t}:Entity"),
        ("extends", f"sym:{u}:User", f"sym:{u}:Base"),
        ("implements", f"sym:{u}:Base", f"sym:{t}:Entity"),
        ("implements", f"sym:{u}:User", f"sym:{t}:Named"),
        ("imports", f"file:{c}", "ext:react"),
        ("imports", f"file:{c}", f"file:{f}"),
        ("imports", f"file:{c}", f"file:{u}"),
        ("imports", f"file:{s}", f"file:{t}"),
        ("imports", f"file:{s}", f"file:{u}"),
        ("imports", f"file:{u}", f"file:{f}"),
        ("imports", f"file:{u}", f"file:{t}"),
        ("imports_symbol", f"file:{c}", f"sym:{f}:upper"),
        ("imports_symbol", f"file:{c}", f"sym:{u}:User"),
        ("imports_symbol", f"file:{s}", f"sym:{t}:Role"),
        ("imports_symbol", f"file:{s}", f"sym:{u}:User"),
        ("imports_symbol", f"file:{u}", f"sym:{f}:formatName"),
        ("imports_symbol", f"file:{u}", f"sym:{t}:Entity"),
        ("imports_symbol", f"file:{u}", f"sym:{t}:Named"),
        ("imports_symbol", f"file:{u}", f"sym:{t}:Role"),
        ("imports_symbol", f"file:{u}", f"sym:{t}:UserId"),
        ("tested_by", f"file:{t}", f"file:{s}"),
        ("tested_by", f"file:{u}", f"file:{s}"),
        ("tested_by", f"sym:{t}:Role", f"file:{s}"),
        ("tested_by", f"sym:{u}:User", f"file:{s}"),
    }


def test_go_nodes_and_receivers() -> None:
    ex = extract_all(load("go"))
    got = {(p, n.label, n.type) for p, e in ex.items() for n in e.symbols}
    g, q = "geometry/geometry.go", "geometry/square.go"
    assert got == {
        ("cmd/main.go", "main", "function"), ("cmd/main.go", "describe", "function"),
        (g, "Shape", "interface"), (g, "Named", "interface"), (g, "Meters", "type_alias"),
        (g, "Circle", "class"), (g, "Circle.Area", "method"), (g, "Circle.Name", "method"),
        (g, "scale", "function"), ("geometry/geometry_test.go", "TestArea", "function"),
        (q, "Square", "class"), (q, "Square.Area", "method"), (q, "NewSquare", "function"),
    }
    assert ex[g].package == "geometry"
    local = {(e.from_id, e.to_id) for e in ex[g].edges if e.type == "defined_in"}
    assert (f"sym:{g}:Circle.Area", f"sym:{g}:Circle") in local


def test_go_edges() -> None:
    m, g, q, t = "cmd/main.go", "geometry/geometry.go", "geometry/square.go", "geometry/geometry_test.go"
    assert edge_set("go", CROSS) == {
        ("calls", f"sym:{m}:main", f"sym:{m}:describe"),
        ("calls", f"sym:{m}:main", f"sym:{q}:NewSquare"),
        ("calls", f"sym:{g}:Circle.Area", f"sym:{g}:scale"),
        ("calls", f"sym:{t}:TestArea", f"sym:{q}:NewSquare"),
        ("calls", f"sym:{q}:Square.Area", f"sym:{g}:scale"),  # same package, other file
        ("extends", f"sym:{g}:Named", f"sym:{g}:Shape"),  # interface embedding
        ("extends", f"sym:{q}:Square", f"sym:{g}:Circle"),  # struct embedding
        ("imports", f"file:{m}", "ext:fmt"),
        ("imports", f"file:{m}", f"file:{g}"),
        ("imports", f"file:{m}", f"file:{q}"),
        ("imports", f"file:{g}", "ext:math"),
        ("imports", f"file:{t}", "ext:testing"),
        ("tested_by", f"file:{g}", f"file:{t}"),
        ("tested_by", f"file:{q}", f"file:{t}"),
    }
