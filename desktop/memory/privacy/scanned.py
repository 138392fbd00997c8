"""Text the secret scanner has already passed, marked so the write boundary does not scan it twice.

The code indexer redacts every chunk in its parse workers (processes running this
same scanner). The writer's boundary (:mod:`boundary`) would then scan the redacted
text again: about a fifth of the writer's CPU on a cold index of the standard library.
A :class:`Scanned` string is the proof that the scan happened: the boundary stores it
as it is and scans every other value as before.

A ``Scanned`` value only comes into being in four ways:

* ``Scanned(text)`` runs the boundary's own redaction on ``text`` first;
* :func:`scanned_cut` (:func:`scanned_cuts` for many) redacts and cuts a text exactly as
  the boundary would store it;
* :meth:`QuietParts.json_list` writes a JSON list whose every item the gate found quiet
  (closure paths: node ids, which the boundary would otherwise split and look up row by row);
* unpickling one that a worker process made, whose tag (a keyed BLAKE2b MAC of the
  text) checks against this process's key. The key is random per process and given
  only to the parse workers Engram spawns (:func:`worker_key`, :func:`adopt_key`);
  a value from anywhere else, or a text changed on the way, comes back as a plain
  ``str`` and the boundary scans it.

Slicing, concatenating or formatting a ``Scanned`` value gives a plain ``str`` (the
proof covers this exact text only), so derived text is always scanned again.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence

from desktop.digests import blake2b, compare_digest
from desktop.memory.privacy.secrets import redact

log = logging.getLogger("engram.privacy")

__all__ = ["QuietParts", "Scanned", "adopt_key", "scanned_cut", "scanned_cuts", "worker_key"]

_TAG_BYTES = 16
_key = os.urandom(32)  # this process's; a parse worker adopts its parent's
_warned = False


def worker_key() -> bytes:
    """The key a parse worker must adopt for its ``Scanned`` values to be trusted here."""
    return _key


def adopt_key(key: bytes) -> None:
    """Vouch with the parent's key (called once, in a worker process's initializer)."""
    global _key
    _key = bytes(key)


def _tag(text: str) -> bytes:
    return blake2b(text.encode("utf-8", "surrogatepass"), key=_key, digest_size=_TAG_BYTES).digest()


def _store_form(text: str) -> str:
    """``text`` as the write boundary stores it (imported late: the boundary imports this module)."""
    from desktop.memory.privacy.boundary import redact_stored

    return redact_stored(text)


class Scanned(str):
    """A text exactly as the write boundary would store it (its secrets already redacted)."""

    __slots__ = ()

    def __new__(cls, text: str) -> Scanned:
        """Redact ``text`` as the boundary does; the result is marked as scanned."""
        return str.__new__(cls, _store_form(text))

    def __reduce__(self) -> tuple[object, tuple[str, bytes]]:
        """Pickle as the text and its tag, so only a process holding the key restores the mark."""
        text = str(self)
        return _restore, (text, _tag(text))


def _mint(text: str) -> Scanned:
    """Mark a text that has just been through the boundary's redaction (this module only)."""
    return str.__new__(Scanned, text)


def _restore(text: str, tag: bytes) -> str:
    """Unpickle: a ``Scanned`` when the tag checks out, else the plain text (the boundary will scan it)."""
    if isinstance(tag, bytes) and compare_digest(tag, _tag(text)):
        return _mint(text)
    global _warned
    if not _warned:
        _warned = True
        log.warning("a scanned text came from a process without this one's key; it will be scanned again")
    return str(text)


def scanned_cuts(texts: Sequence[str], limit: int) -> list[tuple[Scanned, bool]]:
    """:func:`scanned_cut` of each text; the quiet ones (no detector can match) found in one joined pass.

    An ASCII text in which no detector's trigger fires is stored as it is (cut if too
    long: a prefix of a quiet ASCII text is quiet too, every trigger being a substring
    condition). Non-ASCII text, whose gate is another one, takes the full path.
    """
    from desktop.memory.privacy.boundary import suspects

    loud = suspects(texts) | {i for i, t in enumerate(texts) if not t.isascii()}
    return [scanned_cut(t, limit) if i in loud else (_mint(t[:limit]), len(t) > limit) for i, t in enumerate(texts)]


def scanned_cut(text: str, limit: int) -> tuple[Scanned, bool]:
    """``text`` redacted, then cut to ``limit`` characters, as the boundary would store it; and whether it was cut.

    The same value as ``redact_stored(redact(text)[0][:limit])``, the order
    :func:`boundary.redact_then_cut` explains (cutting first could keep a secret's head).
    The second pass runs only when it can change something: redaction found a secret
    (a replacement may meet the JSON rule of ``redact_stored``) or the text was cut (a
    prefix can match a rule that needed a word boundary). Otherwise the text is one in
    which a full scan found nothing, and the boundary's pass would find nothing either.
    """
    red, found = redact(text)
    cut = len(red) > limit
    if cut:
        red = red[:limit]
    if found or cut:
        red = _store_form(red)
    return _mint(red), cut


class QuietParts:
    """Texts in which no detector's trigger fires and which JSON writes verbatim; a JSON list of them is quiet.

    Built by gating the texts (in joined passes), so holding one proves the check ran.
    The boundary's ``_quiet_list`` states why such a list is quiet too: no trigger can
    fire across an item's quotes, so every match would lie inside one item. The cold
    index writes ~90k closure paths made only of node ids; checked here once per id
    instead of once per path in the writer.
    """

    __slots__ = ("_parts",)

    def __init__(self, texts: Iterable[str]) -> None:
        """Keep the ``texts`` that are ASCII, printable, free of quotes and backslashes, and quiet."""
        from desktop.memory.privacy.boundary import suspects

        plain = [t for t in set(texts) if t and t.isascii() and t.isprintable() and '"' not in t and "\\" not in t]
        loud = suspects(plain)
        self._parts = frozenset(t for i, t in enumerate(plain) if i not in loud)

    def __contains__(self, text: object) -> bool:
        """Whether ``text`` is one of the quiet parts."""
        return text in self._parts

    def json_list(self, items: Sequence[str]) -> Scanned | None:
        """``["a","b"]`` of ``items`` (json.dumps without blanks), or None when an item is not a quiet part."""
        if not self._parts.issuperset(items):
            return None
        return _mint('["' + '","'.join(items) + '"]' if items else "[]")
