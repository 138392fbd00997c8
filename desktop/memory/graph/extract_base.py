"""Language-neutral half of extraction: nesting, qualified names, ids, call owners.

Each language module only reports *facts* (a definition spans these bytes, a call to
``q.name`` happens at this byte, ...). This builder turns them into nodes and edges,
so nesting rules and the id scheme live in exactly one place.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

import tree_sitter

from .model import (
    CLASS_LIKE,
    EXTRACTED,
    FileExtraction,
    GraphEdge,
    GraphNode,
    HeritageRelation,
    RawCall,
    RawHeritage,
    RawImport,
    file_id,
    module_id,
    parent_dir,
    symbol_id,
)

# Definition kinds a language module may report. "container" names a scope without
# being a node itself (a Rust impl block); "function" becomes "method" inside a class.
DEF_KINDS = frozenset({"class", "interface", "enum", "type_alias", "function", "container"})


def text_of(source: bytes, node: tree_sitter.Node | None) -> str:
    """Decode a node's source text; invalid UTF-8 is replaced, never raised."""
    if node is None:
        return ""
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def line_span(node: tree_sitter.Node) -> tuple[int, int]:
    """Return the 1-based inclusive (start, end) lines of a node."""
    start_row = node.start_point[0]
    end_row, end_col = node.end_point
    # A node ending at column 0 stops at the newline of the previous line.
    if end_col == 0 and end_row > start_row:
        end_row -= 1
    return start_row + 1, end_row + 1


@dataclass(slots=True)
class _Def:
    start: int
    end: int
    lines: tuple[int, int]
    kind: str
    name: str
    container: str | None = None  # explicit owner type (Go receiver, Rust impl type)
    receiver: str | None = None  # receiver variable name that means "self"
    meta: dict[str, object] = field(default_factory=dict)
    parent: int = -1
    owner: str = ""  # id that calls inside this def are attributed to
    qualname: str = ""
    node_id: str | None = None
    node_type: str = ""


