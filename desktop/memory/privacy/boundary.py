"""The one redaction boundary: every text value bound into a write passes the secret scanner.

The writer thread's transaction object (``store.writer.Tx``) hands ops a
:class:`GuardedConnection` instead of the raw connection, so every ``execute`` and
``executemany`` of every op (memories, audit log, observer tables, metrics,
scratchpad checkpoints, graph tables, project meta, anything added later) has its
``str`` parameters redacted before SQLite sees them (a :class:`~desktop.memory.privacy.scanned.Scanned`
text is one the scanner already passed, and is stored as it is). Nothing an op forgets to
guard reaches a page, the WAL or a backup.

Values holding JSON stay valid JSON: when redacting the text would break it (a
secret span crossing an escape), the decoded structure is redacted string by
string and dumped again. User-taught text that contains a secret is refused
earlier, in memory_ops, with the span shown; this layer is the backstop.
"""

from __future__ import annotations

import json
import logging
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import Any

from desktop.memory.privacy.scanned import Scanned
from desktop.memory.privacy.secrets import might_contain_secret, redact
from desktop.memory.privacy.triggers import gate_spans

log = logging.getLogger("engram.privacy")

__all__ = ["GuardedConnection", "redact_json_value", "redact_param", "redact_stored", "redact_then_cut",
           "redact_values", "redacted_key", "suspects"]


def redact_json_value(value: Any) -> Any:
    """Every string inside a JSON-like value redacted (keys too: a secret can be a dict key)."""
    if isinstance(value, str):
        return redact(value)[0]
    if isinstance(value, list):
        return [redact_json_value(v) for v in value]
    if isinstance(value, dict):
        return {redact_json_value(k) if isinstance(k, str) else k: redact_json_value(v) for k, v in value.items()}
    return value


def redact_stored(text: str) -> str:
    """``text`` as it may be stored: secrets replaced by ``[REDACTED:<kind>]``, JSON kept valid."""
    if not might_contain_secret(text):
        return text
    out, found = redact(text)
    if not found:
        return text
    log.info("redacted %d secret(s) at the write boundary", len(found))
    head = text.lstrip()[:1]
    if head in ("{", "[", '"'):
        try:
            decoded = json.loads(text)
        except ValueError:
            return out
        try:
            json.loads(out)
        except ValueError:
            return json.dumps(redact_json_value(decoded), ensure_ascii=False)
    return out


def redact_param(value: Any) -> Any:
    """A bound parameter as it may be stored (only ``str`` values can hold a secret here)."""
    return redact_stored(value) if isinstance(value, str) and value else value


# Values that store as they are (redact_stored is a pure function of its text), kept only
# while short and only up to a bound: a cache of what needs no work, never of secrets.
_CLEAN_MAX_CHARS = 160  # node ids, paths, labels, small JSON: what repeats
_CLEAN_MAX_ENTRIES = 100_000  # ~10 MB at most
_clean: set[str] = set()
# The subset in which no trigger fires at all (not merely no finding): their JSON lists
# are quiet too (see _quiet_list).
_quiet: set[str] = set()


def _quiet_list(text: str) -> bool:
    """True for ``["a","b",...]`` (no backslash) whose every item is known quiet: no trigger fires in it.

    Closure paths are JSON lists of node ids already bound (and gated) as nodes, and are
    most of the text of a big index. No trigger can fire across an item's quotes: no
    trigger literal holds ``[ ] " ,``; the keyword patterns may only take a quote when a
    blank, ``:`` or ``=`` follows it (here ``,`` or ``]`` does); the URL pattern excludes
    ``"``; token runs stop at it. So every trigger match would lie inside one item.
    """
    if not (text.startswith('["') and text.endswith('"]')) or "\\" in text or len(text) < 5:
        return False
    return all(item in _quiet for item in text[2:-2].split('","'))


def _remember(into: set[str], texts: Iterable[str]) -> None:
    if len(into) >= _CLEAN_MAX_ENTRIES:
        into.clear()
    into.update(t for t in texts if len(t) <= _CLEAN_MAX_CHARS)


#: A joined pass covers at most this many characters: a regex scan holds the GIL for its whole
#: length, and one over megabytes (a 10,000-memory import) froze the GUI thread for ~50 ms.
_JOIN_MAX_CHARS = 65_536


def _triggered(texts: list[str]) -> set[int]:
    """Indices of the ASCII ``texts`` in which some detector's trigger fires, tested in joined strings.

    The triggers are monotone substring conditions and NUL is in none of them, so a
    trigger that fires in one text fires at the same place in the joined text.
    """
    hit: set[int] = set()
    begin, size = 0, 0
    for i, t in enumerate(texts):
        if size and size + len(t) > _JOIN_MAX_CHARS:
            hit.update(begin + j for j in _triggered_joined(texts[begin:i]))
            begin, size = i, 0
        size += len(t) + 1
    if begin < len(texts):
        hit.update(begin + j for j in _triggered_joined(texts[begin:]))
    return hit


