"""Project-wide lookup tables used to resolve one file's references.

The index holds, per file, its symbols and raw imports; derived maps (Python dotted
module names, Rust module paths, Java class names, Go package directories) are
rebuilt lazily only when the *set* of files changes, so re-indexing one edited file
is an O(file) update.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .languages import detect_language
from .model import FileExtraction, RawImport, parent_dir

log = logging.getLogger("engram.graph")

_PY_SUFFIXES = (".py", ".pyi")
_RUST_ROOTS = ("lib.rs", "main.rs")


def _stem(rel_path: str) -> str:
    name = rel_path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0]


@dataclass(slots=True)
class _Symbol:
    id: str
    type: str
    file: str
    qualname: str


@dataclass
class SymbolIndex:
    """Maps module paths and symbol names to node ids for every known project file."""

    files: set[str] = field(default_factory=set)
    symbols: dict[str, dict[str, _Symbol]] = field(default_factory=dict)
    imports: dict[str, tuple[RawImport, ...]] = field(default_factory=dict)
    packages: dict[str, str] = field(default_factory=dict)
    languages: dict[str, str | None] = field(default_factory=dict)
    by_id: dict[str, _Symbol] = field(default_factory=dict)
    _derived: dict[str, object] | None = None

    @classmethod
    def build(cls, extractions: Mapping[str, FileExtraction], known_files: Iterable[str]) -> SymbolIndex:
        """Index every known file; files without an extraction only count as paths."""
        index = cls()
        for path in known_files:
            index.files.add(path)
            index.languages[path] = detect_language(path)
        for path, extraction in extractions.items():
            index.update(path, extraction)
        return index

    def update(self, rel_path: str, extraction: FileExtraction) -> None:
        """Add or replace one file's symbols and imports."""
        self.remove_symbols(rel_path)
        if rel_path not in self.files:
            self.files.add(rel_path)
            self._derived = None
        self.languages[rel_path] = extraction.language
        table: dict[str, _Symbol] = {}
        for node in extraction.symbols:
            qual = str(node.metadata.get("qualname", node.label))
            sym = _Symbol(node.id, node.type, rel_path, qual)
            table[qual] = sym
            self.by_id[node.id] = sym
        self.symbols[rel_path] = table
        self.imports[rel_path] = extraction.imports
        if extraction.package:
            if self.packages.get(rel_path) != extraction.package:
                self._derived = None
            self.packages[rel_path] = extraction.package
        elif self.packages.pop(rel_path, None) is not None:
            self._derived = None

    def remove_symbols(self, rel_path: str) -> None:
        """Forget a file's symbols (keeping the path known)."""
        for sym in self.symbols.pop(rel_path, {}).values():
            self.by_id.pop(sym.id, None)
        self.imports.pop(rel_path, None)

    def remove(self, rel_path: str) -> None:
        """Forget a deleted file entirely."""
        self.remove_symbols(rel_path)
        self.packages.pop(rel_path, None)
        self.languages.pop(rel_path, None)
        if rel_path in self.files:
            self.files.discard(rel_path)
            self._derived = None

    # -- derived maps -------------------------------------------------------------

    def _maps(self) -> dict[str, object]:
        if self._derived is None:
            self._derived = self._derive()
        return self._derived

    def _derive(self) -> dict[str, object]:
        files = sorted(self.files)
        dir_files: dict[str, list[str]] = {}
        for f in files:
            dir_files.setdefault(parent_dir(f), []).append(f)
        py_modules: dict[str, str] = {}
        pkg_dirs = {parent_dir(f) for f in files if f.rsplit("/", 1)[-1] == "__init__.py"}
        for f in files:
            if not f.endswith(_PY_SUFFIXES):
                continue
            parts = f.rsplit(".", 1)[0].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            # The import root is the first ancestor that is not a package (sys.path
            # semantics); the project-root spelling is kept as a fallback.
            start = len(parts) - 1
            while start > 0 and "/".join(parts[:start]) in pkg_dirs:
                start -= 1
            for dotted in (".".join(parts[start:]), ".".join(parts)):
                if dotted and (dotted not in py_modules or f.endswith(".py")):
                    py_modules.setdefault(dotted, f)
        rust_roots = {parent_dir(f) for f in files if f.rsplit("/", 1)[-1] in _RUST_ROOTS}
        rust_modules: dict[tuple[str, tuple[str, ...]], str] = {}
        rust_file_mod: dict[str, tuple[str, tuple[str, ...]]] = {}
        for f in files:
            if not f.endswith(".rs"):
                continue
            root = _rust_root(f, rust_roots)
            rel = f[len(root) + 1:] if root else f
            segs = rel[:-3].split("/")
            if segs[-1] == "mod" or (len(segs) == 1 and segs[0] in ("lib", "main")):
                segs = segs[:-1]
            key = (root, tuple(segs))
            rust_modules.setdefault(key, f)
            rust_file_mod[f] = key
        java_classes: dict[str, str] = {}
        package_files: dict[str, list[str]] = {}
        for f, pkg in sorted(self.packages.items()):
            package_files.setdefault(f"{self.languages.get(f)}:{pkg}", []).append(f)
            if f.endswith(".java"):
                java_classes.setdefault(f"{pkg}.{_stem(f)}", f)
        go_dirs = {d for d, fs in dir_files.items() if any(x.endswith(".go") for x in fs)}
        return {"dir_files": dir_files, "py_modules": py_modules, "rust_modules": rust_modules,
                "rust_file_mod": rust_file_mod, "java_classes": java_classes,
                "package_files": package_files, "go_dirs": go_dirs, "rust_roots": rust_roots}

    def dir_files(self, directory: str) -> list[str]:
        """Return the known files directly inside ``directory`` (sorted)."""
        return self._maps()["dir_files"].get(directory, [])  # type: ignore[attr-defined]

    def py_module(self, dotted: str) -> str | None:
        """Return the file of a dotted Python module name, if it is in the project."""
        return self._maps()["py_modules"].get(dotted)  # type: ignore[attr-defined]

    def rust_module(self, root: str, segs: tuple[str, ...]) -> str | None:
        """Return the file of Rust module ``segs`` in the crate rooted at ``root``."""
        return self._maps()["rust_modules"].get((root, segs))  # type: ignore[attr-defined]

    def rust_module_of(self, rel_path: str) -> tuple[str, tuple[str, ...]]:
        """Return (crate root dir, module path) of a Rust file."""
        got = self._maps()["rust_file_mod"].get(rel_path)  # type: ignore[attr-defined]
        return got if got is not None else (parent_dir(rel_path), ())

    def rust_crate_of_outsider(self, rel_path: str) -> str | None:
        """For files outside every crate's src (tests/, benches/, examples/), return the
        crate root they link against: the nearest ancestor's ``src`` with lib.rs/main.rs."""
        roots: set[str] = self._maps()["rust_roots"]  # type: ignore[assignment]
        d = parent_dir(rel_path)
        if any(d == r or d.startswith(r + "/") for r in roots):
            return None
        while True:
            cand = f"{d}/src" if d else "src"
            if cand in roots:
                return cand
            if not d:
                return None
            d = parent_dir(d)

    def java_class(self, fqcn: str) -> str | None:
        """Return the file declaring the top-level Java class ``fqcn``."""
        classes: dict[str, str] = self._maps()["java_classes"]  # type: ignore[assignment]
        found = classes.get(fqcn)
        if found is None:  # secondary top-level classes live in another file's stem
            pkg, _, name = fqcn.rpartition(".")
            for f in self.package_peers("java", pkg):
                if name in self.symbols.get(f, {}):
                    return f
        return found

    def package_peers(self, language: str | None, package: str) -> list[str]:
        """Return the files declaring ``package`` in ``language`` (Java)."""
        return self._maps()["package_files"].get(f"{language}:{package}", [])  # type: ignore[attr-defined]

    def go_package_dir(self, import_path: str) -> str | None:
        """Return the project directory whose path is the longest suffix of an import path."""
        dirs: set[str] = self._maps()["go_dirs"]  # type: ignore[assignment]
        parts = import_path.split("/")
        for i in range(len(parts)):
            candidate = "/".join(parts[i:])
            if candidate in dirs:
                return candidate
        return None

    def lookup(self, rel_path: str, qualname: str) -> _Symbol | None:
        """Return the symbol ``qualname`` defined in ``rel_path``."""
        return self.symbols.get(rel_path, {}).get(qualname)


def _rust_root(rel_path: str, roots: set[str]) -> str:
    d = parent_dir(rel_path)
    while True:
        if d in roots:
            return d
        if not d:
            break
        d = parent_dir(d)
    # No lib.rs/main.rs known: treat the nearest `src` directory as the crate root.
    parts = rel_path.split("/")[:-1]
    src_at = [i for i, part in enumerate(parts) if part == "src"]
    return "/".join(parts[: src_at[-1] + 1]) if src_at else ""
