"""Layer-1 code graph: tree-sitter extraction, resolution, AST chunking, modules.

Pure functions from (relative path, bytes) to nodes, edges and chunks; no database
and no Qt. The store and the live indexer consume these results.

Names are loaded on first use (PEP 562): the parse pool's worker processes import
``graph.parse_pool`` and must not pay for networkx (community detection, ~0.3 s of
every worker's start-up) or the resolver, which only the indexer thread uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.memory.lazy import lazy_getattr

if TYPE_CHECKING:
    from desktop.memory.graph.chunking import chunk_file
    from desktop.memory.graph.communities import detect_modules
    from desktop.memory.graph.extract import extract_file
    from desktop.memory.graph.languages import detect_language
    from desktop.memory.graph.model import CodeChunk, FileExtraction, GraphEdge, GraphNode
    from desktop.memory.graph.resolve import SymbolIndex, is_test_file, resolve_file, resolve_project

_WHERE = {
    "chunk_file": "chunking", "detect_modules": "communities", "extract_file": "extract",
    "detect_language": "languages", "CodeChunk": "model", "FileExtraction": "model", "GraphEdge": "model",
    "GraphNode": "model", "SymbolIndex": "resolve", "is_test_file": "resolve", "resolve_file": "resolve",
    "resolve_project": "resolve",
}

__all__ = [
    "CodeChunk",
    "FileExtraction",
    "GraphEdge",
    "GraphNode",
    "SymbolIndex",
    "chunk_file",
    "detect_language",
    "detect_modules",
    "extract_file",
    "is_test_file",
    "resolve_file",
    "resolve_project",
]

__getattr__ = lazy_getattr(__name__, _WHERE)