def _triggered_joined(texts: list[str]) -> set[int]:
    joined = "\0".join(texts)
    starts: list[int] = []
    at = 0
    for t in texts:
        starts.append(at)
        at += len(t) + 1
    hit: set[int] = set()
    for a, b in gate_spans(joined, joined.lower()):
        first = bisect_right(starts, a) - 1
        last = bisect_right(starts, max(a, b - 1)) - 1
        hit.update(range(first, last + 1))
    return hit


def suspects(texts: Sequence[str]) -> set[int]:
    """Indices of the ``texts`` in which some detector may match; in every other one a scan finds nothing.

    The ASCII ones are gated together in joined passes (see :func:`_triggered`), far
    cheaper than one gate per text when most are quiet, as code chunks are.
    """
    plain = [i for i, t in enumerate(texts) if t.isascii()]
    hit = {plain[j] for j in _triggered([texts[i] for i in plain])} if plain else set()
    return hit | {i for i, t in enumerate(texts) if not t.isascii() and might_contain_secret(t)}


def redact_values(values: Sequence[Any]) -> list[Any]:
    """``values`` as they may be stored: every non-empty ``str`` passed through :func:`redact_stored`.

    Equivalent to ``[redact_param(v) for v in values]``, at a fraction of the cost: texts
    already known clean are skipped, the other ASCII ones are gated in one joined pass.
    """
    fresh = {v for v in values if isinstance(v, str) and v}.difference(_clean)
    # A Scanned text is stored as the scanner left it (its proof: privacy.scanned).
    fresh = {v for v in fresh if type(v) is not Scanned}
    if not fresh:
        return list(values)
    plain = [v for v in fresh if v.isascii() and not _quiet_list(v)]
    hit = _triggered(plain) if plain else set()
    _remember(_quiet, (v for i, v in enumerate(plain) if i not in hit))
    # Non-ASCII text (lower-casing may move offsets) goes the plain way, value by value.
    suspects = [plain[i] for i in sorted(hit)] + [v for v in fresh if not v.isascii()]
    changed: dict[str, str] = {}
    for v in suspects:
        stored = redact_stored(v)
        if stored != v:
            changed[v] = stored
    _remember(_clean, (v for v in fresh if v not in changed))
    if not changed:
        return list(values)
    return [changed.get(v, v) if isinstance(v, str) else v for v in values]


def _params(params: Any) -> Any:
    if isinstance(params, dict):
        return dict(zip(params, redact_values(list(params.values())), strict=True))
    if params is None or isinstance(params, (str, bytes)):
        return params
    try:  # any other sequence or iterable of bindings (list, tuple, generator, ...)
        return redact_values(list(params))
    except TypeError:
        return params


def _rows(rows: Iterable[Any]) -> list[Any]:
    """Every row of an ``executemany``, redacted; the values of all rows are tested together."""
    rows = list(rows)
    if not all(isinstance(r, (tuple, list)) for r in rows):
        return [_params(r) for r in rows]
    everything = [v for r in rows for v in r]
    flat = redact_values(everything)
    if flat == everything:  # the usual case: nothing to redact, the rows go as they came
        return rows
    out: list[Any] = []
    at = 0
    for r in rows:
        out.append(flat[at:at + len(r)])
        at += len(r)
    return out


class GuardedConnection:
    """An ``apsw.Connection`` whose ``execute``/``executemany`` redact bound text first."""

    def __init__(self, conn: Any) -> None:
        self.raw = conn

    def execute(self, sql: str, params: Any = ()) -> Any:
        """Run one statement with redacted parameters."""
        return self.raw.execute(sql, _params(params) if params else params)

    def executemany(self, sql: str, rows: Iterable[Any]) -> Any:
        """Run one statement per row, each row's parameters redacted."""
        return self.raw.executemany(sql, _rows(rows))

    def __getattr__(self, name: str) -> Any:
        # last_insert_rowid, changes, getautocommit, ...: no text goes through these.
        return getattr(self.raw, name)


def redacted_key(text: str, limit: int) -> str:
    """A lookup key built from free text: redacted first, then lower-cased and cut to ``limit``.

    Lower-casing first would hide a key from the case-sensitive formats (``AKIA``, ``ghp_``),
    cutting first would keep the head of a secret whose tail the scanner needs.
    """
    return redact_then_cut(text, len(text) + 32).lower()[:limit]


def quotable_path(path: str, limit: int = 160) -> str:
    """A path an agent gave, fit to quote in a code span of one line: no backtick or line break of
    its own (a name cannot open a new instruction), redacted, cut."""
    return redact_then_cut(" ".join(path.split()).replace("`", "'"), limit, "…")


def redact_then_cut(text: str, limit: int, tail: str = "") -> str:
    """``text`` redacted, then cut to ``limit`` characters (with ``tail`` when cut).

    Cutting first would keep a secret's first characters in clear ("PASSWORD=abcdefg…"
    no longer matches any rule once cut): the order is the whole point.
    """
    if might_contain_secret(text):
        text = redact(text)[0]
    if len(text) <= limit:
        return text
    return text[:max(0, limit - len(tail))] + tail