class Builder:
    """Collects facts for one file and assembles a :class:`FileExtraction`."""

    def __init__(self, rel_path: str, language: str, source: bytes) -> None:
        """Start an empty extraction of ``rel_path``."""
        self.rel_path = rel_path
        self.language = language
        self.source = source
        self.file_id = file_id(rel_path)
        self.package: str | None = None
        self._defs: list[_Def] = []
        self._imports: list[RawImport] = []
        self._calls: list[tuple[int, str, str | None]] = []
        self._heritage: list[tuple[int | None, str, HeritageRelation, str, str | None]] = []

    def add_def(
        self,
        node: tree_sitter.Node,
        kind: str,
        name: str,
        *,
        container: str | None = None,
        receiver: str | None = None,
        **meta: object,
    ) -> int:
        """Record a definition spanning ``node``; returns its start byte (its key)."""
        self._defs.append(
            _Def(node.start_byte, node.end_byte, line_span(node), kind, name,
                 container, receiver, dict(meta))
        )
        return node.start_byte

    def add_import(self, imp: RawImport) -> None:
        """Record an import statement."""
        self._imports.append(imp)

    def add_call(self, at_byte: int, name: str, qualifier: str | None = None) -> None:
        """Record a call of ``qualifier.name`` at byte offset ``at_byte``."""
        if name:
            self._calls.append((at_byte, name, qualifier))

    def add_heritage(
        self, def_key: int | None, subject_name: str, relation: HeritageRelation, name: str,
        qualifier: str | None = None,
    ) -> None:
        """Record that the def starting at ``def_key`` (or named type) extends/implements."""
        if name:
            self._heritage.append((def_key, subject_name, relation, name, qualifier))

    def _assign(self) -> list[GraphNode]:
        defs = self._defs
        defs.sort(key=lambda d: (d.start, -d.end))
        stack: list[int] = []
        seen: dict[str, int] = {}
        nodes: list[GraphNode] = []
        for i, d in enumerate(defs):
            while stack and defs[stack[-1]].end <= d.start:
                stack.pop()
            d.parent = stack[-1] if stack else -1
            stack.append(i)
            parent = defs[d.parent] if d.parent >= 0 else None
            if parent is not None and (parent.kind in ("function", "type_alias")
                                       or (parent.node_id is None and parent.kind != "container")):
                # Local definitions are not graph nodes: their calls belong to the owner.
                d.owner = parent.owner
                continue
            prefix = d.container
            if parent is not None:
                prefix = parent.qualname if parent.kind != "container" else parent.name
            if d.kind == "container":
                d.owner = parent.owner if parent is not None else self.file_id
                d.qualname = d.name
                continue
            qual = f"{prefix}.{d.name}" if prefix else d.name
            count = seen.get(qual, 0) + 1
            seen[qual] = count
            if count > 1:  # overloads and redefinitions keep distinct, stable ids
                qual = f"{qual}#{count}"
            d.qualname = qual
            d.node_type = "method" if d.kind == "function" and prefix else d.kind
            d.node_id = d.owner = symbol_id(self.rel_path, qual)
            meta: dict[str, object] = {"qualname": qual, **d.meta}
            if prefix:
                meta["parent"] = prefix
            nodes.append(GraphNode(d.node_id, d.node_type, qual,  # type: ignore[arg-type]
                                   self.rel_path, self.language, d.lines[0], d.lines[1], meta))
        return nodes

    def _owner_at(self, pos: int, starts: list[int]) -> _Def | None:
        i = bisect_right(starts, pos) - 1
        defs = self._defs
        while i >= 0:
            d = defs[i]
            if d.start <= pos < d.end:
                return d
            i = d.parent
        return None

    def finish(self, had_errors: bool, line_count: int) -> FileExtraction:
        """Assemble the immutable extraction."""
        nodes = self._assign()
        by_qual = {d.qualname: d for d in self._defs if d.node_id is not None}
        fid = self.file_id
        lang = self.language
        file_node = GraphNode(fid, "file", self.rel_path, self.rel_path, lang, 1,
                              max(line_count, 1), {"package": self.package} if self.package else {})
        edges: list[GraphEdge] = [
            GraphEdge(fid, module_id(parent_dir(self.rel_path)), "defined_in", EXTRACTED)
        ]
        for d in self._defs:
            if d.node_id is None:
                continue
            target = fid
            owner = d.qualname.rsplit(".", 1)[0] if "." in d.qualname else None
            if owner is not None:
                holder = by_qual.get(owner)
                if holder is not None and holder.node_type in CLASS_LIKE:
                    target = holder.node_id or fid
            edges.append(GraphEdge(d.node_id, target, "defined_in", EXTRACTED))
        starts = [d.start for d in self._defs]
        calls: dict[RawCall, None] = {}
        for pos, name, qual in self._calls:
            owner_def = self._owner_at(pos, starts)
            owner_id = owner_def.owner if owner_def is not None else fid
            if qual is not None and owner_def is not None and qual == _receiver_of(owner_def, self._defs):
                qual = "self"
            calls[RawCall(owner_id, name, qual)] = None
        heritage: dict[RawHeritage, None] = {}
        key_to_def = {d.start: d for d in self._defs}
        for key, subject, rel, name, qual in self._heritage:
            subject_def = key_to_def.get(key) if key is not None else None
            sid = subject_def.node_id if subject_def is not None else None
            sname = subject_def.qualname if subject_def is not None and sid else subject
            heritage[RawHeritage(sid, sname, rel, name, qual)] = None
        return FileExtraction(
            self.rel_path, lang, (file_node, *nodes), tuple(edges), tuple(self._imports),
            tuple(calls), tuple(heritage), had_errors, self.package, line_count,
        )


def _receiver_of(d: _Def, defs: list[_Def]) -> str | None:
    # Walk up to the emitted def that owns this scope and use its receiver name.
    while d is not None:
        if d.receiver is not None:
            return d.receiver
        if d.node_id is not None or d.parent < 0:
            return None
        d = defs[d.parent]
    return None
