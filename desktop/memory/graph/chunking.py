"""AST-aware chunking: split source at function and class boundaries.

Invariants: a function or method is never split (even when longer than
``max_lines``), and every function node's range lies inside exactly one chunk.
Classes that fit stay whole; larger ones become a header/body chunk plus one chunk
per member. Code between definitions is grouped into ``module`` chunks; files with
no parsed language are cut into overlapping ``prose`` line windows.
"""

from __future__ import annotations

import logging

from .extract import extract_file
from .languages import detect_language
from .model import CLASS_LIKE, SYMBOL_TYPES, CodeChunk, FileExtraction, GraphNode

log = logging.getLogger("engram.graph")

PROSE_WINDOW = 60
PROSE_OVERLAP = 10
_COMMENT_STARTS = ("#", "//", "/*", "*", "--", "@")
_TRIVIAL = frozenset({"", "{", "}", "};", ")", ");", "})", "});", "]", "end"})
_KIND_LABEL = {"class": "Class", "interface": "Interface", "enum": "Enum"}


def _split_lines(source: bytes) -> list[str]:
    # Only "\n" ends a line, matching tree-sitter rows (str.splitlines would also
    # split on form feeds and other separators and shift every line number).
    text = source.decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


class _Chunker:
    def __init__(self, rel_path: str, language: str | None, lines: list[str], max_lines: int) -> None:
        self.rel_path = rel_path
        self.language = language
        self.lines = lines
        self.max_lines = max(1, max_lines)
        self.out: list[CodeChunk] = []

    def emit(self, kind: str, start: int, end: int, symbol: str | None, prefix: str) -> None:
        text = "\n".join(self.lines[start - 1 : end])
        self.out.append(CodeChunk(self.rel_path, self.language, kind, symbol,  # type: ignore[arg-type]
                                  start, end, text, prefix))

    def file_prefix(self) -> str:
        return f"File: {self.rel_path}"

    def gap(self, start: int, end: int, kind: str, symbol: str | None, prefix: str) -> None:
        """Emit the non-trivial lines start..end as windows of at most max_lines."""
        while start <= end and self.lines[start - 1].strip() in _TRIVIAL:
            start += 1
        while end >= start and self.lines[end - 1].strip() in _TRIVIAL:
            end -= 1
        while start <= end:
            stop = min(end, start + self.max_lines - 1)
            self.emit(kind, start, stop, symbol, prefix)
            start = stop + 1

    def lead(self, floor: int, start: int) -> int:
        """Pull comments/annotations directly above a definition into its chunk."""
        while start - 1 >= floor and self.lines[start - 2].lstrip().startswith(_COMMENT_STARTS):
            start -= 1
        return start

    def units(self, scope: list[_Unit], start: int, end: int, kind: str, symbol: str | None,
              prefix: str) -> None:
        cursor = start
        for unit in scope:
            node = unit.node
            if node.type == "type_alias":
                continue  # small declarations read best together with the code around them
            first = self.lead(cursor, node.start_line or 1)
            self.gap(cursor, first - 1, kind, symbol, prefix)
            self.unit(unit, first)
            cursor = (node.end_line or first) + 1
        self.gap(cursor, end, kind, symbol, prefix)

    def unit(self, unit: _Unit, first: int) -> None:
        node = unit.node
        end = node.end_line or 1
        qual = node.label
        if node.type in CLASS_LIKE:
            prefix = f"{self.file_prefix()} | {_KIND_LABEL[node.type]}: {qual}"
            if end - first + 1 <= self.max_lines or not unit.children:
                self.emit("class", first, end, qual, prefix)
            else:
                self.units(unit.children, first, end, "class", qual, prefix)
            return
        owner = str(node.metadata.get("parent") or "")
        if node.type == "method" and owner:
            name = qual[len(owner) + 1 :] if qual.startswith(owner + ".") else qual
            prefix = f"{self.file_prefix()} | Class: {owner} | Method: {name}"
        else:
            prefix = f"{self.file_prefix()} | Function: {qual}"
        self.emit("function", first, end, qual, prefix)


class _Unit:
    __slots__ = ("children", "node")

    def __init__(self, node: GraphNode) -> None:
        self.node = node
        self.children: list[_Unit] = []


def _nest(symbols: list[GraphNode]) -> list[_Unit]:
    """Nest symbols by line range (Go/Rust methods sit outside their type's range)."""
    symbols = sorted(symbols, key=lambda n: (n.start_line or 0, -(n.end_line or 0)))
    roots: list[_Unit] = []
    stack: list[_Unit] = []
    for node in symbols:
        unit = _Unit(node)
        while stack and (stack[-1].node.end_line or 0) < (node.start_line or 0):
            stack.pop()
        if stack and (node.end_line or 0) <= (stack[-1].node.end_line or 0):
            parent = stack[-1]
            if parent.node.type in CLASS_LIKE:
                parent.children.append(unit)
            # Anything nested in a function or alias stays inside its parent's chunk.
        else:
            stack.clear()
            roots.append(unit)
        stack.append(unit)
    return roots


def prose_chunks(rel_path: str, lines: list[str], language: str | None = None,
                 window: int = PROSE_WINDOW, overlap: int = PROSE_OVERLAP) -> list[CodeChunk]:
    """Cut lines into overlapping windows; all-blank windows are skipped."""
    out: list[CodeChunk] = []
    step = max(1, window - overlap)
    start = 0
    while start < len(lines):
        stop = min(len(lines), start + window)
        if any(line.strip() for line in lines[start:stop]):
            out.append(CodeChunk(rel_path, language, "prose", None, start + 1, stop,
                                 "\n".join(lines[start:stop]), f"File: {rel_path}"))
        if stop == len(lines):
            break
        start += step
    return out


def chunk_file(rel_path: str, source: bytes, extraction: FileExtraction | None,
               max_lines: int = 120) -> list[CodeChunk]:
    """Split one file into retrieval chunks (see the module docstring for the rules).

    ``extraction`` is reused when given (the indexer already has it); otherwise the
    file is extracted here. Unknown languages and prose files become line windows.
    """
    lines = _split_lines(source)
    if not lines:
        return []
    language = detect_language(rel_path)
    if language is None:
        return prose_chunks(rel_path, lines)
    if extraction is None:
        extraction = extract_file(rel_path, source)
    symbols = [n for n in extraction.nodes if n.type in SYMBOL_TYPES and n.start_line]
    chunker = _Chunker(rel_path, extraction.language or language, lines, max_lines)
    chunker.units(_nest(symbols), 1, len(lines), "module", None, chunker.file_prefix())
    chunker.out.sort(key=lambda c: (c.start_line, c.end_line))
    return chunker.out
