"""Project-level resolution: raw imports, calls and heritage become graph edges.

``resolve_file`` only reads the :class:`SymbolIndex`, so a changed file is
re-resolved without touching the rest of the project (its *incoming* edges from
other files are the indexer's concern: re-resolve the files that imported it).
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field

from desktop.memory.text.file_kinds import is_test_file

from .languages import extension
from .model import (
    EXTRACTED,
    INFERRED,
    FileExtraction,
    GraphEdge,
    RawImport,
    external_id,
    file_id,
    parent_dir,
)
from .resolve_refs import resolve_references
from .symbol_index import SymbolIndex, _Symbol

log = logging.getLogger("engram.graph")

_JS_EXTS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs")
_MAX_REEXPORT_DEPTH = 3
_RUST_STD = frozenset({"std", "core", "alloc"})


def _join(*parts: str) -> str:
    return "/".join(p for p in parts if p)


@dataclass
class _Scope:
    """What one file can see: imported files, bound names, star imports, peers."""

    files: dict[str, int] = field(default_factory=dict)  # file -> first import line
    externals: dict[str, int] = field(default_factory=dict)
    names: dict[str, _Symbol] = field(default_factory=dict)
    imported: dict[str, _Symbol] = field(default_factory=dict)
    modules: dict[str, list[str]] = field(default_factory=dict)
    stars: list[str] = field(default_factory=list)
    peers: list[str] = field(default_factory=list)

    def add_file(self, path: str, line: int) -> None:
        self.files.setdefault(path, line)

    def bind(self, local: str, sym: _Symbol) -> None:
        self.names[local] = sym
        self.imported[sym.id] = sym


def _find_exported(index: SymbolIndex, path: str, name: str, depth: int) -> _Symbol | None:
    """Find ``name`` in ``path``, following re-exports (barrels, package __init__)."""
    sym = index.lookup(path, name)
    if sym is not None or depth >= _MAX_REEXPORT_DEPTH:
        return sym
    for imp in index.imports.get(path, ()):
        if any(local == name or n == "*" for n, local in imp.names):
            sub = _Scope()
            _resolve_import(index, path, imp, sub, depth + 1)
            if name in sub.names:
                return sub.names[name]
            for star in sub.stars:
                found = _find_exported(index, star, name, depth + 1)
                if found is not None:
                    return found
    return None


def _bind_names(index: SymbolIndex, scope: _Scope, target: str, imp: RawImport,
                depth: int, names: tuple[tuple[str, str], ...] | None = None) -> None:
    scope.add_file(target, imp.line)
    for name, local in imp.names if names is None else names:
        if name == "*":
            scope.stars.append(target)
            continue
        lookup = local if name == "default" else name  # default export: guess by local name
        sym = _find_exported(index, target, lookup, depth)
        if sym is not None:
            scope.bind(local, sym)


def _py_import(index: SymbolIndex, rel: str, imp: RawImport, scope: _Scope, depth: int) -> None:
    spec = imp.specifier
    if not imp.names:  # import a.b [as c]
        target = index.py_module(spec)
        if target is None:
            scope.externals.setdefault(spec.split(".")[0], imp.line)
            return
        scope.add_file(target, imp.line)
        scope.modules[imp.alias or spec] = [target]
        return
    if spec.startswith("."):
        dots = len(spec) - len(spec.lstrip("."))
        base = parent_dir(rel)
        for _ in range(dots - 1):
            base = parent_dir(base)
        path = _join(base, spec[dots:].replace(".", "/"))

        def first(p: str) -> str | None:
            for cand in (p + ".py", _join(p, "__init__.py"), p + ".pyi"):
                if cand in index.files:
                    return cand
            return None

        module = first(path) if path else first("")
        submodule = lambda n: first(_join(path, n))  # noqa: E731
    else:
        module = index.py_module(spec)
        submodule = lambda n: index.py_module(f"{spec}.{n}")  # noqa: E731
    rest: list[tuple[str, str]] = []
    for name, local in imp.names:
        sub = submodule(name) if name != "*" else None
        if sub is not None:  # `from pkg import mod` imports a module, not a symbol
            scope.add_file(sub, imp.line)
            scope.modules[local] = [sub]
        else:
            rest.append((name, local))
    if module is not None and rest:
        _bind_names(index, scope, module, imp, depth, tuple(rest))
    elif module is None and rest and not spec.startswith("."):
        scope.externals.setdefault(spec.split(".")[0], imp.line)


def _js_file(index: SymbolIndex, path: str) -> str | None:
    if path in index.files and extension(path) in _JS_EXTS:
        return path
    stem = path
    for ext in (".js", ".jsx", ".mjs", ".cjs"):
        if path.endswith(ext):  # TS ESM style: './a.js' names a.ts on disk
            stem = path[: -len(ext)]
            break
    for cand in [stem + e for e in _JS_EXTS] + [_join(path, "index" + e) for e in _JS_EXTS]:
        if cand in index.files:
            return cand
    return None


def _js_import(index: SymbolIndex, rel: str, imp: RawImport, scope: _Scope, depth: int) -> None:
    spec = imp.specifier
    if spec.startswith("."):
        path = posixpath.normpath(_join(parent_dir(rel), spec))
        target = None if path.startswith("..") else _js_file(index, path)
        if target is not None:
            _bind_names(index, scope, target, imp, depth)
            if imp.alias:
                scope.modules[imp.alias] = [target]
        return
    spec = spec.removeprefix("node:")
    parts = spec.split("/")
    scope.externals.setdefault("/".join(parts[:2]) if spec.startswith("@") else parts[0], imp.line)


def _go_import(index: SymbolIndex, rel: str, imp: RawImport, scope: _Scope) -> None:
    pkg_dir = index.go_package_dir(imp.specifier)
    if pkg_dir is None:
        scope.externals.setdefault(imp.specifier, imp.line)
        return
    targets = [f for f in index.dir_files(pkg_dir) if f.endswith(".go")
               and not f.endswith("_test.go") and f != rel]
    for t in targets:
        scope.add_file(t, imp.line)
    if imp.alias:
        scope.modules[imp.alias] = targets


def _rust_import(index: SymbolIndex, rel: str, imp: RawImport, scope: _Scope, depth: int) -> None:
    root, cur = index.rust_module_of(rel)
    if imp.kind == "mod":
        name = rel.rsplit("/", 1)[-1]
        d = parent_dir(rel)
        child_dir = d if name in ("mod.rs", "lib.rs", "main.rs") else _join(d, name[:-3])
        for cand in (_join(child_dir, imp.specifier + ".rs"),
                     _join(child_dir, imp.specifier, "mod.rs")):
            if cand in index.files:
                scope.add_file(cand, imp.line)
                scope.modules[imp.specifier] = [cand]
                break
        return
    segs = tuple(s for s in imp.specifier.split("::") if s)
    if segs and segs[0] == "crate":
        base = segs[1:]
    elif segs and segs[0] in ("self", "super"):
        base = cur
        while segs and segs[0] in ("self", "super"):
            base = base[:-1] if segs[0] == "super" else base
            segs = segs[1:]
        base = base + segs
    else:
        head = segs[0] if segs else (imp.names[0][0] if imp.names else "")
        if index.rust_module(root, (*cur, head)):
            base = cur + segs
        elif index.rust_module(root, (head,)):
            base = segs
        else:
            # Integration tests name their own crate like an external one.
            crate = index.rust_crate_of_outsider(rel) if head not in _RUST_STD else None
            if crate is None or not segs:
                scope.externals.setdefault(head, imp.line)
                return
            root, base = crate, segs[1:]
    for name, local in imp.names:
        full = (*base, name)
        module = index.rust_module(root, full) if name != "*" else None
        if module is not None:
            scope.add_file(module, imp.line)
            scope.modules[local] = [module]
            continue
        for cut in range(len(base), -1, -1):
            target = index.rust_module(root, base[:cut])
            if target is not None and target != rel:
                qual = ".".join((*base[cut:], name)) if name != "*" else "*"
                _bind_names(index, scope, target, imp, depth, ((qual, local),))
                break


def _java_import(index: SymbolIndex, imp: RawImport, scope: _Scope, depth: int) -> None:
    spec = imp.specifier
    if imp.names and imp.names[0][0] == "*" and imp.kind != "static":
        peers = index.package_peers("java", spec)
        for f in peers:
            scope.add_file(f, imp.line)
            scope.stars.append(f)
        if not peers:
            scope.externals.setdefault(spec, imp.line)
        return
    cls_spec = spec
    target = index.java_class(cls_spec)
    inner: list[str] = []
    while target is None and "." in cls_spec:  # nested class: a.b.Outer.Inner
        cls_spec, _, last = cls_spec.rpartition(".")
        inner.insert(0, last)
        target = index.java_class(cls_spec)
    if target is None:
        scope.externals.setdefault(spec.rpartition(".")[0] or spec, imp.line)
        return
    qual = ".".join([cls_spec.rpartition(".")[2], *inner])
    if imp.kind == "static":
        names = tuple((f"{qual}.{n}" if n != "*" else "*", local) for n, local in imp.names)
    else:
        names = ((qual, imp.names[0][1] if imp.names else qual),)
    _bind_names(index, scope, target, imp, depth, names)


def _resolve_import(index: SymbolIndex, rel: str, imp: RawImport, scope: _Scope, depth: int) -> None:
    lang = index.languages.get(rel)
    if lang == "python":
        _py_import(index, rel, imp, scope, depth)
    elif lang in ("javascript", "typescript", "tsx"):
        _js_import(index, rel, imp, scope, depth)
    elif lang == "go":
        _go_import(index, rel, imp, scope)
    elif lang == "rust":
        _rust_import(index, rel, imp, scope, depth)
    elif lang == "java":
        _java_import(index, imp, scope, depth)


def build_scope(rel_path: str, extraction: FileExtraction, index: SymbolIndex) -> _Scope:
    """Resolve every import of one file and collect what its code can name."""
    scope = _Scope()
    for imp in extraction.imports:
        _resolve_import(index, rel_path, imp, scope, 0)
    scope.files.pop(rel_path, None)
    if extraction.language == "go":
        scope.peers = [f for f in index.dir_files(parent_dir(rel_path))
                       if f.endswith(".go") and f != rel_path]
    elif extraction.language == "java" and extraction.package:
        scope.peers = [f for f in index.package_peers("java", extraction.package) if f != rel_path]
    return scope


def resolve_file(rel_path: str, extraction: FileExtraction, index: SymbolIndex) -> list[GraphEdge]:
    """Return the cross-file edges owned by one file (its outgoing edges and, for a
    test file, the ``tested_by`` edges pointing at it)."""
    scope = build_scope(rel_path, extraction, index)
    fid = file_id(rel_path)
    edges: dict[GraphEdge, None] = {}
    for target, line in scope.files.items():
        edges[GraphEdge(fid, file_id(target), "imports", EXTRACTED, {"line": line})] = None
    for name, line in scope.externals.items():
        edges[GraphEdge(fid, external_id(name), "imports", EXTRACTED, {"line": line})] = None
    for sym in scope.imported.values():
        if sym.file != rel_path:
            edges[GraphEdge(fid, sym.id, "imports_symbol", EXTRACTED)] = None
    for edge in resolve_references(rel_path, extraction, index, scope):
        edges.setdefault(edge, None)
    if is_test_file(rel_path):
        tested = [f for f in scope.files if not is_test_file(f)]
        if extraction.language == "go":  # Go tests sit in the package they test
            tested += [f for f in scope.peers if not is_test_file(f)]
        for target in tested:
            edges.setdefault(GraphEdge(file_id(target), fid, "tested_by", INFERRED), None)
        for sym in scope.imported.values():
            if not is_test_file(sym.file):
                edges.setdefault(GraphEdge(sym.id, fid, "tested_by", INFERRED), None)
    return list(edges)


def resolve_project(extractions: Mapping[str, FileExtraction], known_files: set[str]) -> list[GraphEdge]:
    """Resolve every file against a fresh index of the whole project."""
    index = SymbolIndex.build(extractions, known_files | set(extractions))
    out: list[GraphEdge] = []
    for path in sorted(extractions):
        out.extend(resolve_file(path, extractions[path], index))
    log.debug("resolved %d edges over %d files", len(out), len(extractions))
    return out


__all__ = ["SymbolIndex", "build_scope", "is_test_file", "resolve_file", "resolve_project"]
