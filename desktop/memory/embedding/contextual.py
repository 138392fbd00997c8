"""Contextual embedding text and the embedding-cache key.

A memory such as "always call flush() before close()" says little on its own;
embedded together with *where* it applies (files, module) and *what* it is
(a decision, a gotcha...) it lands near the queries that need it. This is the
contextual-retrieval idea adapted to code: a few short prefix lines, then the
content.

The prefix is deliberately bounded: the bundled model reads at most 256
tokens, and a long list of paths would both crowd out the content and make
every memory of one module look alike.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Final

__all__ = ["MAX_PREFIX_CHARS", "cache_key", "contextual_text"]

# ~60 tokens at most, a quarter of MiniLM's window even for short contents.
MAX_PREFIX_CHARS: Final = 240
MAX_FILES: Final = 3
_MAX_PATH_CHARS: Final = 80
_MAX_FIELD_CHARS: Final = 80
_ELLIPSIS: Final = "\u2026"


def _one_line(value: str) -> str:
    """Collapse all whitespace, so a field can never break the prefix's line structure."""
    return " ".join(value.split())


def _clip_tail(path: str, limit: int) -> str:
    """Shorten a path from the left: the file name and nearest folders carry the meaning."""
    if len(path) <= limit:
        return path
    return _ELLIPSIS + path[-(limit - 1) :]


def _clip_head(value: str, limit: int) -> str:
    """Shorten free text from the right."""
    if len(value) <= limit:
        return value
    return value[: limit - 1].rstrip() + _ELLIPSIS


def _normalise_path(path: str) -> str:
    """Use one path spelling on every OS so identical memories embed identically."""
    cleaned = _one_line(path).replace("\\", "/")
    while cleaned.startswith("./"):
        cleaned = cleaned[2:]
    return cleaned


def _files_line(files: Sequence[str]) -> str | None:
    """Return ``File: a`` / ``Files: a, b, c (+N more)`` or None when there are no files."""
    unique: list[str] = []
    for raw in files:
        path = _normalise_path(raw)
        if path and path not in unique:
            unique.append(path)
    if not unique:
        return None
    shown = [_clip_tail(p, _MAX_PATH_CHARS) for p in unique[:MAX_FILES]]
    extra = len(unique) - len(shown)
    label = "File" if len(unique) == 1 else "Files"
    suffix = f" (+{extra} more)" if extra else ""
    return f"{label}: {', '.join(shown)}{suffix}"


def _type_name(memory_type: object) -> str:
    """Accept a plain string or a str-valued enum (``MemoryType.GOTCHA``)."""
    value = getattr(memory_type, "value", memory_type)
    return _one_line(str(value)).replace("_", " ")


def contextual_text(
    content: str,
    *,
    memory_type: str | None,
    files: Sequence[str] = (),
    module: str | None = None,
    chunk_prefix: str | None = None,
) -> str:
    """Return the text to embed for one memory or code chunk.

    Layout (each line only when its value is known)::

        File: src/auth/reset.py            (or "Files: a, b, c (+2 more)")
        Module: auth
        Type: gotcha
        function reset_password, lines 10-42   (chunk_prefix, for code chunks)

        <content>

    Without any context the content is returned unchanged (apart from
    surrounding whitespace), so plain texts and their cache keys stay stable.
    """
    if isinstance(files, str):
        # A lone path passed by mistake would otherwise be split into characters.
        files = (files,)
    lines: list[str] = []
    files_line = _files_line(files)
    if files_line:
        lines.append(files_line)
    if module and _one_line(module):
        lines.append(f"Module: {_clip_head(_one_line(module), _MAX_FIELD_CHARS)}")
    if memory_type and _type_name(memory_type):
        lines.append(f"Type: {_clip_head(_type_name(memory_type), _MAX_FIELD_CHARS)}")
    if chunk_prefix and _one_line(chunk_prefix):
        lines.append(_clip_head(_one_line(chunk_prefix), _MAX_FIELD_CHARS))
    body = content.strip()
    if not lines:
        return body
    prefix = "\n".join(lines)
    if len(prefix) > MAX_PREFIX_CHARS:
        # Drop whole trailing characters rather than letting context outweigh content.
        prefix = _clip_head(prefix, MAX_PREFIX_CHARS)
    return f"{prefix}\n\n{body}" if body else prefix


def cache_key(text: str, model_id: str, dims: int) -> str:
    """Return the sha256 hex key of an embedding of ``text`` by ``model_id`` at ``dims``.

    The fields are joined with a NUL byte and the model id and width come first:
    a plain ``text:model:dims`` join is ambiguous when the text contains a
    colon, and two different inputs must never share a cached vector.
    """
    if dims < 0:
        raise ValueError("dims must be >= 0")
    digest = hashlib.sha256()
    digest.update(model_id.encode("utf-8"))
    digest.update(b"\x00")
    digest.update(str(int(dims)).encode("ascii"))
    digest.update(b"\x00")
    # surrogatepass: text from odd file encodings must still hash, not crash.
    digest.update(text.encode("utf-8", errors="surrogatepass"))
    return digest.hexdigest()
