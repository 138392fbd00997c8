"""Java facts: package, classes, records, interfaces, enums, methods, constructors,
imports (plain, wildcard, static), method invocations, extends/implements."""

from __future__ import annotations

import tree_sitter

from .extract_base import Builder, text_of
from .languages import get_query
from .model import HeritageRelation, RawImport

_QUERY = r"""
(package_declaration (_) @pkg)
(class_declaration name: (identifier) @name) @class
(record_declaration name: (identifier) @name) @class
(interface_declaration name: (identifier) @name) @interface
(annotation_type_declaration name: (identifier) @name) @interface
(enum_declaration name: (identifier) @name) @enum
(method_declaration name: (identifier) @name) @function
(constructor_declaration name: (identifier) @name) @function
(import_declaration) @import
(method_invocation object: (_) @qual name: (identifier) @callee) @call
(method_invocation !object name: (identifier) @callee) @call
"""
_KINDS = (("class", "class"), ("interface", "interface"), ("enum", "enum"),
          ("function", "function"))


def _type_refs(source: bytes, node: tree_sitter.Node | None) -> list[tuple[str, str | None]]:
    """Flatten superclass / type_list nodes into (name, qualifier) pairs."""
    out: list[tuple[str, str | None]] = []
    if node is None:
        return out
    stack = [node]
    while stack:
        cur = stack.pop()
        if cur.type in ("type_identifier", "scoped_type_identifier"):
            qual, _, name = text_of(source, cur).rpartition(".")
            out.append((name, qual or None))
        elif cur.type == "generic_type":
            stack.append(cur.named_children[0])
        else:
            stack.extend(reversed(cur.named_children))
    return out


def _heritage(b: Builder, key: int, kind: str, decl: tree_sitter.Node) -> None:
    src = b.source
    if kind == "class":
        for name, qual in _type_refs(src, decl.child_by_field_name("superclass")):
            b.add_heritage(key, "", "extends", name, qual)
    rel: HeritageRelation = "extends" if kind == "interface" else "implements"
    field = decl.child_by_field_name("interfaces")
    if field is None and kind == "interface":
        field = next((c for c in decl.named_children if c.type == "extends_interfaces"), None)
    for name, qual in _type_refs(src, field):
        b.add_heritage(key, "", rel, name, qual)


def _import(b: Builder, node: tree_sitter.Node) -> None:
    text = text_of(b.source, node).removeprefix("import").rstrip(";").strip()
    kind = "import"
    if text.startswith("static "):
        kind, text = "static", text.removeprefix("static").strip()
    text = "".join(text.split())
    line = node.start_point[0] + 1
    if text.endswith(".*"):
        b.add_import(RawImport(text[:-2], (("*", "*"),), line, kind))
        return
    head, _, last = text.rpartition(".")
    if kind == "static":  # import static a.b.C.m -> class a.b.C, member m
        b.add_import(RawImport(head, ((last, last),), line, kind))
    else:
        b.add_import(RawImport(text, ((last, last),), line, kind))


def extract(b: Builder, root: tree_sitter.Node) -> None:
    """Report Java definitions, imports and calls under ``root``."""
    src = b.source
    cursor = tree_sitter.QueryCursor(get_query("java", _QUERY))
    for _, caps in cursor.matches(root):
        if "call" in caps:
            qual_nodes = caps.get("qual")
            qual = None
            if qual_nodes:
                q = qual_nodes[0]
                qual = ("self" if q.type == "this"
                        else text_of(src, q) if q.type == "identifier" else "?")
            b.add_call(caps["call"][0].start_byte, text_of(src, caps["callee"][0]), qual)
        elif "import" in caps:
            _import(b, caps["import"][0])
        elif "pkg" in caps:
            b.package = "".join(text_of(src, caps["pkg"][0]).split())
        else:
            for kind, cap in _KINDS:
                if cap in caps:
                    node = caps[cap][0]
                    key = b.add_def(node, kind, text_of(src, caps["name"][0]))
                    if kind != "function":
                        _heritage(b, key, kind, node)
                    break
