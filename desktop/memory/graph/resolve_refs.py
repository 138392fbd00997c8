"""Name resolution of calls and extends/implements against one file's scope.

Resolution is by name only (no types), so every edge made here is ``inferred``:
``self.x()`` is looked up on the enclosing class, ``mod.f()`` in the imported module,
``Cls.m()`` on a visible class, and a bare ``f()`` in the file, then its imports,
then star imports, then its package peers (Go, Java).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from .model import CALLABLE, INFERRED, FileExtraction, GraphEdge
from .symbol_index import SymbolIndex, _Symbol

if TYPE_CHECKING:
    from .resolve import _Scope

_TYPE_TARGETS = frozenset({"class", "interface", "enum", "type_alias"})


class _Resolver:
    def __init__(self, rel_path: str, extraction: FileExtraction, index: SymbolIndex,
                 scope: _Scope) -> None:
        self.rel = rel_path
        self.lang = extraction.language
        self.index = index
        self.scope = scope
        self.own = index.symbols.get(rel_path, {})

    def bare(self, name: str) -> _Symbol | None:
        """Look a bare name up: own file, imported names, star imports, package peers."""
        sym = self.own.get(name) or self.scope.names.get(name)
        if sym is not None:
            return sym
        for path in (*self.scope.stars, *self.scope.peers):
            sym = self.index.lookup(path, name)
            if sym is not None:
                return sym
        return None

    def member(self, owner: _Symbol, name: str) -> _Symbol | None:
        """Find ``owner.name`` where the class is defined, else in this file (Rust impls)."""
        qual = f"{owner.qualname}.{name}"
        return self.index.lookup(owner.file, qual) or self.own.get(qual)

    def qualified(self, qualifier: str, name: str) -> _Symbol | None:
        """Resolve ``qualifier.name`` through module aliases or a visible class."""
        files = self.scope.modules.get(qualifier)
        if files:
            for path in files:
                sym = self.index.lookup(path, name)
                if sym is not None:
                    return sym
            return None
        owner = self.bare(qualifier)
        if owner is not None and owner.type in ("class", "interface", "enum"):
            return self.member(owner, name)
        return None

    def call(self, caller_id: str, name: str, qualifier: str | None) -> _Symbol | None:
        """Resolve one call site to a function or method symbol."""
        caller = self.index.by_id.get(caller_id)
        cls_qual = caller.qualname.rpartition(".")[0] if caller is not None else ""
        if qualifier is None:
            if cls_qual and self.lang == "java":  # implicit `this` in Java
                sym = self.own.get(f"{cls_qual}.{name}")
                if sym is not None:
                    return sym
            return self.bare(name)
        if qualifier == "self":
            if not cls_qual:
                return None
            sym = self.own.get(f"{cls_qual}.{name}")
            if sym is None:  # Rust/Go: the type may be declared in another file
                owner = self.bare(cls_qual.split(".")[0])
                sym = self.member(owner, name) if owner is not None else None
            return sym
        if qualifier == "?":
            return None
        return self.qualified(qualifier, name)


def resolve_references(rel_path: str, extraction: FileExtraction, index: SymbolIndex,
                       scope: _Scope) -> Iterator[GraphEdge]:
    """Yield ``calls``, ``extends`` and ``implements`` edges for one file."""
    r = _Resolver(rel_path, extraction, index, scope)
    for call in extraction.calls:
        target = r.call(call.caller_id, call.name, call.qualifier)
        if target is not None and target.type in CALLABLE:
            yield GraphEdge(call.caller_id, target.id, "calls", INFERRED)
    for her in extraction.heritage:
        subject_id = her.subject_id
        if subject_id is None:  # Rust `impl Trait for Type`: Type may live elsewhere
            subject = r.bare(her.subject_name)
            if subject is None or subject.type not in _TYPE_TARGETS:
                continue
            subject_id = subject.id
        target = r.qualified(her.qualifier, her.name) if her.qualifier else r.bare(her.name)
        if target is not None and target.type in _TYPE_TARGETS and target.id != subject_id:
            yield GraphEdge(subject_id, target.id, her.relation, INFERRED)
