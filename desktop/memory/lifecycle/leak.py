"""Scrub what sessions left behind: side tables on delete-all, a leaked string everywhere it is quoted.

Memories are not the only place text lives: the observer's tables (error
patterns, search patterns, terms, sequences, signal counts, seen events,
session files), session metrics, scratchpad checkpoints, the embedding cache
and the audit log quote commands, errors and prompts. "Delete all" clears every
one of them; an emergency delete of a leaked string deletes every memory that
quotes it, every side-table row that holds it and the text of every audit entry
that mentions it. The tables are found by walking the schema, so a table added
later is covered without touching this module.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, ClassVar

import apsw

from desktop.memory.lifecycle.emergency import fill_temp, purge_temp
from desktop.memory.store.writer import Tx, WriteOp

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.lifecycle")

# Tables that are the project's configuration or the code graph (re-derived from the
# files on disk), never session data; and SQLite's/FTS's/vec0's own bookkeeping.
KEEP = frozenset({"project_meta", "_engram_migrations", "vector_spaces", "memories", "audit_log",
                  "memory_files", "memory_modules"})  # the last two follow their memory (cascade)
_KEEP_PREFIXES = ("sqlite_", "memories_fts", "graph_", "vec_")


def side_tables(tx: Tx) -> list[str]:
    """Every ordinary table holding session-derived data (walks sqlite_master)."""
    rows = tx.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    out = []
    for name, sql in rows:
        name = str(name)
        if name in KEEP or name.startswith(_KEEP_PREFIXES) or str(sql or "").upper().startswith("CREATE VIRTUAL"):
            continue
        if "_vector_chunks" in name or name.endswith(("_rowids", "_info", "_auxiliary")):
            continue  # vec0 shadow tables
        out.append(name)
    return out


def _text_columns(tx: Tx, table: str) -> list[str]:
    return [str(r[1]) for r in tx.execute(f'PRAGMA table_info("{table}")')
            if str(r[2] or "").upper() in ("TEXT", "")]


def clear_side_tables(tx: Tx) -> dict[str, int]:
    """Delete every row of every side table (delete-all); returns rows removed per table."""
    removed: dict[str, int] = {}
    for table in side_tables(tx):
        tx.execute(f'DELETE FROM "{table}"')
        removed[table] = int(tx.conn.changes())
    tx.changed("observer", "deleted")
    return removed


class EraseText(WriteOp[dict[str, int]]):
    """Remove a leaked string from every memory, side-table row and audit entry that quotes it."""

    name: ClassVar[str] = "erase_text"

    def __init__(self, needles: list[str], *, actor: str = "user", reason: str | None = None) -> None:
        # The observer keeps lower-cased copies of what it saw (signal keys, search terms): a leaked
        # string is erased in every case it may have been stored in.
        self.needles = [v for n in dict.fromkeys(needles) if n and len(n) >= 4
                        for v in dict.fromkeys((n, n.lower(), n.casefold()))]
        self.actor = actor
        self.reason = reason

    def apply(self, tx: Tx) -> dict[str, int]:
        """Find by instr() on the raw connection (the needle is only matched, never stored)."""
        raw = tx.conn.raw
        out: dict[str, int] = {}
        if not self.needles:
            return out
        mem_cols = _text_columns(tx, "memories")
        ids: set[int] = set()
        for needle in self.needles:
            where = " OR ".join(f'instr(coalesce("{c}", \'\'), ?) > 0' for c in mem_cols)
            ids |= {int(r[0]) for r in raw.execute(f"SELECT id FROM memories WHERE {where}",
                                                   [needle] * len(mem_cols))}
        if ids:
            fill_temp(tx, "_erase", ids)
            out["memories"] = purge_temp(tx, "_erase", scrub_reason=True)
            tx.changed("memory", "deleted", ids)
        for table in side_tables(tx):
            cols = _text_columns(tx, table)
            if not cols:
                continue
            where = " OR ".join(f'instr(coalesce("{c}", \'\'), ?) > 0' for c in cols)
            n = 0
            for needle in self.needles:
                raw.execute(f'DELETE FROM "{table}" WHERE {where}', [needle] * len(cols))
                n += int(raw.changes())
            if n:
                out[table] = n
        n = 0
        for needle in self.needles:
            raw.execute("UPDATE audit_log SET detail = '{\"scrubbed\": true}', reason = NULL "
                        "WHERE instr(coalesce(detail, ''), ?) > 0 OR instr(coalesce(reason, ''), ?) > 0",
                        (needle, needle))
            n += int(raw.changes())
        if n:
            out["audit_log"] = n
        tx.audit("erase_text", None, actor=self.actor, reason=self.reason or "leaked text erased",
                 detail={"removed": out})
        return out


def erase_text(project: Project, needles: list[str], *, actor: str = "user", reason: str | None = None
               ) -> dict[str, int]:
    """Erase leaked strings everywhere (Engram's log files too), then vacuum and truncate the WAL
    so no page keeps them."""
    from desktop.memory.lifecycle.emergency import ScrubDatabase
    from desktop.memory.privacy.logfiles import scrub_logs

    db = project.db
    out = db.writer.run(EraseText(needles, actor=actor, reason=reason), 600)
    db.reads.close()
    db.writer.run(ScrubDatabase(), 600)
    lines = scrub_logs(getattr(getattr(project, "settings", None), "data_dir", None), needles)
    if lines:
        out["log_lines"] = lines
    log.info("erased %d leaked string(s): %s", len(needles), out)
    return out


class RedactStored(WriteOp[dict[str, int]]):
    """Pass every text value already stored through today's scanner (databases from before the boundary).

    Walks every ordinary table and TEXT column (graph and FTS bookkeeping included:
    the FTS index follows ``memories`` by trigger). Rows are read on the raw
    connection and only rows whose text changes are written back, through the
    guarded one, so a clean database costs one read pass.
    """

    name: ClassVar[str] = "redact_stored"

    def __init__(self, *, actor: str = "user") -> None:
        self.actor = actor

    def apply(self, tx: Tx) -> dict[str, int]:
        """Scan, rewrite changed values, audit the counts (never the text)."""
        from desktop.memory.privacy.boundary import redact_stored

        raw = tx.conn.raw
        out: dict[str, int] = {}
        rows = tx.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
        for name, sql in rows:
            table = str(name)
            if table.startswith(("sqlite_", "memories_fts")) or str(sql or "").upper().startswith("CREATE VIRTUAL"):
                continue
            if "_vector_chunks" in table or table.endswith(("_rowids", "_info", "_auxiliary")):
                continue
            cols = _text_columns(tx, table)
            if not cols:
                continue
            n = 0
            # WITHOUT ROWID tables are addressed by their primary key instead of the rowid.
            info = sorted(tx.execute(f'PRAGMA table_info("{table}")').fetchall(), key=lambda r: int(r[5] or 0))
            keys = ["rowid"] if "WITHOUT ROWID" not in str(sql or "").upper() else [str(r[1]) for r in info if r[5]]
            select = ", ".join(f'"{c}"' if c != "rowid" else c for c in [*keys, *cols])
            where = " AND ".join(f'"{k}" = ?' if k != "rowid" else "rowid = ?" for k in keys)
            for row in raw.execute(f'SELECT {select} FROM "{table}"').fetchall():
                key_values, values = list(row[:len(keys)]), row[len(keys):]
                changes = {c: redact_stored(v) for c, v in zip(cols, values, strict=True) if isinstance(v, str) and v}
                changes = {c: v for c, v in changes.items() if v != values[cols.index(c)]}
                if changes:
                    sets = ", ".join(f'"{c}" = ?' for c in changes)
                    # the key is matched as stored (raw), the new values pass the guard
                    try:
                        raw.execute(f'UPDATE "{table}" SET {sets} WHERE {where}',
                                    [*(redact_stored(v) if isinstance(v, str) else v for v in changes.values()),
                                     *key_values])
                    except apsw.ConstraintError:
                        # Redacted, the key equals another row's (two patterns differing only by
                        # the secret): that row already says it, so this one goes.
                        raw.execute(f'DELETE FROM "{table}" WHERE {where}', key_values)
                    n += 1
            if n:
                out[table] = n
        if out:
            tx.audit("redact_stored", None, actor=self.actor, reason="secrets redacted in stored text",
                     detail={"rows": out})
            tx.changed("memory", "updated")
        return out


def redact_existing(project: Project, *, actor: str = "user") -> dict[str, int]:
    """Redact secrets already stored anywhere in the project's database, then vacuum the old pages away."""
    from desktop.memory.lifecycle.emergency import ScrubDatabase

    db = project.db
    out = db.writer.run(RedactStored(actor=actor), 1800)
    if out:
        db.reads.close()
        db.writer.run(ScrubDatabase(), 600)
    log.info("redacted stored secrets: %s", out)
    return out
