"""Promotion at session end: from a session digest to memories, in one write.

Pipeline (reference design section 5): the candidates (``candidates``: session-type gate,
validation, frequency, rendering, trust, scoring, cap; a model's memories come from
``model_synthesis``, when the user chose one); then what must never be stored, what the agent is
told already, the recipe a purpose already has (``supersede``), and novelty (cosine > 0.88 to a
live memory reinforces it). All reads and the single embedding batch happen first; then ONE WriteOp writes
the memories through AddMemories (same code path, same redaction) together with
the cross-session tables, so a session's learning is committed atomically.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final

from desktop.memory.observer import cross_session as xs
from desktop.memory.observer.asked_tests import reword_review
from desktop.memory.observer.candidates import EXACT_KINDS, build_candidates, error_signals, to_new_memory
from desktop.memory.observer.contradictions import (
    Contradiction,
    annotation_contradicted,
    contradicted,
    declined_contradicted,
    retire,
    tool_contradicted,
)
from desktop.memory.observer.harness import is_noise
from desktop.memory.observer.known_already import already_told, instructions_seen, runs_unprompted
from desktop.memory.observer.observer import SessionDigest
from desktop.memory.observer.renames import apply_file_ops
from desktop.memory.observer.signals import REVIEWED_TESTS
from desktop.memory.observer.supersede import less_used_ways, supersede_recipes
from desktop.memory.observer.synthesis import SynthesisPlan, plan_synthesis
from desktop.memory.store.live import LIVE_SQL
from desktop.memory.store.memory_ops import AddMemories, AddResult, NewMemory
from desktop.memory.store.writer import Tx, WriteOp
from desktop.memory.trust_levels import PromotionPreset, promotion_preset
from desktop.memory.types import MemorySource

logger = logging.getLogger("engram.observer")
#: The history reason of a memory the observer added or reinforced (the app words it from this code).
LEARNED_REASON: Final = "learned from a session"

@dataclass
class PromotionResult:
    """What one session's promotion did."""

    session_id: str
    added: list[int] = field(default_factory=list)
    reinforced: list[int] = field(default_factory=list)
    considered: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    timings_ms: dict[str, float] = field(default_factory=dict)
    preset: str = ""
    """The promotion preset the session was promoted with."""


def _same_lesson(conn: Any, items: list[NewMemory], keys: list[str]) -> int:
    """A lesson learned again under the same signal key reinforces the memory it became, even
    when this session's example reads differently (another line number, another file): its
    text is replaced by the live memory's, which the store then reinforces. Returns how many."""
    wanted = [k for k in keys if k]
    if not wanted:
        return 0
    found: dict[str, str] = {}
    for i in range(0, len(wanted), 400):
        chunk = wanted[i:i + 400]
        found.update({str(k): str(c) for k, c in conn.execute(
            "SELECT s.signal_key, m.content FROM observer_signal_counts s JOIN memories m ON m.id = s.memory_id "
            f"WHERE m.deprecated = 0 AND s.signal_key IN ({','.join('?' * len(chunk))})", chunk)})
    hits = 0
    for it, key in zip(items, keys, strict=True):
        if key in found and it.content != found[key]:
            it.content = found[key]
            hits += 1
    return hits


