"""The one redaction boundary: every text value bound into a write passes the secret scanner.

The writer thread's transaction object (``store.writer.Tx``) hands ops a
:class:`GuardedConnection` instead of the raw connection, so every ``execute`` and
``executemany`` of every op (memories, audit log, observer tables, metrics,
scratchpad checkpoints, graph tables, project meta, anything added later) has its
``str`` parameters redacted before SQLite sees them. Nothing an op forgets to
guard reaches a page, the WAL or a backup.

Values holding JSON stay valid JSON: when redacting the text would break it (a
secret span crossing an escape), the decoded structure is redacted string by
string and dumped again. User-taught text that contains a secret is refused
earlier, in memory_ops, with the span shown; this layer is the backstop.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

from desktop.memory.privacy.secrets import might_contain_secret, redact

log = logging.getLogger("engram.privacy")

__all__ = ["GuardedConnection", "redact_json_value", "redact_param", "redact_stored", "redact_then_cut"]


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


def _params(params: Any) -> Any:
    if isinstance(params, dict):
        return {k: redact_param(v) for k, v in params.items()}
    if params is None or isinstance(params, (str, bytes)):
        return params
    try:  # any other sequence or iterable of bindings (list, tuple, generator, ...)
        return [redact_param(v) for v in params]
    except TypeError:
        return params


class GuardedConnection:
    """An ``apsw.Connection`` whose ``execute``/``executemany`` redact bound text first."""

    def __init__(self, conn: Any) -> None:
        self.raw = conn

    def execute(self, sql: str, params: Any = ()) -> Any:
        """Run one statement with redacted parameters."""
        return self.raw.execute(sql, _params(params) if params else params)

    def executemany(self, sql: str, rows: Iterable[Any]) -> Any:
        """Run one statement per row, each row's parameters redacted."""
        return self.raw.executemany(sql, (_params(r) for r in rows))

    def __getattr__(self, name: str) -> Any:
        # last_insert_rowid, changes, getautocommit, ...: no text goes through these.
        return getattr(self.raw, name)


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
