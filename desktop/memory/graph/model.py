"""Value types of the layer-1 code graph: nodes, edges, chunks and per-file extractions.

Everything here is a plain frozen dataclass so extraction results can cross threads
and be handed to the single writer thread without copying or locking.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

NodeType = Literal[
    "file", "module", "class", "function", "method", "interface", "type_alias", "enum"
]
EdgeType = Literal[
    "imports", "imports_symbol", "defined_in", "calls", "extends", "implements", "tested_by"
]
ChunkType = Literal["function", "class", "module", "prose"]
HeritageRelation = Literal["extends", "implements"]

# Confidence of an edge: "extracted" is read straight off the syntax tree or resolved
# by path; "inferred" was matched by name and may be wrong (shadowing, dynamic dispatch).
EXTRACTED = "extracted"
INFERRED = "inferred"

SYMBOL_TYPES: frozenset[str] = frozenset(
    {"class", "function", "method", "interface", "type_alias", "enum"}
)
CLASS_LIKE: frozenset[str] = frozenset({"class", "interface", "enum"})
CALLABLE: frozenset[str] = frozenset({"function", "method"})


def file_id(rel_path: str) -> str:
    """Return the stable node id of a project file (``file:src/a.py``)."""
    return f"file:{rel_path}"


def symbol_id(rel_path: str, qualname: str) -> str:
    """Return the stable node id of a symbol (``sym:src/a.py:Class.method``)."""
    return f"sym:{rel_path}:{qualname}"


def module_id(directory: str) -> str:
    """Return the stable node id of a directory module; the project root is ``mod:.``."""
    return f"mod:{directory or '.'}"


def external_id(name: str) -> str:
    """Return the stable node id of an external (not in project) module (``ext:requests``)."""
    return f"ext:{name}"


def parent_dir(rel_path: str) -> str:
    """Return the directory part of a forward-slash relative path ('' for the root)."""
    cut = rel_path.rfind("/")
    return rel_path[:cut] if cut >= 0 else ""


@dataclass(frozen=True, slots=True)
class GraphNode:
    """A structural node. ``metadata`` is excluded from equality and hashing."""

    id: str
    type: NodeType
    label: str
    file_path: str | None = None
    language: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    metadata: Mapping[str, object] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """A directed structural edge. ``metadata`` is excluded from equality and hashing."""

    from_id: str
    to_id: str
    type: EdgeType
    confidence: str = EXTRACTED
    metadata: Mapping[str, object] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class CodeChunk:
    """A retrieval unit of source text; ``context_prefix`` is prepended at embed time."""

    file_path: str
    language: str | None
    chunk_type: ChunkType
    symbol: str | None
    start_line: int
    end_line: int
    text: str
    context_prefix: str


@dataclass(frozen=True, slots=True)
class RawImport:
    """One import statement as written, before resolution.

    ``specifier`` is the module as spelled in the language (``.x``, ``./a``,
    ``crate::a``, ``com.ex.Util``); ``names`` holds ``(imported, local)`` pairs, with
    ``*`` for wildcards and ``default`` for a JS default import. ``kind`` is
    ``import`` except Rust ``mod x;`` (``mod``) and Java static imports (``static``).
    """

    specifier: str
    names: tuple[tuple[str, str], ...] = ()
    line: int = 0
    kind: str = "import"
    alias: str | None = None  # local name bound to the module itself (import a as b)


@dataclass(frozen=True, slots=True)
class RawCall:
    """A call site: ``caller_id`` (symbol or file) calls ``qualifier.name(...)``.

    ``qualifier`` is None for a bare call, ``self`` for a call on the receiver of the
    enclosing method, the receiver text for simple names, or ``?`` when unknowable.
    """

    caller_id: str
    name: str
    qualifier: str | None = None


@dataclass(frozen=True, slots=True)
class RawHeritage:
    """``subject`` extends/implements ``qualifier.name``.

    ``subject_id`` is set when the subject is defined in this file; Rust ``impl T for S``
    may name a type defined elsewhere, so ``subject_name`` is resolved like a reference.
    """

    subject_id: str | None
    subject_name: str
    relation: HeritageRelation
    name: str
    qualifier: str | None = None


@dataclass(frozen=True, slots=True)
class FileExtraction:
    """Everything layer-1 learns from one file without looking at any other file."""

    rel_path: str
    language: str | None
    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]
    imports: tuple[RawImport, ...] = ()
    calls: tuple[RawCall, ...] = ()
    heritage: tuple[RawHeritage, ...] = ()
    had_errors: bool = False
    package: str | None = None  # Go package clause / Java package declaration
    line_count: int = 0

    @property
    def symbols(self) -> tuple[GraphNode, ...]:
        """Return the symbol nodes (everything except the file node)."""
        return tuple(n for n in self.nodes if n.type in SYMBOL_TYPES)

    @property
    def unresolved_call_names(self) -> tuple[str, ...]:
        """Return the distinct called names, in first-seen order."""
        return tuple(dict.fromkeys(c.name for c in self.calls))

    @property
    def imported_symbol_names(self) -> tuple[str, ...]:
        """Return the distinct imported symbol names, in first-seen order."""
        return tuple(dict.fromkeys(n for imp in self.imports for n, _ in imp.names))


def pickle_by_fields(cls: type[Any]) -> type[Any]:
    """Pickle a frozen slots dataclass as its constructor arguments.

    The parse pool sends tens of thousands of these back from its workers; the
    default for slots dataclasses (``_dataclass_setstate``, which calls ``fields()``
    for every object) took about a sixth of the indexer thread's time unpickling them.
    """
    names = tuple(cls.__slots__)

    def __reduce__(self: Any) -> tuple[type[Any], tuple[Any, ...]]:
        return type(self), tuple(getattr(self, name) for name in names)

    setattr(cls, "__reduce__", __reduce__)  # noqa: B010 (mypy rejects assigning a method)
    return cls


for _cls in (GraphNode, GraphEdge, CodeChunk, RawImport, RawCall, RawHeritage, FileExtraction):
    pickle_by_fields(_cls)
