"""Staleness anchored to code: a memory remembers the hashes of the code it is about.

``memories.code_anchors`` maps an anchor key to the SHA-256 of what it covered:
``"src/a.py"`` (the whole file) or ``"src/a.py#L10-20"`` (a chunk's line range);
``commit_sha`` is HEAD when the anchors were taken. A check then needs to hash
only the files git says changed since that commit (``git diff --name-only``,
which includes uncommitted edits), or every anchored file outside git.

* content differs -> ``needs_review`` = 1 and confidence reduced in proportion to
  how much changed (line diff against the anchored commit's blob, read through
  one ``git cat-file --batch`` process), then re-anchored so the next check does
  not punish the same change twice;
* file deleted -> ``stale_at`` set.

``injection_policy`` decides how a stale or unreviewed memory is injected.
"""

from __future__ import annotations

import enum
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from desktop.digests import sha256
from desktop.memory.store.writer import Tx, WriteOp
from desktop.memory.types import Memory

log = logging.getLogger("engram.lifecycle")

# A full rewrite of the anchored code halves confidence; smaller changes cost less.
MAX_REDUCTION = 0.5
CONFIDENCE_FLOOR = 0.05


class TrustLevel(enum.StrEnum):
    """How much an injection trusts memories that may be out of date."""

    STRICT = "strict"
    BALANCED = "balanced"
    PERMISSIVE = "permissive"


def injection_policy(memory: Memory, trust_level: str | TrustLevel = TrustLevel.BALANCED) -> str:
    """``"inject"``, ``"inject_marked_stale"`` or ``"withhold"`` for one memory at a trust level.

    strict withholds stale memories and candidates and marks unreviewed ones;
    balanced marks stale and unreviewed ones; permissive marks only stale ones.
    Deprecated memories are always withheld.
    """
    level = TrustLevel(str(trust_level))
    if memory.deprecated:
        return "withhold"
    if memory.stale_at:
        return "withhold" if level is TrustLevel.STRICT else "inject_marked_stale"
    if memory.candidate and level is TrustLevel.STRICT:
        return "withhold"
    if memory.needs_review and level is not TrustLevel.PERMISSIVE:
        return "inject_marked_stale"
    return "inject"


def split_anchor(key: str) -> tuple[str, tuple[int, int] | None]:
    """``"a.py#L3-9"`` -> (``"a.py"``, (3, 9)); a plain path has no range."""
    path, sep, rng = key.rpartition("#L")
    if sep and "-" in rng:
        a, _, b = rng.partition("-")
        if a.isdigit() and b.isdigit():
            return path, (int(a), int(b))
    return key, None


def _slice(data: bytes, rng: tuple[int, int] | None) -> bytes:
    if rng is None:
        return data
    lines = data.splitlines(keepends=True)
    return b"".join(lines[max(0, rng[0] - 1):rng[1]])


def anchor_hash(data: bytes, rng: tuple[int, int] | None = None, *, bulk: bool = False) -> str:
    """SHA-256 of a file's bytes or of a 1-based inclusive line range.

    ``bulk``: one of many in a row (anchoring, the staleness sweep). OpenSSL's SHA-256 is 4-6x the
    built-in's speed from 2 KB up, worth loading it (6-12 ms, once); a hook checks a few anchors
    and never loads it (``desktop.digests``). The digest is the same.
    """
    if bulk:
        import hashlib

        return hashlib.sha256(_slice(data, rng)).hexdigest()
    return sha256(_slice(data, rng)).hexdigest()


