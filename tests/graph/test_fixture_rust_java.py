"""Hand-checked node and edge sets for the Rust and Java fixture repositories."""

from __future__ import annotations

from graph_helpers import edge_set, extract_all, load

CROSS = {"imports", "imports_symbol", "calls", "extends", "implements", "tested_by"}
J = "src/main/java/com/example"
T = "src/test/java/com/example/shapes/CircleTest.java"


def test_rust_nodes() -> None:
    ex = extract_all(load("rust"))
    got = {(p, n.label, n.type) for p, e in ex.items() for n in e.symbols}
    s = "src/shapes.rs"
    assert got == {
        ("src/lib.rs", "total_area", "function"), ("src/util.rs", "round", "function"),
        ("tests/area.rs", "computes_area", "function"),
        (s, "Area", "type_alias"), (s, "Shape", "interface"), (s, "Shape.area", "method"),
        (s, "Describe", "interface"), (s, "Describe.describe", "method"), (s, "Kind", "enum"),
        (s, "Circle", "class"), (s, "Circle.new", "method"), (s, "Circle.area", "method"),
        (s, "Circle.bonus", "method"),
    }
    local = {(e.from_id, e.to_id) for e in ex[s].edges if e.type == "defined_in"}
    assert (f"sym:{s}:Circle.bonus", f"sym:{s}:Circle") in local  # impl methods -> struct


def test_rust_edges() -> None:
    lib, s, u, t = "src/lib.rs", "src/shapes.rs", "src/util.rs", "tests/area.rs"
    assert edge_set("rust", CROSS) == {
        ("calls", f"sym:{lib}:total_area", f"sym:{u}:round"),  # util::round via `mod util;`
        ("calls", f"sym:{s}:Circle.area", f"sym:{s}:Circle.bonus"),  # self.bonus()
        ("calls", f"sym:{s}:Circle.area", f"sym:{u}:round"),
        ("calls", f"sym:{t}:computes_area", f"sym:{s}:Circle.new"),  # Circle::new()
        ("extends", f"sym:{s}:Shape", f"sym:{s}:Describe"),  # supertrait
        ("implements", f"sym:{s}:Circle", f"sym:{s}:Describe"),
        ("implements", f"sym:{s}:Circle", f"sym:{s}:Shape"),
        ("imports", f"file:{lib}", f"file:{s}"),
        ("imports", f"file:{lib}", f"file:{u}"),
        ("imports", f"file:{s}", f"file:{u}"),
        ("imports", f"file:{t}", f"file:{lib}"),  # integration test names its own crate
        ("imports", f"file:{t}", f"file:{s}"),
        ("imports_symbol", f"file:{lib}", f"sym:{s}:Circle"),
        ("imports_symbol", f"file:{lib}", f"sym:{s}:Shape"),
        ("imports_symbol", f"file:{s}", f"sym:{u}:round"),
        ("imports_symbol", f"file:{t}", f"sym:{lib}:total_area"),
        ("imports_symbol", f"file:{t}", f"sym:{s}:Circle"),
        ("tested_by", f"file:{lib}", f"file:{t}"),
        ("tested_by", f"file:{s}", f"file:{t}"),
        ("tested_by", f"sym:{lib}:total_area", f"file:{t}"),
        ("tested_by", f"sym:{s}:Circle", f"file:{t}"),
    }


def test_java_nodes() -> None:
    ex = extract_all(load("java"))
    got = {(p.rsplit("/", 1)[-1], n.label, n.type) for p, e in ex.items() for n in e.symbols}
    assert got == {
        ("AbstractShape.java", "AbstractShape", "class"),
        ("AbstractShape.java", "AbstractShape.scale", "method"),
        ("AbstractShape.java", "AbstractShape.Kind", "enum"),
        ("Circle.java", "Circle", "class"), ("Circle.java", "Circle.Circle", "method"),
        ("Circle.java", "Circle.area", "method"), ("Circle.java", "Circle.compareTo", "method"),
        ("Shape.java", "Shape", "interface"), ("Shape.java", "Shape.area", "method"),
        ("MathUtil.java", "MathUtil", "class"), ("MathUtil.java", "MathUtil.MathUtil", "method"),
        ("MathUtil.java", "MathUtil.square", "method"), ("MathUtil.java", "MathUtil.cube", "method"),
        ("CircleTest.java", "CircleTest", "class"), ("CircleTest.java", "CircleTest.area", "method"),
    }
    assert ex[f"{J}/shapes/Circle.java"].package == "com.example.shapes"


def test_java_edges() -> None:
    c, a, s, m = (f"{J}/shapes/Circle.java", f"{J}/shapes/AbstractShape.java",
                  f"{J}/shapes/Shape.java", f"{J}/util/MathUtil.java")
    assert edge_set("java", CROSS) == {
        ("calls", f"sym:{c}:Circle.area", f"sym:{m}:MathUtil.square"),  # static call
        ("calls", f"sym:{c}:Circle.compareTo", f"sym:{c}:Circle.area"),  # implicit this
        ("calls", f"sym:{m}:MathUtil.cube", f"sym:{m}:MathUtil.square"),
        ("calls", f"sym:{T}:CircleTest.area", f"sym:{m}:MathUtil.cube"),  # static import
        ("extends", f"sym:{c}:Circle", f"sym:{a}:AbstractShape"),  # same package, no import
        ("implements", f"sym:{c}:Circle", f"sym:{s}:Shape"),
        ("imports", f"file:{c}", f"file:{m}"),
        ("imports", f"file:{T}", "ext:org.junit.jupiter.api"),
        ("imports", f"file:{T}", f"file:{m}"),
        ("imports_symbol", f"file:{c}", f"sym:{m}:MathUtil"),
        ("imports_symbol", f"file:{T}", f"sym:{m}:MathUtil.cube"),
        ("tested_by", f"file:{m}", f"file:{T}"),
        ("tested_by", f"sym:{m}:MathUtil.cube", f"file:{T}"),
    }