class PromoteSession(WriteOp[PromotionResult]):
    """The one write of a session: memories (via AddMemories) plus every observer table."""

    name: ClassVar[str] = "observer_promote_session"

    def __init__(self, digest: SessionDigest, items: list[NewMemory], keys: list[str], *,
                 signal_keys: list[str], first_time: bool, event_keys: list[str],
                 synthesis: SynthesisPlan | None = None, continued: tuple[str, int] | None = None,
                 counts: dict[str, int], contradicted: list[Contradiction] | None = None) -> None:
        """Validate the memories now (outside the writer thread). ``continued``: (transcript session
        id, shared prints) when this digest is that transcript continuing ``digest.session_id``;
        ``contradicted``: lessons this session's successful commands proved wrong (retired here);
        ``counts``: this session's lessons with the sessions that showed them, this one counted."""
        self.digest = digest
        self.continued = continued
        # Evidence links go to memory_evidence, not into the memory's metadata.
        self.evidence = [(it.metadata.pop("events", []), str(it.metadata.get("signal", ""))) for it in items]
        # A recipe's purpose: the newest working recipe for it retires the older (``supersede``).
        self.purposes = [str(it.metadata.get("purpose", "")) for it in items]
        # Only what evidence promoted may end the quarantine of the memory it reinforces.
        self.promoted = [bool(it.metadata.get("promoted_on")) for it in items]
        self.add = AddMemories(items, actor="observer", reason=LEARNED_REASON) if items else None
        self.keys = keys
        self.signal_keys = signal_keys
        self.counts = counts
        self.first_time = first_time
        self.event_keys = event_keys
        self.synthesis = synthesis
        self.contradicted = contradicted or []

    def apply(self, tx: Tx) -> PromotionResult:
        """Write memories, cross-session state, seen event keys; drop the session's checkpoint."""
        res = PromotionResult(self.digest.session_id)
        results: list[AddResult] = self.add.apply(tx) if self.add else []
        for r in results:
            (res.added if r.created else res.reinforced).append(r.id)
        sid = self.digest.session_id
        for r, (events, signal), promoted in zip(results, self.evidence, self.promoted, strict=False):
            for key in events:
                tx.execute("INSERT OR IGNORE INTO memory_evidence(memory_id, event_key, session_id, signal, added_at)"
                           " VALUES (?,?,?,?,?)", (r.id, key, sid, signal, tx.now))
            if not r.created and signal == REVIEWED_TESTS:
                reword_review(tx, r.id)
            if not r.created and promoted:
                # The same lesson learned in another session: a candidate becomes a memory.
                tx.execute("UPDATE memories SET candidate = 0 WHERE id = ? AND candidate = 1 AND source = ?"
                           " AND coalesce(session_id, '') <> ? AND needs_review = 0",
                           (r.id, MemorySource.OBSERVER_INFERRED.value, sid))
        supersede_recipes(tx, [(r.id, signal, goal, key) for r, (_, signal), goal, key
                               in zip(results, self.evidence, self.purposes, self.keys, strict=False) if goal],
                          now=self.counts, started=xs.ts_iso(self.digest.started_at))
        created = [p for p, f in self.digest.files.items() if f.get("created")]
        apply_file_ops(tx, list(self.digest.moved), list(self.digest.removed), created)
        xs.apply_session(tx, self.digest, signal_keys=self.signal_keys, first_time=self.first_time)
        for key, r in zip(self.keys, results, strict=False):
            if key:
                tx.execute("UPDATE observer_signal_counts SET memory_id = ? WHERE signal_key = ?", (r.id, key))
        for key in self.event_keys:
            tx.execute("INSERT OR IGNORE INTO observer_seen_events(event_key, session_id) VALUES (?,?)",
                       (key, self.digest.session_id))
        tx.conn.executemany("INSERT OR IGNORE INTO observer_event_prints(print, session_id) VALUES (?,?)",
                            [(p, sid) for p in self.digest.prints if p])
        if self.continued is not None:
            tx.execute("INSERT INTO observer_session_roots(session_id, root_id, shared) VALUES (?,?,?)"
                       " ON CONFLICT(session_id) DO UPDATE SET shared = max(shared, excluded.shared)",
                       (self.continued[0], sid, self.continued[1]))
        if self.synthesis is not None:
            for module, trigger, produced in self.synthesis.log:
                tx.execute("INSERT OR IGNORE INTO observer_synthesis_log(module, project_id, trigger_count,"
                           " synthesized_at, memories_generated) VALUES (?,?,?,?,?)",
                           (module, tx.project_id, trigger, int(tx.now_dt.timestamp()), produced))
        retire(tx, self.digest.session_id, self.contradicted)
        tx.execute("DELETE FROM scratchpad_checkpoints WHERE session_id = ?", (self.digest.session_id,))
        tx.execute("DELETE FROM hook_journal WHERE session_id = ?", (self.digest.session_id,))
        return res


