"""What leaves this machine: the outbox read as a push batch, shareability, redaction, acks.

Nothing is sent that did not pass three gates here: the memory is shareable (a
person's choice for it, else the project's per-type policy; personal types,
candidates, session-scoped and code chunks never leave), only whitelisted fields
are sent (no session ids, provenance, metadata or vectors), and every text field
is redacted by the secret scanner, then scanned again: a memory in which anything
still looks like a secret is held back, not sent.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any, ClassVar

from desktop.memory.privacy.secrets import redact, scan
from desktop.memory.store.rows import fingerprint
from desktop.memory.store.writer import Tx, WriteOp
from desktop.memory.team.state import NEVER_SHARED_TYPES, TeamState
from desktop.memory.types import MemoryScope

# A global id is derived from (client, local id): a retried push after a crash sends
# the same id, so the server recognises it instead of creating a second memory.
GID_NAMESPACE = uuid.UUID("6f1d4b8e-7a39-4c55-9a53-0e6a8f2d1c77")


def local_gid(client_id: str, memory_id: int) -> str:
    """The global id a memory first created on this machine gets."""
    return str(uuid.uuid5(GID_NAMESPACE, f"{client_id}:{memory_id}"))


@dataclass
class Outgoing:
    """One change to push: an upsert with its fields, or a delete (global id only)."""

    seq: int
    memory_id: int
    op: str  # "upsert" | "delete"
    gid: str
    base_version: int = 0
    fields: dict[str, Any] | None = None
    local_fp: str = ""             # fingerprint of the local text pushed
    content_changed: bool = True   # False: only flags/tags changed here since `base_version`


@dataclass
class PushBatch:
    """A batch read from the outbox: what to send, and seqs to drop without sending."""

    items: list[Outgoing]
    dropped: list[int]
    held_back: int = 0
    last_seq: int = 0  # the highest outbox seq this batch covers


def _clean_text(value: str | None) -> str | None:
    return None if value is None else redact(value)[0]


def _texts(fields: dict[str, Any]) -> list[str]:
    return [fields["content"], fields["citation_text"] or "", *fields["tags"], *fields["related_files"],
            *fields["related_modules"]]


def outgoing_fields(row: dict[str, Any]) -> dict[str, Any] | None:
    """The whitelisted, redacted fields of a memory row; None when a secret survives redaction."""
    fields: dict[str, Any] = {
        "type": row["type"], "content": row["content"], "confidence": float(row["confidence"]),
        "tags": json.loads(row["tags"] or "[]"), "related_files": json.loads(row["related_files"] or "[]"),
        "related_modules": json.loads(row["related_modules"] or "[]"),
        "citation_text": row["citation_text"], "source": row["source"],
        "pinned": bool(row["pinned"]), "deprecated": bool(row["deprecated"]),
        "user_verified": bool(row["user_verified"]), "created_at": row["created_at"],
    }
    # One scan over all the text (the common, clean case); field by field only when it finds something.
    if scan("\n".join(_texts(fields))):
        fields["content"] = _clean_text(fields["content"]) or ""
        fields["citation_text"] = _clean_text(fields["citation_text"])
        for key in ("tags", "related_files", "related_modules"):
            fields[key] = [_clean_text(v) for v in fields[key]]
        if any(scan(t or "") for t in _texts(fields)):
            return None
    # PostgreSQL text cannot hold NUL (SQLite can): drop it rather than block the queue.
    fields["content"] = fields["content"].replace("\x00", "")
    if fields["citation_text"] is not None:
        fields["citation_text"] = fields["citation_text"].replace("\x00", "")
    for key in ("tags", "related_files", "related_modules"):
        fields[key] = [v.replace("\x00", "") for v in fields[key] if isinstance(v, str)]
    fields["fingerprint"] = fingerprint(fields["content"])
    return fields


def shareable(row: dict[str, Any], override: int | None, origin: str | None, state: TeamState) -> bool:
    """Whether this memory goes to the team (see the module docstring)."""
    if origin == "remote":
        return True  # it came from the team: edits, pins and deletes of it go back
    if row["type"] in NEVER_SHARED_TYPES:
        return False
    if override is not None:
        return bool(override)
    if row["candidate"] or row["scope"] == MemoryScope.SESSION.value:
        return False
    return row["type"] in state.shared_types


def read_batch(conn: Any, state: TeamState, limit: int = 500, after: int = 0) -> PushBatch:
    """The oldest `limit` outbox entries after seq `after`, turned into changes to push."""
    rows = conn.execute("SELECT seq, memory_id, gid, op FROM team_outbox WHERE seq > ? ORDER BY seq LIMIT ?",
                        (after, limit)).fetchall()
    if not rows:
        return PushBatch([], [])
    ids = sorted({int(r[1]) for r in rows if r[3] == "upsert"})
    memories: dict[int, dict[str, Any]] = {}
    links: dict[int, tuple[str, int, str, str | None]] = {}
    overrides: dict[int, int] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        cur = conn.execute(f"SELECT * FROM memories WHERE id IN ({marks})", chunk)
        names = [d[0] for d in cur.getdescription()]
        for values in cur.fetchall():
            found = dict(zip(names, values, strict=True))
            memories[int(found["id"])] = found
        for mid, gid, version, origin, base_fp in conn.execute(
                f"SELECT memory_id, gid, version, origin, base_fp FROM team_links WHERE memory_id IN ({marks})",
                chunk):
            links[int(mid)] = (str(gid), int(version), str(origin), base_fp)
        for mid, shared in conn.execute(
                f"SELECT memory_id, shared FROM team_share WHERE memory_id IN ({marks})", chunk):
            overrides[int(mid)] = int(shared)
    batch = PushBatch([], [], last_seq=int(rows[-1][0]))
    for seq, mid, gid, op in rows:
        seq, mid = int(seq), int(mid)
        if op == "delete":
            batch.items.append(Outgoing(seq, mid, "delete", str(gid)))
            continue
        row = memories.get(mid)
        if row is None:  # deleted since it was queued; its delete entry speaks for it
            batch.dropped.append(seq)
            continue
        link = links.get(mid)
        if not shareable(row, overrides.get(mid), link[2] if link else None, state):
            if link is not None and overrides.get(mid) == 0:
                # A person made this one memory personal: withdraw it from the team. Narrowing the
                # shared types (or a memory becoming a candidate) only stops future pushes: what
                # teammates already have is theirs unless someone deletes it on purpose.
                batch.items.append(Outgoing(seq, mid, "delete", link[0]))
            else:
                batch.dropped.append(seq)
            continue
        fields = outgoing_fields(row)
        if fields is None:
            batch.held_back += 1
            batch.dropped.append(seq)
            continue
        gid_, version = (link[0], link[1]) if link else (local_gid(state.client_id, mid), 0)
        changed = link is None or link[3] is None or link[3] != row["fingerprint"]
        batch.items.append(Outgoing(seq, mid, "upsert", gid_, version, fields, row["fingerprint"], changed))
    return batch


@dataclass(frozen=True)
class Ack:
    """The server's answer to one pushed change."""

    seq: int
    memory_id: int
    status: str  # ok | merged | conflict | gone | deleted
    gid: str
    version: int = 0
    by: str = ""
    local_fp: str = ""


