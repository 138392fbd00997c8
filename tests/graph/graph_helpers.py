"""Shared helpers for the code-graph tests: load a fixture repository and run layer 1."""

from __future__ import annotations

from pathlib import Path

from desktop.memory.graph import FileExtraction, extract_file, resolve_project

FIXTURES = Path(__file__).parent / "fixtures"


def load(lang: str) -> dict[str, bytes]:
    """Return {relative posix path: bytes} for every file of one fixture repository."""
    root = FIXTURES / lang
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def extract_all(files: dict[str, bytes]) -> dict[str, FileExtraction]:
    """Extract every file of a fixture."""
    return {path: extract_file(path, data) for path, data in files.items()}


def edge_set(lang: str, types: set[str] | None = None) -> set[tuple[str, str, str]]:
    """Resolve a fixture and return its cross-file edges as (type, from, to)."""
    files = load(lang)
    edges = resolve_project(extract_all(files), set(files))
    return {(e.type, e.from_id, e.to_id) for e in edges if types is None or e.type in types}
