"""Layer-1 code graph: tree-sitter extraction, resolution, AST chunking, modules.

Pure functions from (relative path, bytes) to nodes, edges and chunks; no database
and no Qt. The store and the live indexer consume these results.
"""

from .chunking import chunk_file
from .communities import detect_modules
from .extract import extract_file
from .languages import detect_language
from .model import CodeChunk, FileExtraction, GraphEdge, GraphNode
from .resolve import SymbolIndex, is_test_file, resolve_file, resolve_project

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
