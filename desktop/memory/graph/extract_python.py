"""Python facts: classes, functions/methods, type aliases, imports, calls, bases."""

from __future__ import annotations

import re

import tree_sitter

from .extract_base import Builder, text_of
from .languages import get_query
from .model import RawImport

_QUERY = r"""
(class_definition name: (identifier) @name) @class
(function_definition name: (identifier) @name) @function
(type_alias_statement left: (type (identifier) @name)) @alias
(expression_statement (assignment left: (identifier) @name type: (type) @ann)) @annotated
(import_statement) @import
(import_from_statement) @import_from
(call function: (identifier) @callee) @call
(call function: (attribute object: (_) @qual attribute: (identifier) @callee)) @call
"""

_ENUM_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"})
_INTERFACE_BASES = frozenset({"Protocol"})
_DOTTED = re.compile(r"[A-Za-z_][\w.]*")


def _dotted(source: bytes, node: tree_sitter.Node) -> str | None:
    """Return ``a.b.c`` for identifier/attribute chains, None for anything else."""
    if node.type == "identifier":
        return text_of(source, node)
    if node.type == "attribute":
        text = text_of(source, node)
        return text if _DOTTED.fullmatch(text) else None
    return None


def _bases(source: bytes, cls: tree_sitter.Node) -> list[tuple[str, str | None]]:
    args = cls.child_by_field_name("superclasses")
    out: list[tuple[str, str | None]] = []
    if args is None:
        return out
    for arg in args.named_children:
        if arg.type == "subscript":  # Generic[T], Protocol[T]
            arg = arg.child_by_field_name("value") or arg
        dotted = _dotted(source, arg)
        if dotted is None:
            continue  # keyword arguments (metaclass=...) and expressions
        qual, _, name = dotted.rpartition(".")
        out.append((name, qual or None))
    return out


def _import_names(source: bytes, stmt: tree_sitter.Node) -> list[tuple[str, str]]:
    names: list[tuple[str, str]] = []
    for child in stmt.children_by_field_name("name"):
        if child.type == "aliased_import":
            name = text_of(source, child.child_by_field_name("name"))
            names.append((name, text_of(source, child.child_by_field_name("alias"))))
        else:
            name = text_of(source, child)
            names.append((name, name))
    return names


def extract(b: Builder, root: tree_sitter.Node) -> None:
    """Report every Python definition, import, call and base class under ``root``."""
    src = b.source
    cursor = tree_sitter.QueryCursor(get_query("python", _QUERY))
    for _, caps in cursor.matches(root):
        if "call" in caps:
            node = caps["call"][0]
            qual_nodes = caps.get("qual")
            qual = None
            if qual_nodes:
                qual = _dotted(src, qual_nodes[0]) or "?"
            b.add_call(node.start_byte, text_of(src, caps["callee"][0]), qual)
        elif "function" in caps:
            node = caps["function"][0]
            outer = node.parent if node.parent and node.parent.type == "decorated_definition" else node
            b.add_def(outer, "function", text_of(src, caps["name"][0]))
        elif "class" in caps:
            node = caps["class"][0]
            outer = node.parent if node.parent and node.parent.type == "decorated_definition" else node
            bases = _bases(src, node)
            names = {n for n, _ in bases}
            kind = ("enum" if names & _ENUM_BASES
                    else "interface" if names & _INTERFACE_BASES else "class")
            key = b.add_def(outer, kind, text_of(src, caps["name"][0]))
            for name, qual in bases:
                b.add_heritage(key, "", "extends", name, qual)
        elif "alias" in caps:
            b.add_def(caps["alias"][0], "type_alias", text_of(src, caps["name"][0]))
        elif "annotated" in caps:
            if text_of(src, caps["ann"][0]).endswith("TypeAlias"):
                b.add_def(caps["annotated"][0], "type_alias", text_of(src, caps["name"][0]))
        elif "import" in caps:
            stmt = caps["import"][0]
            line = stmt.start_point[0] + 1
            for name, local in _import_names(src, stmt):
                # `import a.b` binds `a.b` as a qualifier; `import a.b as c` binds `c`.
                b.add_import(RawImport(name, (), line, "import", local))
        elif "import_from" in caps:
            stmt = caps["import_from"][0]
            module = text_of(src, stmt.child_by_field_name("module_name")).replace(" ", "")
            imported = _import_names(src, stmt)
            if any(c.type == "wildcard_import" for c in stmt.named_children):
                imported.append(("*", "*"))
            b.add_import(RawImport(module, tuple(imported), stmt.start_point[0] + 1))