class AckPush(WriteOp[int]):
    """Record what the server acknowledged: links get the server's gid/version, entries leave the outbox."""

    name: ClassVar[str] = "team_ack_push"

    def __init__(self, acks: list[Ack], dropped: list[int], member: str) -> None:
        self.acks = acks
        self.dropped = dropped
        self.member = member

    def apply(self, tx: Tx) -> int:
        """Update links, delete the acknowledged seqs (an edit made meanwhile has a newer seq and stays)."""
        for ack in self.acks:
            if ack.status in ("ok", "merged", "conflict"):
                exists = tx.execute("SELECT 1 FROM memories WHERE id = ?", (ack.memory_id,)).fetchall()
                if exists:
                    tx.execute("DELETE FROM team_links WHERE gid = ? AND memory_id <> ?", (ack.gid, ack.memory_id))
                    tx.execute(
                        "INSERT INTO team_links(memory_id, gid, version, origin, created_by, updated_by, base_fp) "
                        "VALUES (?, ?, ?, 'local', ?, ?, ?) ON CONFLICT(memory_id) DO UPDATE SET gid = excluded.gid,"
                        " version = excluded.version, updated_by = excluded.updated_by, base_fp = excluded.base_fp",
                        (ack.memory_id, ack.gid, ack.version, ack.by or self.member, self.member,
                         ack.local_fp or None))
            elif ack.status == "deleted":
                tx.execute("DELETE FROM team_links WHERE gid = ?", (ack.gid,))
        seqs = [a.seq for a in self.acks] + list(self.dropped)
        for start in range(0, len(seqs), 500):
            chunk = seqs[start:start + 500]
            tx.execute(f"DELETE FROM team_outbox WHERE seq IN ({','.join('?' * len(chunk))})", chunk)
        tx.changed("team", "pushed")
        return len(self.acks)
