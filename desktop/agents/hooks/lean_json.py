"""JSON for the hook's own process, without the import cost of ``json``.

An agent starts a process for every hook, and a hook the warm service answers lives ~50 ms.
``import json`` alone costs it ~20 ms: its decoder and encoder import ``re``, and ``re`` imports
``enum``, whose classes are built at import time (``python -I -S -c "import json"``: 39 ms at
p50, against 17 ms for ``pass``, on this machine). CPython's C accelerators (``_json``) read and
write the same JSON with nothing else loaded; this module drives them the way ``json`` does, and
uses ``json`` itself where they are missing (another interpreter). Only the hook's path uses it:
the payload it reads, the request it sends the service, the answer it prints.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: see client.py
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: JSON's whitespace (``json.decoder.WHITESPACE`` without its regular expression).
_WHITESPACE = " \t\n\r"
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


def _not_serializable(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


class _Decoder:
    """The attributes ``_json.make_scanner`` reads from ``json.JSONDecoder`` (its defaults)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_CONSTANTS.__getitem__)


_scan: Callable[[str, int], tuple[Any, int]] | None
_encoder: Callable[[bool], Callable[[Any, int], Any]] | None
try:
    from _json import encode_basestring, encode_basestring_ascii, make_encoder, make_scanner

    _scan = make_scanner(_Decoder())  # type: ignore[arg-type]  # it reads a decoder's attributes

    def _encoder(ascii_only: bool) -> Callable[[Any, int], Any]:
        # make_encoder(markers, default, encoder, indent, key_separator, item_separator, sort_keys,
        # skipkeys, allow_nan), with json.dumps's defaults; fresh markers for each value, as json's
        return make_encoder({}, _not_serializable, encode_basestring_ascii if ascii_only else encode_basestring,
                            None, ": ", ", ", False, False, True)
except ImportError:  # not CPython: the standard module
    _scan, _encoder = None, None


def loads(data: bytes | str) -> Any:
    """``json.loads`` of UTF-8 ``data``; raises ValueError on anything that is not one JSON value."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    if _scan is None:
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as exc:
        raise ValueError(f"Expecting value: char {exc.value}") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"Extra data: char {end}")
    return value


def dumps(value: Any, *, ensure_ascii: bool = True) -> str:
    """``json.dumps(value, ensure_ascii=...)``, the same text."""
    if _encoder is None:
        import json

        return json.dumps(value, ensure_ascii=ensure_ascii)
    return "".join(_encoder(ensure_ascii)(value, 0))
