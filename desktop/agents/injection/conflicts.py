"""Flag memories that contradict each other before both reach the agent.

Uses the lifecycle conflict detector (``desktop.memory.lifecycle.conflicts``)
when that module exists; until then, the design's keyword-opposition rule
(use / don't use, always / never, enable / disable, add / remove, should /
shouldn't) on memories that share a file or a type, plus explicit
``conflicts_with`` relations.
"""

from __future__ import annotations

import importlib
import logging
import re

from desktop.memory.types import Memory

log = logging.getLogger("engram.agents")

_OPPOSITES = (("use", "don't use"), ("use", "do not use"), ("use", "avoid"), ("always", "never"),
              ("enable", "disable"), ("add", "remove"), ("should", "shouldn't"), ("should", "should not"),
              ("must", "must not"), ("prefer", "avoid"))
_WORD = re.compile(r"[a-z0-9_]{4,}")


def _lifecycle_pairs(memories: list[Memory]) -> list[tuple[Memory, Memory]] | None:
    """Pairs found by ``desktop.memory.lifecycle.conflicts`` (None when that module is absent)."""
    try:
        mod = importlib.import_module("desktop.memory.lifecycle.conflicts")
    except ImportError:
        return None
    detect = getattr(mod, "detect_conflicts", None)
    text_cls = getattr(mod, "ConflictText", None)
    if detect is None or text_cls is None:
        return None
    by_id = {m.id: m for m in memories}
    texts = [text_cls(id=m.id, content=m.content, files=m.related_files, modules=m.related_modules,
                      tags=m.tags, type=m.type) for m in memories]
    seen: set[tuple[int, int]] = set()
    out: list[tuple[Memory, Memory]] = []
    for i, t in enumerate(texts):
        for c in detect(t, texts[i + 1:]):
            key = (min(c.a, c.b), max(c.a, c.b))
            if key not in seen and c.a in by_id and c.b in by_id:
                seen.add(key)
                out.append((by_id[key[0]], by_id[key[1]]))
    return out


def _polarity(text: str, pos: str, neg: str) -> int:
    """+1 if ``text`` says ``pos`` (without ``neg``), -1 if it says ``neg``, else 0."""
    low = f" {text.lower()} "
    if f" {neg} " in low:
        return -1
    if f" {pos} " in low:
        return 1
    return 0


def _related(a: Memory, b: Memory) -> bool:
    if set(a.related_files) & set(b.related_files):
        return True
    shared = set(_WORD.findall(a.content.lower())) & set(_WORD.findall(b.content.lower()))
    return a.type == b.type and len(shared) >= 2


def opposed(a: Memory, b: Memory) -> bool:
    """True when the two texts take opposite sides of one opposition pair and are about the same thing."""
    for rel in a.relations + b.relations:
        if rel.get("type") in ("conflicts_with", "contradicts") and rel.get("id") in (a.id, b.id):
            return True
    if not _related(a, b):
        return False
    for pos, neg in _OPPOSITES:
        pa, pb = _polarity(a.content, pos, neg), _polarity(b.content, pos, neg)
        if pa and pb and pa != pb:
            return True
    return False


def find_conflicts(memories: list[Memory]) -> list[tuple[Memory, Memory]]:
    """Contradicting pairs among ``memories`` (quadratic, but called on at most a few dozen)."""
    try:
        pairs = _lifecycle_pairs(memories)
        if pairs is not None:
            return pairs
    except Exception:  # a lifecycle bug must not block session start
        log.exception("lifecycle conflict detector failed; using keyword opposition")
    out: list[tuple[Memory, Memory]] = []
    for i, a in enumerate(memories):
        for b in memories[i + 1:]:
            if opposed(a, b):
                out.append((a, b))
    return out
