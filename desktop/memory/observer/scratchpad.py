"""The per-session scratchpad: bounded in-memory analytics, checkpoints, parallel merge.

The observer never touches the database while a session runs; everything it
learns lives here until the session ends. Every structure is capped, so a
runaway session costs bounded memory: signals are evicted lowest value first
(the design's order: time anomalies, then file access, then sequences, then
co-access; self-corrections and parallel conflicts are never evicted), and the
analytics maps drop their least useful entries in amortised batches.

A scratchpad serialises to a compact blob (zlib'd JSON) so it can be
checkpointed at subtask boundaries and restored after a crash.
"""

from __future__ import annotations

import json
import logging
import zlib
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Final

from desktop.memory.observer.signals import (
    EVICTION_ORDER,
    PARALLEL_CONFLICT,
    SIGNAL_SPECS,
    USER_RULE,
    Signal,
    excerpt,
)
from desktop.memory.privacy.boundary import redact_stored

logger = logging.getLogger("engram.observer")

MAX_SIGNALS: Final = 3000
MAX_FILES: Final = 3000
MAX_PAIRS: Final = 8000
MAX_ERRORS: Final = 500
MAX_PATTERNS: Final = 1000
MAX_ACCESS_LOG: Final = 4000
MAX_SEQUENCE: Final = 600
MAX_FILE_OPS: Final = 500
CO_ACCESS_WINDOW: Final = 5
STATE_VERSION: Final = 1
#: Quorum: an observation made by two or more parallel agents needs one session, not three.
QUORUM_CONFIDENCE_BOOST: Final = 0.1


@dataclass(slots=True)
class FileStat:
    """What one session did with one file."""

    reads: int = 0
    edits: int = 0
    first_step: int = 0
    last_step: int = 0
    created: bool = False  # first touched by a Write: the agent made it, it did not need it
    first_ts: float = 0.0
    read_chars: int = 0


@dataclass(slots=True)
class ErrorStat:
    """One error fingerprint within a session."""

    tool: str
    message: str
    count: int = 1
    first_step: int = 0
    last_step: int = 0
    command: str = ""
    fix_files: list[str] = field(default_factory=list)
    resolved_how: str | None = None
    resolved_step: int | None = None


