"""Entry point of layer-1 extraction: ``extract_file(rel_path, bytes)``.

Pure function of its inputs (no I/O, no database), safe to call from any thread:
parsers are per-thread (see :mod:`languages`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import tree_sitter

from . import extract_go, extract_java, extract_js, extract_python, extract_rust
from .extract_base import Builder
from .languages import detect_language, parse
from .model import EXTRACTED, FileExtraction, GraphEdge, GraphNode, file_id, module_id, parent_dir

log = logging.getLogger("engram.graph")

_EXTRACTORS: dict[str, Callable[[Builder, tree_sitter.Node], None]] = {
    "python": extract_python.extract,
    "javascript": extract_js.extract,
    "typescript": extract_js.extract,
    "tsx": extract_js.extract,
    "go": extract_go.extract,
    "rust": extract_rust.extract,
    "java": extract_java.extract,
}


def count_lines(source: bytes) -> int:
    """Return the number of lines, counting a final line without a newline."""
    if not source:
        return 0
    return source.count(b"\n") + (0 if source.endswith(b"\n") else 1)


def extract_file(rel_path: str, source: bytes) -> FileExtraction:
    """Extract the file node, symbol nodes, local edges and raw references of one file.

    Unknown languages yield just the file node. Syntax errors never raise: tree-sitter
    returns a tree with ERROR nodes, which is walked like any other, and
    ``had_errors`` is set so callers can flag the file.
    """
    language = detect_language(rel_path)
    lines = count_lines(source)
    tree = parse(language, source) if language is not None else None
    if language is None or tree is None:
        fid = file_id(rel_path)
        node = GraphNode(fid, "file", rel_path, rel_path, language, 1, max(lines, 1), {})
        edge = GraphEdge(fid, module_id(parent_dir(rel_path)), "defined_in", EXTRACTED)
        return FileExtraction(rel_path, language, (node,), (edge,), line_count=lines)
    builder = Builder(rel_path, language, source)
    root = tree.root_node
    _EXTRACTORS[language](builder, root)
    if root.has_error:
        log.debug("syntax errors in %s; using the partial tree", rel_path)
    return builder.finish(root.has_error, lines)