def _git(root: Path, *args: str, data: bytes | None = None) -> bytes | None:
    import subprocess  # here: a hook reads anchors (freshness.py) on every tool call and never runs git

    try:
        done = subprocess.run(["git", "-C", str(root), *args], input=data, capture_output=True,
                              timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("git %s failed: %s", args[0], exc)
        return None
    return done.stdout if done.returncode == 0 else None


def head_commit(root: Path) -> str | None:
    """HEAD of the repository at `root`, or None outside git / before the first commit."""
    out = _git(root, "rev-parse", "--verify", "-q", "HEAD")
    return out.decode().strip() if out else None


def compute_anchors(root: Path, keys: Iterable[str]) -> dict[str, str]:
    """Hash each anchor key (path or path#La-b, relative to `root`); missing files are skipped."""
    out: dict[str, str] = {}
    for key in keys:
        path, rng = split_anchor(key)
        try:
            out[key] = anchor_hash((root / path).read_bytes(), rng, bulk=True)
        except OSError:
            log.debug("cannot anchor %s: unreadable", key)
    return out


def anchor_memory(db: Any, memory_id: int, root: Path, keys: Iterable[str] | None = None) -> dict[str, str]:
    """Record the code a memory is about (its related files by default) and HEAD; waits for commit."""
    from desktop.memory.store.memory_ops import EditMemory

    if keys is None:
        row = db.reads.conn().execute("SELECT related_files FROM memories WHERE id=?", (memory_id,)).fetchall()
        keys = json.loads(row[0][0]) if row else []
    anchors = compute_anchors(root, keys)
    db.writer.run(EditMemory(memory_id, {"code_anchors": anchors, "commit_sha": head_commit(root)},
                             actor="engram", reason="anchored to the code it is about"))
    return anchors


class _BlobReader:
    """One ``git cat-file --batch`` process for every old blob a check needs."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def read_many(self, specs: list[str]) -> dict[str, bytes]:
        if not specs:
            return {}
        out = _git(self.root, "cat-file", "--batch", data=("\n".join(specs) + "\n").encode())
        result: dict[str, bytes] = {}
        if out is None:
            return result
        pos = 0
        for spec in specs:
            nl = out.find(b"\n", pos)
            if nl < 0:
                break
            header = out[pos:nl].split()
            pos = nl + 1
            if len(header) == 3 and header[1] == b"blob":
                size = int(header[2])
                result[spec] = out[pos:pos + size]
                pos += size + 1
        return result


def changed_fraction(old: bytes | None, new: bytes) -> float:
    """How much of the anchored code changed, 0..1, by lines (0.5 when the old text is unknown)."""
    if old is None:
        return 0.5
    import difflib

    a, b = old.splitlines(), new.splitlines()
    if not a and not b:
        return 0.0
    return 1.0 - difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


@dataclass
class StalenessReport:
    """Outcome of one check."""

    checked: int = 0
    files_hashed: int = 0
    changed: list[dict[str, Any]] = field(default_factory=list)
    stale: list[int] = field(default_factory=list)
    git: bool = False


def check_staleness(db: Any, root: Path | str, *, apply: bool = True) -> StalenessReport:
    """Compare every anchored live memory with the working tree; flag changed ones, mark deleted ones stale."""
    root = Path(root)
    rep = StalenessReport()
    rows = db.reads.conn().execute(
        "SELECT id, confidence, code_anchors, commit_sha FROM memories "
        "WHERE code_anchors <> '{}' AND deprecated = 0 AND stale_at IS NULL").fetchall()
    rep.checked = len(rows)
    rep.git = head_commit(root) is not None
    head = head_commit(root) if rep.git else None
    changed_since: dict[str, set[str] | None] = {}
    if rep.git:
        for commit in {r[3] for r in rows if r[3]}:
            out = _git(root, "diff", "--name-only", "--no-renames", "--relative", str(commit), "--")
            changed_since[commit] = set(out.decode("utf-8", "replace").splitlines()) if out is not None else None
        # Files git does not track are never in a diff: always hash them.
        untracked = _git(root, "ls-files", "--others", "--exclude-standard")
        extra = set(untracked.decode("utf-8", "replace").splitlines()) if untracked else set()
        for names in changed_since.values():
            if names is not None:
                names |= extra
    current: dict[str, bytes | None] = {}
    old_specs: dict[tuple[int, str], str] = {}
    pending: list[tuple[int, float, dict[str, str], list[tuple[str, str, bytes | None]]]] = []
    for mid, conf, anchors_json, commit in rows:
        anchors: dict[str, str] = json.loads(anchors_json)
        suspects = changed_since.get(commit) if commit else None
        diffs: list[tuple[str, str, bytes | None]] = []
        for key, digest in anchors.items():
            path, rng = split_anchor(key)
            if suspects is not None and path not in suspects:
                continue  # git says unchanged since the anchored commit: no need to hash
            if path not in current:
                try:
                    current[path] = (root / path).read_bytes()
                except OSError:
                    current[path] = None
                rep.files_hashed += 1
            data = current[path]
            if data is None:
                diffs.append((key, digest, None))
            elif anchor_hash(data, rng, bulk=True) != digest:
                diffs.append((key, digest, data))
                if rep.git and commit:
                    old_specs[(mid, key)] = f"{commit}:./{path}"
        if diffs:
            pending.append((mid, float(conf), anchors, diffs))
    blobs = _BlobReader(root).read_many(sorted(set(old_specs.values())))
    updates: list[dict[str, Any]] = []
    for mid, conf, anchors, diffs in pending:
        if any(d[2] is None for d in diffs):
            rep.stale.append(mid)
            updates.append({"id": mid, "stale": True, "files": [d[0] for d in diffs if d[2] is None]})
            continue
        fractions = []
        new_anchors = dict(anchors)
        for key, _digest, data in diffs:
            _path, rng = split_anchor(key)
            assert data is not None
            old = blobs.get(old_specs.get((mid, key), ""))
            fractions.append(changed_fraction(None if old is None else _slice(old, rng), _slice(data, rng)))
            new_anchors[key] = anchor_hash(data, rng, bulk=True)
        fraction = max(fractions)
        new_conf = max(CONFIDENCE_FLOOR, conf * (1.0 - MAX_REDUCTION * fraction))
        info = {"id": mid, "stale": False, "files": [d[0] for d in diffs], "fraction": round(fraction, 3),
                "confidence": [conf, round(new_conf, 4)], "anchors": new_anchors}
        rep.changed.append({k: v for k, v in info.items() if k != "anchors"})
        updates.append(info)
    if apply and updates:
        db.writer.run(ApplyStaleness(updates, head), 120)
    log.info("staleness: %d anchored, %d files hashed, %d changed, %d stale",
             rep.checked, rep.files_hashed, len(rep.changed), len(rep.stale))
    return rep


class ApplyStaleness(WriteOp[int]):
    """Write the outcome of a check: audit rows first, then flags, confidence and new anchors."""

    name: ClassVar[str] = "apply_staleness"

    def __init__(self, updates: list[dict[str, Any]], head: str | None) -> None:
        self.updates = updates
        self.head = head

    def apply(self, tx: Tx) -> int:
        """One executemany per kind of change."""
        stale = [u for u in self.updates if u["stale"]]
        changed = [u for u in self.updates if not u["stale"]]
        audit = [(tx.now, "engram", "stale", u["id"], "Code it is about was deleted: " + ", ".join(u["files"]),
                  json.dumps({"files": u["files"]})) for u in stale]
        audit += [(tx.now, "engram", "code_changed", u["id"],
                   f"{round(u['fraction'] * 100)}% of the code it is about changed ({', '.join(u['files'])}): "
                   f"confidence {u['confidence'][0]:.2f} -> {u['confidence'][1]:.2f}, needs review.",
                   json.dumps({"files": u["files"], "fraction": u["fraction"], "confidence": u["confidence"]}))
                  for u in changed]
        tx.audit_many(audit)
        tx.conn.executemany("UPDATE memories SET stale_at = ?, needs_review = 1, updated_at = ? WHERE id = ?",
                            [(tx.now, tx.now, u["id"]) for u in stale])
        tx.conn.executemany(
            "UPDATE memories SET needs_review = 1, confidence = ?, code_anchors = ?, "
            "commit_sha = coalesce(?, commit_sha), updated_at = ? WHERE id = ?",
            [(u["confidence"][1], json.dumps(u["anchors"]), self.head, tx.now, u["id"]) for u in changed])
        tx.changed("memory", "updated", [u["id"] for u in self.updates])
        tx.changed("audit", "added")
        return len(self.updates)
