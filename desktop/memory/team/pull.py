"""Pull the team's changes since a cursor, and apply them locally through the writer.

The feed is the team clock: every memory row, tombstone and conflict carries the
seq of its last change, so "everything after N" is three indexed range scans.
Applying is one WriteOp per window: new memories are inserted (or linked to a
local memory with the same fingerprint: the same lesson learned here too),
changes overwrite the local copy unless this machine has an edit of it waiting
to be pushed (the push then reports the conflict), deletions hard-delete the
local copy, and conflicts become `contradicts` links in the existing conflict
flow with who said what in the audit log. The outbox rows the triggers write
for these changes are removed in the same transaction: a pulled change is not
pushed back.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

import psycopg

from desktop.memory.lifecycle.conflict_store import RecordConflicts
from desktop.memory.lifecycle.conflicts import Conflict
from desktop.memory.privacy.secrets import redact
from desktop.memory.store.memory_ops import HardDelete, SetFlag
from desktop.memory.store.rows import fingerprint
from desktop.memory.store.writer import Tx, WriteOp
from desktop.memory.triggers.index import index_memory
from desktop.memory.types import DEFAULT_HALF_LIFE_DAYS, MemorySource

log = logging.getLogger("engram.team")

WINDOW = 2000
_SOURCES = {s.value for s in MemorySource}
TEAM_MAX_CONFIDENCE = 0.8
"""A teammate's memory arrives at most as sure as a person's own default (user-taught memories start at 0.8)."""


def team_source(claimed: Any) -> str:
    """The local source of a pulled memory: what it claims, except "taught by you" (it was not: a
    teammate taught it, ``team``) or a value this build does not know (also ``team``)."""
    if claimed not in _SOURCES or claimed == MemorySource.USER_TAUGHT.value:
        return MemorySource.TEAM.value
    return str(claimed)
_COLS = ("gid, version, seq, type, content, confidence, tags, related_files, related_modules, citation_text,"
         " source, pinned, deprecated, user_verified, created_by, created_at, updated_by")


@dataclass
class RemoteBatch:
    """One window of the feed."""

    upserts: list[dict[str, Any]] = field(default_factory=list)
    deletes: list[dict[str, Any]] = field(default_factory=list)
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    cursor: int = 0  # the seq this window reaches
    clock: int = 0   # the team clock when read


def fetch(conn: psycopg.Connection, *, team_id: str, project_key: str, cursor: int,
          window: int = WINDOW) -> RemoteBatch:
    """Read changes with cursor < seq <= min(clock, cursor + window)."""
    with conn.transaction():
        row = conn.execute("SELECT clock FROM engram.teams WHERE id = %s", (team_id,)).fetchone()
        clock = int(row[0]) if row else 0
        hi = min(clock, cursor + window)
        out = RemoteBatch(cursor=hi, clock=clock)
        if hi <= cursor:
            return out
        args = (team_id, project_key, cursor, hi)
        # One JSON document for the whole window: decoded by the C json module, not row by row.
        doc = conn.execute(
            f"SELECT coalesce(json_agg(t ORDER BY t.seq), '[]')::text FROM (SELECT {_COLS} FROM engram.memories"
            " WHERE team_id = %s AND project_key = %s AND seq > %s AND seq <= %s) t", args).fetchone()
        out.upserts = json.loads(doc[0]) if doc else []
        for item in out.upserts:
            # json_agg renders timestamptz as 2026-11-23T20:25:52.123+00:00
            item["created_at"] = str(item["created_at"]).replace("+00:00", "Z")
        out.deletes = [{"gid": str(g), "seq": s, "by": b} for g, s, b in conn.execute(
            "SELECT gid, seq, deleted_by FROM engram.deletions WHERE team_id = %s AND project_key = %s"
            " AND seq > %s AND seq <= %s ORDER BY seq", args)]
        out.conflicts = [{"a": str(a), "b": str(b), "by_a": ba, "by_b": bb} for a, b, ba, bb in conn.execute(
            "SELECT gid_a, gid_b, by_a, by_b FROM engram.conflicts WHERE team_id = %s AND project_key = %s"
            " AND seq > %s AND seq <= %s ORDER BY seq", args)]
    return out


@dataclass
class Applied:
    """What one window changed locally."""

    added: list[int] = field(default_factory=list)
    updated: list[int] = field(default_factory=list)
    deleted: int = 0
    conflicts: int = 0
    skipped: int = 0


def _written_here(tx: Tx, memory_ids: list[int]) -> list[int]:
    """The live memories among ``memory_ids`` that this machine wrote and shared (origin ``local``)."""
    if not memory_ids:
        return []
    marks = ",".join("?" * len(memory_ids))
    return [int(r[0]) for r in tx.execute(
        f"SELECT l.memory_id FROM team_links l JOIN memories m ON m.id = l.memory_id WHERE l.origin = 'local' "
        f"AND m.deprecated = 0 AND l.memory_id IN ({marks})", memory_ids)]


def _links(tx: Tx, gids: list[str]) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for start in range(0, len(gids), 500):
        chunk = gids[start:start + 500]
        for gid, mid, version in tx.execute(
                f"SELECT gid, memory_id, version FROM team_links WHERE gid IN ({','.join('?' * len(chunk))})", chunk):
            out[str(gid)] = (int(mid), int(version))
    return out


class ApplyRemote(WriteOp[Applied]):
    """Apply one window of the team feed and advance the cursor, atomically."""

    name: ClassVar[str] = "team_apply_remote"

    def __init__(self, batch: RemoteBatch) -> None:
        self.batch = batch

    def apply(self, tx: Tx) -> Applied:
        """See the module docstring."""
        before = int(cast(int, tx.execute("SELECT COALESCE(MAX(seq), 0) FROM team_outbox").fetchall()[0][0]))
        b = self.batch
        gids = [u["gid"] for u in b.upserts] + [d["gid"] for d in b.deletes]
        gids += [c["a"] for c in b.conflicts] + [c["b"] for c in b.conflicts]
        links = _links(tx, gids)
        pending = {int(r[0]) for r in tx.execute("SELECT memory_id FROM team_outbox WHERE op = 'upsert'")}
        out = Applied()
        for u in b.upserts:
            self._upsert(tx, u, links, pending, out)
        doomed = [links[d["gid"]][0] for d in b.deletes if d["gid"] in links]
        own = _written_here(tx, doomed)
        if own:
            # What this machine wrote stays its own: a teammate's delete (or anyone's tombstone
            # written straight into the server) forgets it here, restorably, and unlinks it.
            for mid in own:
                SetFlag(mid, "forget", actor="team", reason="deleted by a teammate").apply(tx)
            tx.execute(f"DELETE FROM team_links WHERE memory_id IN ({','.join('?' * len(own))})", own)
        doomed = [m for m in doomed if m not in set(own)]
        if doomed:
            out.deleted = HardDelete(doomed, actor="team", reason="deleted by a teammate").apply(tx)
        for c in b.conflicts:
            self._conflict(tx, c, links, out)
        # What the triggers queued for these changes must not be pushed back.
        tx.execute("DELETE FROM team_outbox WHERE seq > ?", (before,))
        tx.execute("INSERT INTO team_state(key, value) VALUES ('cursor', ?) ON CONFLICT(key) DO UPDATE "
                   "SET value = excluded.value", (str(b.cursor),))
        if out.added:
            tx.changed("memory", "added", out.added)
        if out.updated:
            tx.changed("memory", "updated", out.updated)
        return out

    def _upsert(self, tx: Tx, u: dict[str, Any], links: dict[str, tuple[int, int]], pending: set[int],
                out: Applied) -> None:
        content = redact(u["content"])[0]  # the local door's rule holds for pulled text too
        fp = fingerprint(content)
        link = links.get(u["gid"])
        if link is not None:
            mid, version = link
            if version >= u["version"] or mid in pending:
                out.skipped += 1
                return
            clash = tx.execute("SELECT id FROM memories WHERE fingerprint = ? AND deprecated = 0 AND id <> ?",
                               (fp, mid)).fetchall()
            if clash and not u["deprecated"]:
                out.skipped += 1
                log.info("pulled edit of memory #%d duplicates memory #%d; kept local", mid, clash[0][0])
                return
            tx.audit("team_edit", mid, actor=f"team:{u['updated_by']}", reason="changed by a teammate",
                     detail={"by": u["updated_by"], "version": u["version"]})
            # Pins and confirmations are each person's own word about their copy: a teammate's
            # (or a row's claim) never changes this machine's.
            tx.execute(
                "UPDATE memories SET type = ?, content = ?, fingerprint = ?, tags = ?, related_files = ?,"
                " related_modules = ?, citation_text = ?, deprecated = ?,"
                " deprecated_at = CASE WHEN ? THEN COALESCE(deprecated_at, ?) ELSE NULL END, updated_at = ?"
                " WHERE id = ?",
                (u["type"], content, fp, json.dumps(u["tags"]), json.dumps(u["related_files"]),
                 json.dumps(u["related_modules"]), u["citation_text"],
                 int(u["deprecated"]), int(u["deprecated"]), tx.now, tx.now, mid))
            tx.execute("UPDATE team_links SET version = ?, updated_by = ?, base_fp = ? WHERE memory_id = ?",
                       (u["version"], u["updated_by"], fp, mid))
            out.updated.append(mid)
            return
        local = [] if u["deprecated"] else tx.execute(
            "SELECT m.id, l.gid FROM memories m LEFT JOIN team_links l ON l.memory_id = m.id "
            "WHERE m.fingerprint = ? AND m.deprecated = 0", (fp,)).fetchall()
        if local:
            local_id, linked = local[0]
            if linked is None:  # the same lesson learned here: one memory, linked to the team's
                tx.execute("INSERT INTO team_links(memory_id, gid, version, origin, created_by, updated_by,"
                           " base_fp) VALUES (?, ?, ?, 'local', ?, ?, ?)",
                           (local_id, u["gid"], u["version"], u["created_by"], u["updated_by"], fp))
                out.updated.append(int(cast(int, local_id)))
            else:
                out.skipped += 1
            return
        mid = self._insert(tx, u, content, fp)
        tx.execute("INSERT INTO team_links(memory_id, gid, version, origin, created_by, updated_by, base_fp) "
                   "VALUES (?, ?, ?, 'remote', ?, ?, ?)",
                   (mid, u["gid"], u["version"], u["created_by"], u["updated_by"], fp))
        links[u["gid"]] = (mid, u["version"])
        out.added.append(mid)

    @staticmethod
    def _insert(tx: Tx, u: dict[str, Any], content: str, fp: str) -> int:
        # Never more trusted than "a teammate said so", whatever the row claims (anyone with the
        # team's credentials can write rows straight into the server): not pinned, not confirmed,
        # not taught by this user, at most a person's default confidence.
        source = team_source(u["source"])
        confidence = min(float(u["confidence"]), TEAM_MAX_CONFIDENCE)
        # Journal-first, before the row exists: the id the new memory is about to get.
        tx.audit_from(
            "SELECT ?, ?, 'add', COALESCE((SELECT seq FROM sqlite_sequence WHERE name='memories'), 0) + 1, ?, ?",
            (tx.now, f"team:{u['created_by']}", "shared by a teammate",
             json.dumps({"type": u["type"], "source": source, "excerpt": content[:200], "by": u["created_by"]},
                        ensure_ascii=False)))
        tx.execute(
            "INSERT INTO memories(type, content, confidence, tags, related_files, related_modules, scope, source,"
            " citation_text, pinned, deprecated, deprecated_at, user_verified, decay_half_life_days, created_at,"
            " updated_at, last_accessed_at, project_id, fingerprint) VALUES (?, ?, ?, ?, ?, ?, 'global', ?, ?, ?,"
            " ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (u["type"], content, confidence, json.dumps(u["tags"]), json.dumps(u["related_files"]),
             json.dumps(u["related_modules"]), source, u["citation_text"], 0, int(u["deprecated"]),
             tx.now if u["deprecated"] else None, 0, DEFAULT_HALF_LIFE_DAYS.get(u["type"]),
             u["created_at"], tx.now, tx.now, tx.project_id, fp))
        mid = int(tx.conn.last_insert_rowid())
        index_memory(tx, mid, u["type"], content, source, {})
        return mid

    @staticmethod
    def _conflict(tx: Tx, c: dict[str, Any], links: dict[str, tuple[int, int]], out: Applied) -> None:
        a, b = links.get(c["a"]), links.get(c["b"])
        if a is None or b is None or a[0] == b[0]:
            return
        found = RecordConflicts([Conflict(a[0], b[0], "team_edit", 1.0, {"by": [c["by_a"], c["by_b"]]})]).apply(tx)
        if found:
            tx.audit("team_conflict", a[0], actor="team",
                     reason=f"{c['by_a']} and {c['by_b']} edited the same memory differently",
                     detail={"other": b[0], "by_a": c["by_a"], "by_b": c["by_b"]})
            out.conflicts += found
