"""JavaScript / TypeScript / TSX facts: classes, functions, arrow constants, methods,
interfaces, type aliases, enums, ES imports, re-exports, ``require``, calls, heritage."""

from __future__ import annotations

import re

import tree_sitter

from .extract_base import Builder, text_of
from .languages import get_query
from .model import HeritageRelation, RawImport

_COMMON = r"""
(class_declaration name: (_) @name) @class
(function_declaration name: (identifier) @name) @function
(generator_function_declaration name: (identifier) @name) @function
(method_definition name: (_) @name) @method
(variable_declarator name: (identifier) @name
  value: [(arrow_function) (function_expression)]) @vardef
(import_statement) @import
(export_statement source: (_)) @reexport
(call_expression function: (identifier) @callee) @call
(call_expression function: (member_expression object: (_) @qual
  property: (property_identifier) @callee)) @call
(call_expression function: (import) arguments: (arguments (string) @spec)) @dynimport
"""
_JS_ONLY = r"""
(field_definition property: (_) @name value: [(arrow_function) (function_expression)]) @field
"""
_TS_ONLY = r"""
(abstract_class_declaration name: (_) @name) @class
(interface_declaration name: (_) @name) @interface
(type_alias_declaration name: (_) @name) @alias
(enum_declaration name: (_) @name) @enum
(public_field_definition name: (_) @name value: [(arrow_function) (function_expression)]) @field
"""
_DOTTED = re.compile(r"[A-Za-z_$][\w$.]*")
_WRAPPERS = frozenset({"export_statement", "lexical_declaration", "variable_declaration"})


def _outer(node: tree_sitter.Node) -> tree_sitter.Node:
    """Widen a declaration to include ``export`` / ``const`` so chunks keep them."""
    parent = node.parent
    while parent is not None and parent.type in _WRAPPERS:
        node, parent = parent, parent.parent
    return node


def _string(source: bytes, node: tree_sitter.Node | None) -> str:
    text = text_of(source, node)
    return text[1:-1] if len(text) >= 2 and text[0] in "'\"`" else text


def _ref(source: bytes, node: tree_sitter.Node) -> tuple[str, str | None] | None:
    """Split a heritage reference (``A``, ``ns.A``, ``A<T>``) into (name, qualifier)."""
    if node.type == "generic_type":
        node = node.child_by_field_name("name") or node
    text = text_of(source, node)
    if not _DOTTED.fullmatch(text):
        return None
    qual, _, name = text.rpartition(".")
    return name, qual or None


def _heritage(b: Builder, key: int, decl: tree_sitter.Node) -> None:
    src = b.source
    for child in decl.named_children:
        if child.type == "class_heritage":
            for part in child.named_children:
                rel: HeritageRelation
                if part.type == "extends_clause":
                    refs, rel = part.children_by_field_name("value"), "extends"
                elif part.type == "implements_clause":
                    refs, rel = part.named_children, "implements"
                else:  # plain JS: `extends <expression>` directly under class_heritage
                    refs, rel = [part], "extends"
                for ref in refs:
                    got = _ref(src, ref)
                    if got:
                        b.add_heritage(key, "", rel, got[0], got[1])
        elif child.type == "extends_type_clause":  # interface I extends J, K
            for ref in child.named_children:
                got = _ref(src, ref)
                if got:
                    b.add_heritage(key, "", "extends", got[0], got[1])


def _import(b: Builder, stmt: tree_sitter.Node) -> None:
    src = b.source
    spec = _string(src, stmt.child_by_field_name("source"))
    names: list[tuple[str, str]] = []
    alias = None
    for child in stmt.named_children:
        if child.type == "import_clause":
            parts = child.named_children
        elif child.type == "export_clause":
            parts = [child]
        else:
            continue
        for part in parts:
            if part.type == "identifier":
                names.append(("default", text_of(src, part)))
            elif part.type == "namespace_import" and part.named_children:
                alias = text_of(src, part.named_children[0])
            elif part.type in ("named_imports", "export_clause"):
                for s in part.named_children:
                    if s.type not in ("import_specifier", "export_specifier"):
                        continue
                    name = text_of(src, s.child_by_field_name("name"))
                    local = s.child_by_field_name("alias")
                    names.append((name, text_of(src, local) if local else name))
    if stmt.type == "export_statement" and not names and alias is None:
        names.append(("*", "*"))
    b.add_import(RawImport(spec, tuple(names), stmt.start_point[0] + 1, "import", alias))


def _qualifier(source: bytes, node: tree_sitter.Node) -> str:
    if node.type == "this":
        return "self"
    text = text_of(source, node) if node.type in ("identifier", "member_expression") else ""
    return text if text and _DOTTED.fullmatch(text) else "?"


def extract(b: Builder, root: tree_sitter.Node) -> None:
    """Report JS/TS definitions, imports, calls and heritage under ``root``."""
    src = b.source
    extra = _JS_ONLY if b.language == "javascript" else _TS_ONLY
    cursor = tree_sitter.QueryCursor(get_query(b.language, _COMMON + extra))
    for _, caps in cursor.matches(root):
        if "call" in caps:
            call = caps["call"][0]
            callee = text_of(src, caps["callee"][0])
            qual_nodes = caps.get("qual")
            if qual_nodes is None and callee == "require":
                args = call.child_by_field_name("arguments")
                first = args.named_children[0] if args and args.named_children else None
                if first is not None and first.type == "string":
                    b.add_import(RawImport(_string(src, first), (), call.start_point[0] + 1))
                continue
            b.add_call(call.start_byte, callee, _qualifier(src, qual_nodes[0]) if qual_nodes else None)
        elif "method" in caps:
            node = caps["method"][0]
            if node.parent is not None and node.parent.type == "class_body":
                b.add_def(node, "function", text_of(src, caps["name"][0]))
        elif "field" in caps:
            b.add_def(caps["field"][0], "function", text_of(src, caps["name"][0]))
        elif "vardef" in caps:
            b.add_def(_outer(caps["vardef"][0]), "function", text_of(src, caps["name"][0]))
        elif "import" in caps or "reexport" in caps:
            _import(b, (caps.get("import") or caps["reexport"])[0])
        elif "dynimport" in caps:
            b.add_import(RawImport(_string(src, caps["spec"][0]), (),
                                   caps["dynimport"][0].start_point[0] + 1))
        else:
            for kind, cap in (("class", "class"), ("function", "function"),
                              ("interface", "interface"), ("type_alias", "alias"),
                              ("enum", "enum")):
                if cap in caps:
                    node = caps[cap][0]
                    key = b.add_def(_outer(node), kind, text_of(src, caps["name"][0]))
                    if kind in ("class", "interface"):
                        _heritage(b, key, node)
                    break
