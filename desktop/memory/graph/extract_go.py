"""Go facts: package clause, functions, methods (by receiver type), struct /
interface / other type declarations, imports, calls and struct/interface embedding."""

from __future__ import annotations

import re

import tree_sitter

from .extract_base import Builder, text_of
from .languages import get_query
from .model import RawImport

_QUERY = r"""
(package_clause (package_identifier) @pkg)
(function_declaration name: (identifier) @name) @function
(method_declaration receiver: (parameter_list) @recv name: (field_identifier) @name) @method
(type_spec name: (type_identifier) @name type: (_) @type) @spec
(type_alias name: (type_identifier) @name) @alias
(import_spec) @import
(call_expression function: (identifier) @callee) @call
(call_expression function: (selector_expression operand: (_) @qual
  field: (field_identifier) @callee)) @call
"""
_TYPE_NAME = re.compile(r"[A-Za-z_]\w*")
_VERSION = re.compile(r"v\d+")


def _receiver(source: bytes, params: tree_sitter.Node) -> tuple[str | None, str | None]:
    """Return (receiver variable, receiver type name) of a method."""
    for decl in params.named_children:
        if decl.type != "parameter_declaration":
            continue
        name = decl.child_by_field_name("name")
        match = _TYPE_NAME.search(text_of(source, decl.child_by_field_name("type")))
        return (text_of(source, name) if name else None), (match.group(0) if match else None)
    return None, None


def _outer(node: tree_sitter.Node) -> tree_sitter.Node:
    # A lone spec keeps its `type` keyword; specs grouped in `type ( ... )` stand alone.
    parent = node.parent
    if parent is not None and parent.type == "type_declaration" and parent.named_child_count == 1:
        return parent
    return node


def _embedded(b: Builder, key: int, type_node: tree_sitter.Node) -> None:
    """Struct embedding and interface embedding are Go's form of ``extends``."""
    src = b.source
    body = type_node.named_children[0] if type_node.named_children else None
    if type_node.type == "struct_type" and body is not None:
        for field in body.named_children:
            if field.type == "field_declaration" and field.child_by_field_name("name") is None:
                text = text_of(src, field.child_by_field_name("type")).lstrip("*")
                qual, _, name = text.rpartition(".")
                b.add_heritage(key, "", "extends", name, qual or None)
    elif type_node.type == "interface_type":
        for elem in type_node.named_children:
            if elem.type == "type_elem":
                text = text_of(src, elem)
                if _TYPE_NAME.fullmatch(text.replace(".", "_")):
                    qual, _, name = text.rpartition(".")
                    b.add_heritage(key, "", "extends", name, qual or None)


def package_alias(path: str) -> str:
    """Return the identifier an unaliased Go import binds (last non-version segment)."""
    parts = path.split("/")
    if len(parts) > 1 and _VERSION.fullmatch(parts[-1]):
        return parts[-2]
    return parts[-1]


def extract(b: Builder, root: tree_sitter.Node) -> None:
    """Report Go definitions, imports and calls under ``root``."""
    src = b.source
    cursor = tree_sitter.QueryCursor(get_query("go", _QUERY))
    for _, caps in cursor.matches(root):
        if "call" in caps:
            qual_nodes = caps.get("qual")
            qual = None
            if qual_nodes:
                q = qual_nodes[0]
                qual = text_of(src, q) if q.type == "identifier" else "?"
            b.add_call(caps["call"][0].start_byte, text_of(src, caps["callee"][0]), qual)
        elif "function" in caps:
            b.add_def(caps["function"][0], "function", text_of(src, caps["name"][0]))
        elif "method" in caps:
            recv_name, recv_type = _receiver(src, caps["recv"][0])
            b.add_def(caps["method"][0], "function", text_of(src, caps["name"][0]),
                      container=recv_type, receiver=recv_name)
        elif "spec" in caps:
            type_node = caps["type"][0]
            kind = {"struct_type": "class", "interface_type": "interface"}.get(
                type_node.type, "type_alias")
            key = b.add_def(_outer(caps["spec"][0]), kind, text_of(src, caps["name"][0]))
            _embedded(b, key, type_node)
        elif "alias" in caps:
            b.add_def(_outer(caps["alias"][0]), "type_alias", text_of(src, caps["name"][0]))
        elif "import" in caps:
            spec = caps["import"][0]
            path = text_of(src, spec.child_by_field_name("path")).strip('"`')
            name = spec.child_by_field_name("name")
            alias = text_of(src, name) if name is not None else package_alias(path)
            b.add_import(RawImport(path, (), spec.start_point[0] + 1, "import", alias))
        elif "pkg" in caps:
            b.package = text_of(src, caps["pkg"][0])