@dataclass
class Scratchpad:
    """Everything the observer keeps about one running session."""

    session_id: str
    agent: str = "unknown"
    session_type: str = "interactive"
    cwd: str = ""
    started_at: float = 0.0
    parent_session_id: str | None = None
    step: int = 0
    events: int = 0
    first_prompt: str = ""
    prompts: int = 0
    external_step: int | None = None
    output_shingles: set[int] = field(default_factory=set)
    """Hashed five-word windows of the session's tool outputs (see taint.py)."""
    saw_instruction: bool = False
    files: dict[str, FileStat] = field(default_factory=dict)
    recent_files: deque[tuple[str, int, float]] = field(default_factory=lambda: deque(maxlen=CO_ACCESS_WINDOW))
    pairs: dict[tuple[str, str], list[float]] = field(default_factory=dict)  # count, step Δ sum, a-first count
    access_log: deque[tuple[int, str]] = field(default_factory=lambda: deque(maxlen=MAX_ACCESS_LOG))
    edit_chain: dict[str, list[int]] = field(default_factory=dict)  # file -> [branch start, last edit]
    grep_counts: dict[str, int] = field(default_factory=dict)
    globs: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=5))
    errors: dict[str, ErrorStat] = field(default_factory=dict)
    open_errors: deque[str] = field(default_factory=lambda: deque(maxlen=3))
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    sequence: list[str] = field(default_factory=list)
    config_touched: set[str] = field(default_factory=set)
    edit_set: set[str] = field(default_factory=set)
    first_test_step: int | None = None
    first_impl_edit_step: int | None = None
    planned_steps: int | None = None
    expected_imports: deque[tuple[str, str, int]] = field(default_factory=lambda: deque(maxlen=40))
    durations: dict[str, list[float]] = field(default_factory=dict)  # tool -> [count, mean]
    read_chars_total: int = 0
    read_count: int = 0
    self_corrections: int = 0
    ev: dict[str, Any] = field(default_factory=dict)
    """Lesson state (observer/lessons.py): open errors with their edits, the last failed command."""
    early: dict[str, float] = field(default_factory=dict)
    signals: dict[str, Signal] = field(default_factory=dict)  # key -> signal (insertion ordered)
    evicted: int = 0
    removed: dict[str, int] = field(default_factory=dict)
    """Files (or folders, or rm globs) the session deleted, with the step; re-touching un-deletes."""
    moved: list[list[str]] = field(default_factory=list)
    """[old, new] paths the session renamed, in order."""
    evidence: dict[str, Any] = field(default_factory=dict)
    """User messages and commands with outcomes (``evidence.collect``), for model synthesis."""

    # -- signals -------------------------------------------------------------------------
    def add_signal(self, signal: Signal) -> Signal:
        """Add a signal or fold it into the one with the same key; evict when full."""
        if signal.kind not in SIGNAL_SPECS:
            raise ValueError(f"unknown signal kind {signal.kind}")
        users_words = signal.kind == USER_RULE or signal.data.get("source") == "user"
        if self.external_step is not None and signal.step > self.external_step and not users_words:
            signal.tainted = True  # what the user typed is their word, whatever the agent read before
        known = self.signals.get(signal.key)
        if known is not None:
            known.count += signal.count
            known.step = signal.step
            known.tainted = known.tainted or signal.tainted
            for f in signal.files:
                if f not in known.files and len(known.files) < 10:
                    known.files.append(f)
            if signal.evidence and len(known.evidence) < 4:
                known.evidence.append(signal.evidence[0])
            # Evidence links accumulate (a few per signal) instead of the last one winning.
            events = [*known.data.get("events", []), *signal.data.get("events", [])]
            known.data.update(signal.data)
            if events:
                known.data["events"] = list(dict.fromkeys(events))[:8]
            return known
        if len(self.signals) >= MAX_SIGNALS:
            self._evict()
        self.signals[signal.key] = signal
        return signal

    def _evict(self) -> None:
        """Drop a batch of the lowest-value signals (amortised: one scan frees 10%)."""
        need = max(1, MAX_SIGNALS // 10)
        for kind in EVICTION_ORDER:
            if need <= 0:
                break
            victims = [k for k, s in self.signals.items() if s.kind == kind][:need]
            for key in victims:
                del self.signals[key]
            need -= len(victims)
            self.evicted += len(victims)
        if need > 0:
            logger.warning("scratchpad %s full of never-evicted signals", self.session_id)

    def signals_of(self, kind: str) -> list[Signal]:
        """All kept signals of one kind."""
        return [s for s in self.signals.values() if s.kind == kind]

    def trim_maps(self) -> None:
        """Keep analytics maps bounded (called rarely; amortised constant per event)."""
        if len(self.pairs) > MAX_PAIRS:
            keep = sorted(self.pairs.items(), key=lambda kv: -kv[1][0])[: MAX_PAIRS * 3 // 4]
            self.pairs = dict(keep)
        if len(self.files) > MAX_FILES:
            keep_f = sorted(self.files.items(), key=lambda kv: -(kv[1].reads + kv[1].edits))
            self.files = dict(keep_f[: MAX_FILES * 3 // 4])
        if len(self.grep_counts) > MAX_PATTERNS:
            self.grep_counts = dict(sorted(self.grep_counts.items(), key=lambda kv: -kv[1])[: MAX_PATTERNS // 2])
        if len(self.errors) > MAX_ERRORS:
            self.errors = dict(sorted(self.errors.items(), key=lambda kv: -kv[1].count)[: MAX_ERRORS // 2])

    # -- persistence -----------------------------------------------------------------------
    def to_state(self) -> bytes:
        """Serialise to a compact blob for scratchpad_checkpoints."""
        d: dict[str, Any] = {
            "v": STATE_VERSION, "session_id": self.session_id, "agent": self.agent,
            "session_type": self.session_type, "cwd": self.cwd, "started_at": self.started_at,
            "parent": self.parent_session_id, "step": self.step, "events": self.events,
            "first_prompt": self.first_prompt, "prompts": self.prompts, "external_step": self.external_step,
            "files": {k: [v.reads, v.edits, v.first_step, v.last_step, v.created, v.first_ts, v.read_chars]
                      for k, v in self.files.items()},
            "recent_files": list(self.recent_files),
            "pairs": [[a, b, *v] for (a, b), v in self.pairs.items()],
            "access_log": list(self.access_log), "edit_chain": self.edit_chain,
            "grep_counts": self.grep_counts,
            "globs": [{**g, "paths": sorted(g["paths"])} for g in self.globs],
            "errors": {k: [e.tool, e.message, e.count, e.first_step, e.last_step, e.command, e.fix_files,
                           e.resolved_how, e.resolved_step] for k, e in self.errors.items()},
            "open_errors": list(self.open_errors), "pending": self.pending, "sequence": self.sequence,
            "config_touched": sorted(self.config_touched), "edit_set": sorted(self.edit_set),
            "first_test_step": self.first_test_step, "first_impl_edit_step": self.first_impl_edit_step,
            "planned_steps": self.planned_steps, "expected_imports": list(self.expected_imports),
            "durations": self.durations, "read_chars_total": self.read_chars_total,
            "read_count": self.read_count, "self_corrections": self.self_corrections,
            "early": self.early, "ev": self.ev, "signals": [s.to_dict() for s in self.signals.values()],
            "evicted": self.evicted, "removed": self.removed, "moved": self.moved,
            "evidence": self.evidence,
            "output_shingles": sorted(self.output_shingles), "saw_instruction": self.saw_instruction,
        }
        # The blob is stored in the database: commands, errors and prompts pass the same
        # secret redaction as every text column (the writer cannot see inside zlib).
        text = redact_stored(json.dumps(d, ensure_ascii=False))
        return zlib.compress(text.encode("utf-8", "surrogatepass"), 6)

    @classmethod
    def from_state(cls, blob: bytes) -> Scratchpad:
        """Restore a scratchpad saved by to_state."""
        d = json.loads(zlib.decompress(blob).decode("utf-8"))
        if d.get("v") != STATE_VERSION:
            raise ValueError(f"unknown scratchpad state version {d.get('v')}")
        sp = cls(d["session_id"], d["agent"], d["session_type"], d["cwd"], d["started_at"], d["parent"])
        sp.step, sp.events, sp.first_prompt, sp.prompts = d["step"], d["events"], d["first_prompt"], d["prompts"]
        sp.external_step = d["external_step"]
        sp.output_shingles = set(d.get("output_shingles", []))
        sp.saw_instruction = bool(d.get("saw_instruction", False))
        sp.files = {k: FileStat(*v) for k, v in d["files"].items()}
        sp.recent_files.extend(tuple(x) for x in d["recent_files"])
        sp.pairs = {(p[0], p[1]): list(p[2:]) for p in d["pairs"]}
        sp.access_log.extend((int(s), f) for s, f in d["access_log"])
        sp.edit_chain = {k: list(v) for k, v in d["edit_chain"].items()}
        sp.grep_counts = dict(d["grep_counts"])
        sp.globs.extend({**g, "paths": set(g["paths"])} for g in d["globs"])
        sp.errors = {k: ErrorStat(*v) for k, v in d["errors"].items()}
        sp.open_errors.extend(d["open_errors"])
        sp.pending, sp.sequence = d["pending"], d["sequence"]
        sp.config_touched, sp.edit_set = set(d["config_touched"]), set(d["edit_set"])
        sp.first_test_step, sp.first_impl_edit_step = d["first_test_step"], d["first_impl_edit_step"]
        sp.planned_steps = d["planned_steps"]
        sp.expected_imports.extend(tuple(x) for x in d["expected_imports"])
        sp.durations = d["durations"]
        sp.ev = dict(d.get("ev", {}))  # absent from checkpoints older than issue 13
        sp.read_chars_total, sp.read_count = d["read_chars_total"], d["read_count"]
        sp.self_corrections, sp.early, sp.evicted = d["self_corrections"], d["early"], d["evicted"]
        # Checkpoints written before file operations were tracked have neither key.
        sp.removed, sp.moved = dict(d.get("removed", {})), [list(m) for m in d.get("moved", [])]
        sp.evidence = dict(d.get("evidence", {}))
        for s in d["signals"]:
            sig = Signal.from_dict(s)
            sp.signals[sig.key] = sig
        return sp


@dataclass
class MergedSignal:
    """A signal after merging parallel sub-agent scratchpads."""

    signal: Signal
    quorum: int  # how many sub-agents observed it independently
    min_sessions: int  # the frequency threshold after the quorum rule


def merge_parallel(pads: list[Scratchpad]) -> list[MergedSignal]:
    """Merge the scratchpads of parallel sub-agents with the quorum boost.

    Identical observations (same signal key) from two or more sub-agents are one
    signal confirmed by a quorum: it needs one session instead of the class's usual
    minimum. Files edited by more than one sub-agent become parallel-conflict
    signals, which are never evicted.
    """
    by_key: dict[str, MergedSignal] = {}
    observers: dict[str, set[int]] = {}
    for idx, pad in enumerate(pads):
        for sig in pad.signals.values():
            observers.setdefault(sig.key, set()).add(idx)
            if sig.key in by_key:
                merged = by_key[sig.key].signal
                merged.count += sig.count
                merged.tainted = merged.tainted or sig.tainted
                merged.evidence.extend(sig.evidence[: max(0, 4 - len(merged.evidence))])
            else:
                copy = Signal.from_dict(sig.to_dict())
                by_key[sig.key] = MergedSignal(copy, 1, SIGNAL_SPECS[sig.kind].min_sessions)
    for key, observer_idxs in observers.items():
        m = by_key[key]
        m.quorum = len(observer_idxs)
        if m.quorum >= 2:
            m.min_sessions = 1
            m.signal.data["quorum"] = m.quorum
    editors: dict[str, list[str]] = {}
    for pad in pads:
        for path in pad.edit_set:
            editors.setdefault(path, []).append(pad.session_id)
    for path, editor_ids in editors.items():
        if len(editor_ids) >= 2:
            sig = Signal(PARALLEL_CONFLICT, f"{PARALLEL_CONFLICT}:{path}", 0, [path],
                         {"agents": editor_ids}, [excerpt(f"{path} edited by {len(editor_ids)} parallel sub-agents")])
            by_key[sig.key] = MergedSignal(sig, len(editor_ids), 1)
    return list(by_key.values())
