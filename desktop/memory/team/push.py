"""Push one batch of changes to the server in one transaction.

Ordering: the transaction first reserves a range of the team's change clock with
`UPDATE teams SET clock = clock + n`, which also locks the team's row until
commit, so pushes of one team commit in clock order and a puller that has read
up to seq N can never later see a smaller seq appear. It also makes each push's
decisions (fingerprint merge, conflict) race-free.

Idempotence: a change carries its global id and the server version it was based
on. A retried push (the client died before recording the ack) finds its own
fields already there and is acknowledged again without a new version; a
conflicting edit forks to a global id derived from (memory, client, text), so a
retried conflict finds its fork instead of making another.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from desktop.memory.team.outbox import GID_NAMESPACE, Ack, Outgoing

COMPARED = ("type", "content", "tags", "related_files", "related_modules", "citation_text", "pinned",
            "deprecated", "user_verified")
_ROW = ("gid, version, fingerprint, type, content, tags, related_files, related_modules, citation_text, pinned,"
        " deprecated, user_verified, updated_by, created_by")


def _row_dict(r: tuple[Any, ...]) -> dict[str, Any]:
    keys = [k.strip() for k in _ROW.split(",")]
    out = dict(zip(keys, r, strict=True))
    out["gid"] = str(out["gid"])
    return out


def channel(team_id: str) -> str:
    """The LISTEN/NOTIFY channel of a team (carries only the clock value, never content)."""
    return "engram_team_" + team_id.replace("-", "")


def _ack(item: Outgoing, status: str, gid: str, version: int = 0, by: str = "") -> Ack:
    return Ack(item.seq, item.memory_id, status, gid, version, by, item.local_fp)


def fork_gid(gid: str, client_id: str, fp: str) -> str:
    """Where a conflicting edit of `gid` by this client goes (stable across retries)."""
    return str(uuid.uuid5(GID_NAMESPACE, f"fork:{gid}:{client_id}:{fp}"))


class _Batch:
    """The decisions of one push transaction."""

    def __init__(self, conn: psycopg.Connection, team_id: str, project_key: str, member: str, client: str,
                 first_seq: int) -> None:
        self.conn, self.team, self.project, self.member, self.client = conn, team_id, project_key, member, client
        self.next_seq = first_seq
        self.rows: dict[str, dict[str, Any]] = {}
        self.live_fp: dict[str, str] = {}
        self.checked_fps: set[str] = set()
        self.new_rows: list[dict[str, Any]] = []
        self.audit_rows: list[tuple[str, str]] = []

    def seq(self) -> int:
        self.next_seq += 1
        return self.next_seq

    def load(self, items: list[Outgoing]) -> None:
        gids = [i.gid for i in items]
        for r in self.conn.execute(f"SELECT {_ROW} FROM engram.memories WHERE gid = ANY(%s::uuid[]) FOR UPDATE",
                                   (gids,)):
            row = _row_dict(r)
            self.rows[row["gid"]] = row
        self.tombs = {str(r[0]) for r in self.conn.execute(
            "SELECT gid FROM engram.deletions WHERE gid = ANY(%s::uuid[])", (gids,))}
        fps = [i.fields["fingerprint"] for i in items if i.fields]
        self.checked_fps = set(fps)  # looked up once here; later lookups only for fps not in the batch
        for fp, gid in self.conn.execute(
                "SELECT fingerprint, gid FROM engram.memories WHERE team_id = %s AND project_key = %s"
                " AND NOT deprecated AND fingerprint = ANY(%s)", (self.team, self.project, fps)):
            self.live_fp[fp] = str(gid)

    def _fp_owner(self, fp: str, gid: str) -> str | None:
        """Another live memory with this fingerprint (checked in the database for fps not loaded)."""
        if fp not in self.live_fp and fp not in self.checked_fps:
            self.checked_fps.add(fp)
            self.flush()
            r = self.conn.execute("SELECT gid FROM engram.memories WHERE team_id = %s AND project_key = %s "
                                  "AND NOT deprecated AND fingerprint = %s", (self.team, self.project, fp)).fetchone()
            if r:
                self.live_fp[fp] = str(r[0])
        owner = self.live_fp.get(fp)
        return owner if owner and owner != gid else None

    def _version_of(self, gid: str) -> int:
        row = self.rows.get(gid)
        if row is None:
            self.flush()
            r = self.conn.execute("SELECT version FROM engram.memories WHERE gid = %s", (gid,)).fetchone()
            return int(r[0]) if r else 1
        return int(row["version"])

    def _insert(self, gid: str, f: dict[str, Any]) -> None:
        # New rows are sent together by flush() (executemany): the initial push of a
        # project is thousands of them. Anything else flushes them first, keeping order.
        self.new_rows.append(
            {"g": gid, "s": self.seq(), "fp": f["fingerprint"], "ty": f["type"], "c": f["content"],
             "conf": f["confidence"], "tg": f["tags"], "rf": f["related_files"], "rm": f["related_modules"],
             "ct": f["citation_text"], "src": f["source"], "pn": f["pinned"], "dp": f["deprecated"],
             "uv": f["user_verified"], "ca": f["created_at"]})
        self._audit(gid, "add")
        self.rows[gid] = {**f, "gid": gid, "version": 1, "updated_by": self.member, "created_by": self.member}
        if not f["deprecated"]:
            self.live_fp[f["fingerprint"]] = gid

    def _update(self, row: dict[str, Any], f: dict[str, Any]) -> int:
        self.flush()
        gid, version = row["gid"], int(row["version"]) + 1
        self.conn.execute(
            "UPDATE engram.memories SET seq = %s, version = %s, fingerprint = %s, type = %s, content = %s,"
            " confidence = %s, tags = %s, related_files = %s, related_modules = %s, citation_text = %s,"
            " pinned = %s, deprecated = %s, user_verified = %s, updated_by = %s, updated_client = %s,"
            " updated_at = now() WHERE gid = %s",
            (self.seq(), version, f["fingerprint"], f["type"], f["content"], f["confidence"], Jsonb(f["tags"]),
             Jsonb(f["related_files"]), Jsonb(f["related_modules"]), f["citation_text"], f["pinned"],
             f["deprecated"], f["user_verified"], self.member, self.client, gid))
        if f["content"] != row["content"]:
            # History keeps the texts that were replaced (the current one is the row itself).
            self.conn.execute("INSERT INTO engram.memory_versions(gid, version, team_id, content, author) "
                              "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                              (gid, int(row["version"]), self.team, row["content"], row["updated_by"]))
        self._audit(gid, "edit")
        if self.live_fp.get(row["fingerprint"]) == gid:
            del self.live_fp[row["fingerprint"]]
        if not f["deprecated"]:
            self.live_fp[f["fingerprint"]] = gid
        self.rows[gid] = {**row, **f, "version": version, "updated_by": self.member}
        return version

    def _audit(self, gid: str, action: str) -> None:
        self.audit_rows.append((gid, action))

    def flush(self) -> None:
        """Send the queued new rows and audit entries.

        One INSERT ... SELECT FROM jsonb_to_recordset per table: one statement, one round
        trip and one JSON document for a whole batch (COPY would be faster still, but
        PostgreSQL refuses COPY FROM into tables with row-level security).
        """
        if self.new_rows:
            doc = json.dumps(self.new_rows, ensure_ascii=False)
            self.conn.execute(
                "INSERT INTO engram.memories(gid, team_id, project_key, seq, version, fingerprint, type, content,"
                " confidence, tags, related_files, related_modules, citation_text, source, pinned, deprecated,"
                " user_verified, created_by, created_at, updated_by, updated_client)"
                " SELECT g, %s, %s, s, 1, fp, ty, c, conf, tg, rf, rm, ct, src, pn, dp, uv, %s, ca, %s, %s"
                " FROM jsonb_to_recordset(%s::jsonb) AS t(g uuid, s bigint, fp text, ty text, c text, conf real,"
                " tg jsonb, rf jsonb, rm jsonb, ct text, src text, pn bool, dp bool, uv bool, ca timestamptz)",
                (self.team, self.project, self.member, self.member, self.client, doc))
        if self.audit_rows:
            gids, actions = (list(c) for c in zip(*self.audit_rows, strict=True))
            self.conn.execute("INSERT INTO engram.audit(team_id, gid, action, actor)"
                              " SELECT %s, g, a, %s FROM unnest(%s::uuid[], %s::text[]) AS t(g, a)",
                              (self.team, self.member, gids, actions))
        self.new_rows, self.audit_rows = [], []

    def upsert(self, item: Outgoing) -> Ack:
        f = item.fields or {}
        fp = f["fingerprint"]
        row = self.rows.get(item.gid)
        if row is None:
            if item.gid in self.tombs:
                return _ack(item, "gone", item.gid)
            owner = None if f["deprecated"] else self._fp_owner(fp, item.gid)
            if owner:  # the same lesson learned elsewhere: link to it, do not duplicate
                return _ack(item, "merged", owner, self._version_of(owner),
                           str(self.rows.get(owner, {}).get("created_by", "")))
            self._insert(item.gid, f)
            return _ack(item, "ok", item.gid, 1, self.member)
        sent_content = f["content"]
        if not item.content_changed and row["content"] != f["content"]:
            # Only flags/tags changed here while a teammate changed the text: merge, keep their text,
            # and acknowledge one version back so the next pull brings the merged text home.
            f = {**f, "content": row["content"], "fingerprint": row["fingerprint"]}
        if all(row[k] == f[k] for k in COMPARED):  # a retry, or nothing that matters changed
            stale = f["content"] != sent_content  # our text is behind the server's: pull it
            return _ack(item, "ok", item.gid, int(row["version"]) - stale, row["created_by"])
        owner = None if f["deprecated"] else self._fp_owner(fp, item.gid)
        if owner:
            return _ack(item, "merged", owner, self._version_of(owner))
        if int(row["version"]) == item.base_version or row["content"] == f["content"]:
            # Based on the current version, or only flags/tags differ: those merge without a conflict.
            version = self._update(row, f)
            return _ack(item, "ok", item.gid, version - 1 if f["content"] != sent_content else version,
                        row["created_by"])
        return self._conflict(item, row, f)

    def _conflict(self, item: Outgoing, row: dict[str, Any], f: dict[str, Any]) -> Ack:
        """Two people edited one memory: keep both, as two memories with a conflict between them."""
        self.flush()
        fork = fork_gid(item.gid, self.client, f["fingerprint"])
        if self.conn.execute("SELECT 1 FROM engram.memories WHERE gid = %s", (fork,)).fetchone():
            return _ack(item, "conflict", fork, self._version_of(fork), self.member)
        self._insert(fork, f)
        self.flush()
        self.conn.execute("INSERT INTO engram.conflicts(team_id, project_key, seq, gid_a, gid_b, by_a, by_b) "
                          "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                          (self.team, self.project, self.seq(), item.gid, fork, row["updated_by"], self.member))
        self._audit(item.gid, "conflict")
        return _ack(item, "conflict", fork, 1, self.member)

    def delete(self, item: Outgoing) -> Ack:
        # Cascades remove its history and conflicts; the tombstone holds the id only.
        self.flush()
        self.conn.execute("DELETE FROM engram.memories WHERE gid = %s", (item.gid,))
        self.conn.execute("INSERT INTO engram.deletions(gid, team_id, project_key, seq, deleted_by) "
                          "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (gid) DO NOTHING",
                          (item.gid, self.team, self.project, self.seq(), self.member))
        self._audit(item.gid, "delete")
        row = self.rows.pop(item.gid, None)
        if row and self.live_fp.get(row["fingerprint"]) == item.gid:
            del self.live_fp[row["fingerprint"]]
        return _ack(item, "deleted", item.gid)


def push_batch(conn: psycopg.Connection, *, team_id: str, project_key: str, member: str, client_id: str,
               items: list[Outgoing]) -> list[Ack]:
    """Send `items` in one transaction; the acks are valid only once this returns (committed)."""
    if not items:
        return []
    with conn.transaction():
        # Each change uses at most two seqs (a conflict: the fork and the conflict row).
        reserve = 2 * len(items)
        end = conn.execute("UPDATE engram.teams SET clock = clock + %s WHERE id = %s RETURNING clock",
                           (reserve, team_id)).fetchone()
        if end is None:
            raise psycopg.errors.InsufficientPrivilege("team row not visible to this role")
        batch = _Batch(conn, team_id, project_key, member, client_id, int(end[0]) - reserve)
        batch.load(items)
        acks = [batch.delete(i) if i.op == "delete" else batch.upsert(i) for i in items]
        batch.flush()
        # Delivered at commit: teammates' sync threads wake at once instead of at their next poll.
        conn.execute("SELECT pg_notify(%s, %s)", (channel(team_id), str(batch.next_seq)))
    return acks
