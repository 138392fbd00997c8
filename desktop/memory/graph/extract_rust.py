"""Rust facts: functions, trait/impl methods, structs, enums, traits, type aliases,
``mod x;`` declarations, ``use`` trees, calls, trait impls and supertraits."""

from __future__ import annotations

import re

import tree_sitter

from .extract_base import Builder, text_of
from .languages import get_query
from .model import RawImport

_QUERY = r"""
(function_item name: (identifier) @name) @function
(function_signature_item name: (identifier) @name) @function
(struct_item name: (type_identifier) @name) @class
(union_item name: (type_identifier) @name) @class
(enum_item name: (type_identifier) @name) @enum
(trait_item name: (type_identifier) @name) @trait
(type_item name: (type_identifier) @name) @alias
(impl_item type: (_) @type) @impl
(mod_item name: (identifier) @name) @mod
(use_declaration argument: (_) @arg) @use
(call_expression function: (identifier) @callee) @call
(call_expression function: (scoped_identifier name: (identifier) @callee) @scoped) @call
(call_expression function: (field_expression value: (_) @qual
  field: (field_identifier) @callee)) @call
"""
_IDENT = re.compile(r"[A-Za-z_]\w*")


def _type_name(source: bytes, node: tree_sitter.Node | None) -> str:
    """``Foo<T>`` / ``&mut a::Foo`` -> ``Foo``."""
    text = text_of(source, node).split("<", 1)[0]
    names = _IDENT.findall(text.rsplit("::", 1)[-1])
    return names[-1] if names else ""


def _flatten_use(source: bytes, node: tree_sitter.Node | None, prefix: str,
                 out: list[tuple[str, str, str]]) -> None:
    """Flatten a use tree into (module path, imported name, local name) triples."""
    if node is None:  # a required field tree-sitter could not fill (damaged source): nothing to import
        return
    kind = node.type
    join = (lambda p: f"{prefix}::{p}" if prefix and p else prefix or p)  # noqa: E731
    if kind == "scoped_identifier":
        path = text_of(source, node.child_by_field_name("path"))
        name = text_of(source, node.child_by_field_name("name"))
        out.append((join(path), name, name))
    elif kind in ("identifier", "crate", "super", "self"):
        name = text_of(source, node)
        if kind == "self" and prefix:  # `use a::{self}` imports the module `a` itself
            head, _, last = prefix.rpartition("::")
            out.append((head, last, last))
        else:
            out.append((prefix, name, name))
    elif kind == "use_as_clause":
        inner: list[tuple[str, str, str]] = []
        _flatten_use(source, node.child_by_field_name("path"), prefix, inner)
        alias = text_of(source, node.child_by_field_name("alias"))
        out.extend((p, n, alias) for p, n, _ in inner)
    elif kind == "scoped_use_list":
        path_node = node.child_by_field_name("path")
        sub = join(text_of(source, path_node)) if path_node is not None else prefix
        _flatten_use(source, node.child_by_field_name("list"), sub, out)
    elif kind == "use_list":
        for child in node.named_children:
            _flatten_use(source, child, prefix, out)
    elif kind == "use_wildcard":
        path_node = node.named_children[0] if node.named_children else None
        out.append((join(text_of(source, path_node)) if path_node is not None else prefix, "*", "*"))


def _call_qualifier(source: bytes, caps: dict[str, list[tree_sitter.Node]]) -> str | None:
    scoped = caps.get("scoped")
    if scoped:
        path = scoped[0].child_by_field_name("path")
        if path is None:
            return None
        last = text_of(source, path).split("<", 1)[0].rsplit("::", 1)[-1]
        return "self" if last == "Self" else last
    qual = caps.get("qual")
    if qual:
        node = qual[0]
        if node.type == "self":
            return "self"
        return text_of(source, node) if node.type == "identifier" else "?"
    return None


def extract(b: Builder, root: tree_sitter.Node) -> None:
    """Report Rust definitions, module declarations, uses and calls under ``root``."""
    src = b.source
    cursor = tree_sitter.QueryCursor(get_query("rust", _QUERY))
    for _, caps in cursor.matches(root):
        if "call" in caps:
            b.add_call(caps["call"][0].start_byte, text_of(src, caps["callee"][0]),
                       _call_qualifier(src, caps))
        elif "function" in caps:
            b.add_def(caps["function"][0], "function", text_of(src, caps["name"][0]))
        elif "impl" in caps:
            impl = caps["impl"][0]
            type_name = _type_name(src, caps["type"][0])
            b.add_def(impl, "container", type_name)
            trait = impl.child_by_field_name("trait")
            if trait is not None:
                b.add_heritage(None, type_name, "implements", _type_name(src, trait))
        elif "use" in caps:
            triples: list[tuple[str, str, str]] = []
            _flatten_use(src, caps["arg"][0], "", triples)
            line = caps["use"][0].start_point[0] + 1
            grouped: dict[str, list[tuple[str, str]]] = {}
            for path, name, local in triples:
                grouped.setdefault(path, []).append((name, local))
            for path, names in grouped.items():
                b.add_import(RawImport(path, tuple(names), line))
        elif "mod" in caps:
            node = caps["mod"][0]
            if node.child_by_field_name("body") is None:  # `mod x;` loads x.rs / x/mod.rs
                name = text_of(src, caps["name"][0])
                b.add_import(RawImport(name, (), node.start_point[0] + 1, "mod"))
        else:
            for kind, cap in (("class", "class"), ("enum", "enum"),
                              ("interface", "trait"), ("type_alias", "alias")):
                if cap in caps:
                    node = caps[cap][0]
                    key = b.add_def(node, kind, text_of(src, caps["name"][0]))
                    bounds = node.child_by_field_name("bounds") if kind == "interface" else None
                    for ref in bounds.named_children if bounds is not None else ():
                        b.add_heritage(key, "", "extends", _type_name(src, ref))
                    break
