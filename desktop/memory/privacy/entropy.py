"""Entropy check for long random-looking tokens the format rules do not know.

Precision first: a token is only reported when it mixes upper case, lower case and
digits, has high Shannon entropy, breaks into tiny camel-case "words" (random
base62/base64 does, identifiers and paths do not), and sits outside every context
known to hold hashes or payloads: npm/SRI ``sha512-`` integrity strings,
``sha256:`` digests, go.sum ``h1:`` lines, lock-file ``checksum``/``hash`` fields,
``data:...;base64,`` URIs, MIME encoded words, multi-line base64 blocks, URLs, and
base64 that decodes to readable text.  Hex-only and lower-case-only strings (git
SHAs, UUIDs, content hashes) are never reported here; inside a ``secret = ...``
assignment they are caught by the assignment rule instead.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Iterator

from desktop.memory.text.lazy_re import lazy

__all__ = ["high_entropy_spans", "looks_random", "shannon_entropy"]

_TOKEN = lazy(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{32,}={0,2}")
_CAMEL_PART = lazy(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# Hash contexts: npm/SRI integrity, docker/OCI digests, go.sum, lock-file checksums.
_HASH_PREFIX = lazy(r"^(?:sha(?:1|224|256|384|512)|md5|blake2b?)[-_]", re.IGNORECASE)
_HASH_CONTEXT = lazy(
    r"(?:(?:sha\d{1,3}|md5|blake2b?|h1|integrity|checksum|hash(?:es)?|digest|base64,|etag)"
    r"[\"']?\s*[:=,]?\s*[\"']?|\?[bq]\?)$",
    re.IGNORECASE,
)
# Base64 of PNG, JPEG, GIF, WebP, PDF, gzip and SSH *public* keys: payloads, not credentials.
_BINARY_MAGIC = (
    "iVBORw0KGgo",
    "/9j/",
    "R0lGOD",
    "UklGR",
    "JVBERi0",
    "H4sI",
    "AAAAB3NzaC1",
    "AAAAC3NzaC1",
    "AAAAE2VjZHNh",
)
_MAX_ENTROPY_TOKEN = 1024
_SEPARATORS = lazy(r"[/_\-+.]")
_B64_LINE = lazy(r"[ \t]*[A-Za-z0-9+/=]{40,}[ \t]*")


def _in_base64_block(text: str, line_start: int, start: int, end: int) -> bool:
    """A token filling its line next to another such line is a MIME/PEM/plist blob."""
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if text[line_start:start].strip() or text[end:line_end].strip():
        return False
    prev_end = line_start - 1
    if prev_end > 0:
        prev_start = text.rfind("\n", 0, prev_end) + 1
        if _B64_LINE.fullmatch(text, prev_start, prev_end):
            return True
    next_end = text.find("\n", line_end + 1)
    next_end = len(text) if next_end < 0 else next_end
    return line_end < len(text) and _B64_LINE.fullmatch(text, line_end + 1, next_end) is not None


def shannon_entropy(s: str) -> float:
    """Shannon entropy of ``s`` in bits per character (0.0 for an empty string)."""
    if not s:
        return 0.0
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def _is_encoded_prose(core: str) -> bool:
    """Base64 that decodes to readable sentences is encoded text (MIME, fixtures), not a key."""
    try:
        decoded = base64.b64decode(core + "=" * (-len(core) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    printable = sum(c.isprintable() or c in "\n\r\t" for c in decoded)
    return " " in decoded and printable >= 0.95 * len(decoded)


def looks_random(token: str) -> bool:
    """High entropy, mixed classes, and no word structure (rules out identifiers and paths)."""
    core = token.rstrip("=")
    if not (any(c.isupper() for c in core) and any(c.islower() for c in core) and any(c.isdigit() for c in core)):
        return False  # hex digests, UUIDs, lower-case ids, CONSTANT_NAMES
    if shannon_entropy(core) < 4.0:
        return False
    segments = _SEPARATORS.split(core)
    if len(segments) - 1 >= max(3, len(core) // 10):
        return False  # snake_case / kebab-case / path structure, not base64 noise
    longest = max(segments, key=len)
    if len(longest) < 12 or not (
        any(c.isupper() for c in longest) and any(c.islower() for c in longest) and any(c.isdigit() for c in longest)
    ):
        return False  # "TheBloke/recent-models-64f9a55b...": words around a hex id
    if _is_encoded_prose(core):
        return False
    parts = _CAMEL_PART.findall(core)
    # Random base62 breaks into ~2-char camel "words"; identifiers, paths and
    # kebab-case slugs break into real words of 4+ characters.
    return sum(len(p) for p in parts) / max(len(parts), 1) < 3.0


def high_entropy_spans(text: str) -> Iterator[tuple[int, int]]:
    """Yield ``(start, end)`` of every token in ``text`` that looks like a random secret."""
    for m in _TOKEN.finditer(text):
        token = m.group()
        if len(token) > _MAX_ENTROPY_TOKEN or _HASH_PREFIX.match(token):
            continue
        if token.startswith(_BINARY_MAGIC):
            continue
        line_start = text.rfind("\n", max(0, m.start() - 200), m.start()) + 1
        before = text[max(line_start, m.start() - 40) : m.start()]
        if _HASH_CONTEXT.search(before) or "data:" in text[max(line_start, m.start() - 80) : m.start()]:
            continue
        word_start = max(text.rfind(" ", line_start, m.start()), text.rfind("\t", line_start, m.start())) + 1
        if "://" in text[max(word_start, line_start) : m.start()]:
            continue  # inside a URL: paths and ids; credentials in URLs are found above
        if _in_base64_block(text, line_start, m.start(), m.end()):
            continue
        if looks_random(token):
            yield m.span()