class Promoter:
    """Runs the promotion pipeline for finished sessions of one project database."""

    def __init__(self, db: Any, *, novelty: Any | None = None,
                 preset: PromotionPreset | Callable[[], PromotionPreset] | None = None,
                 root: Path | None = None) -> None:
        """``novelty`` is a :class:`Novelty` (None: exact duplicates only); ``root`` the project's
        folder, whose agent instruction files say what need not be learned.

        ``preset`` is a fixed preset or a function asked at every promotion (every project
        passes its trust settings' preset, so a change reaches a long-running service).
        """
        self.db = db
        self.novelty = novelty
        self._preset = preset
        self.root = root

    def preset(self) -> PromotionPreset:
        """The preset the next promotion uses (balanced when none was given or asking fails)."""
        source = self._preset
        if source is None or isinstance(source, PromotionPreset):
            return source or promotion_preset(None)
        try:
            return source()
        except Exception:  # a settings read must not cost the session its learning
            logger.exception("could not read the promotion preset; using balanced")
            return promotion_preset(None)

    def promote(self, digest: SessionDigest, *, event_keys: list[str] | None = None,
                wait: bool = True, continued: tuple[str, int] | None = None) -> PromotionResult | Any:
        """Promote one finished session. Returns the result (or the future with ``wait=False``).

        ``continued`` names the transcript (and its shared prints) that continued this session,
        when the digest is its new part (``continuation``)."""
        t0 = time.perf_counter()
        conn = self.db.reads.conn()
        first_time = not xs.session_known(conn, digest.session_id)
        sigs = [*digest.signals, *error_signals(digest)]
        signal_keys = [s.key for s in sigs]
        # A sub-agent's lessons are its parent session's evidence, not another session's.
        evidence_id = digest.parent_session_id or digest.session_id
        prior = xs.signal_session_counts(conn, signal_keys, evidence_id=evidence_id) if first_time else {}
        if not first_time:  # a grown transcript: counts already include this session
            prior = {k: max(0, v - 1) for k, v in xs.signal_session_counts(conn, signal_keys).items()}
        failed = digest.outcome in ("failure", "abandoned")
        preset = self.preset()
        cands = build_candidates(digest, prior, failed=failed, preset=preset)
        chosen = [c for c in cands if c.drop_reason is None]
        synth = plan_synthesis(conn, digest, first_time=first_time)
        t1 = time.perf_counter()
        items = [to_new_memory(c, digest) for c in chosen]
        keys = [c.signal.key for c in chosen]
        items.extend(synth.memories)
        keys.extend("" for _ in synth.memories)
        told = instructions_seen(self.root, digest.cwd)
        kept = [(it, k) for it, k in zip(items, keys, strict=True)
                if not is_noise(it) and not already_told(it, told) and not runs_unprompted(it)]
        items, keys = [it for it, _ in kept], [k for _, k in kept]
        # Each of this session's lessons counted with this session, as ``apply_session`` will count it.
        now = {k: prior.get(k, 0) + 1 for k in signal_keys}
        variant = less_used_ways(conn, items, keys, now, xs.ts_iso(digest.started_at))
        items, keys = [it for it, v in zip(items, variant, strict=True) if not v], \
            [k for k, v in zip(keys, variant, strict=True) if not v]
        same_lesson = _same_lesson(conn, items, keys)
        items, keys, reinforced_by_novelty = self._novelty(conn, items, keys)
        t2 = time.perf_counter()
        proved_wrong = contradicted(conn, digest.session_id, digest.succeeded) + \
            annotation_contradicted(conn, digest.session_id, digest.unused_suppressions) + \
            tool_contradicted(conn, digest.session_id, digest.tool_calls_ok) + \
            declined_contradicted(conn, digest.session_id, digest.declined)
        op = PromoteSession(digest, items, keys, signal_keys=signal_keys if first_time else [],
                            first_time=first_time, event_keys=event_keys or [], synthesis=synth,
                            continued=continued, contradicted=proved_wrong, counts=now)
        fut = self.db.writer.submit(op)
        if not wait:
            return fut
        res: PromotionResult = fut.result(120)
        res.considered = len(cands)
        res.preset = preset.name
        res.dropped = Counter(c.drop_reason for c in cands if c.drop_reason)
        res.dropped["novelty_reinforced"] = reinforced_by_novelty
        res.dropped["same_lesson_reinforced"] = same_lesson
        res.timings_ms = {"filter": (t1 - t0) * 1000, "novelty": (t2 - t1) * 1000,
                          "write": (time.perf_counter() - t2) * 1000}
        return res

    def _novelty(self, conn: Any, items: list[NewMemory], keys: list[str]
                 ) -> tuple[list[NewMemory], list[str], int]:
        """Replace near-duplicates by the existing memory's text (AddMemories then reinforces it)."""
        if self.novelty is None or not items:
            return items, keys, 0
        types = sorted({it.type for it in items})
        existing: list[tuple[int, str]] = []
        for t in types:
            existing.extend((int(i), str(c)) for i, c in conn.execute(
                f"SELECT id, content FROM memories WHERE type = ? AND {LIVE_SQL} ORDER BY id DESC LIMIT 400",
                (t,)))
        by_id = dict(existing)
        matches = self.novelty.match([it.content for it in items], existing)
        kept: list[NewMemory] = []
        kept_keys: list[str] = []
        folded = 0
        for it, key, m in zip(items, keys, matches, strict=True):
            if m is not None and it.metadata.get("signal") in EXACT_KINDS:
                m = None  # "mise run test" and "mise run test:ci" read alike but are two recipes
            if m is None:
                kept.append(it)
                kept_keys.append(key)
            elif m >= 0:
                it.content = by_id[m]  # same fingerprint: the store reinforces the live memory
                kept.append(it)
                kept_keys.append(key)
                folded += 1
            else:
                folded += 1  # repeats another candidate of this session: one memory is enough
        return kept, kept_keys, folded
