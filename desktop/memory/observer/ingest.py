"""Learning from the agents people already use: import transcripts once, learn each session.

Idempotence has two layers. A file whose path, size, modification time and
content hash are already in ``imported_transcripts`` is skipped without being
parsed (and so is a byte-identical copy under another path). A file that changed
(a session that grew) is parsed again, but every event whose ``event_key`` is in
``observer_seen_events`` is dropped, so only the new part is learned; session
counts are not bumped twice for a session id learned before.

Sub-agents that ran in parallel under one parent have their scratchpads merged
with the quorum boost before promotion. Live sessions (Engram's own agent) use
:meth:`Ingestor.live`, which checkpoints the scratchpad every few steps and
restores it after a crash.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from desktop.memory.observer.continuation import as_root, recognise
from desktop.memory.observer.discover import find_transcripts
from desktop.memory.observer.events import AgentEvent, SessionStart
from desktop.memory.observer.observer import Observer, SessionDigest
from desktop.memory.observer.promotion import Promoter, PromotionResult
from desktop.memory.observer.records import TranscriptImportError
from desktop.memory.observer.scratchpad import Scratchpad, merge_parallel
from desktop.memory.observer.sniff import import_any
from desktop.memory.store.writer import FnOp, Tx, iso, utc_now

logger = logging.getLogger("engram.observer")


def file_hash(path: Path) -> str:
    """SHA-256 of a file's bytes (streamed)."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass
class IngestReport:
    """What importing one transcript did."""

    path: str
    status: str  # imported | empty (no agent records in it) | unchanged | duplicate | failed
    agent: str = ""
    sessions: int = 0
    events: int = 0
    new_events: int = 0
    added: int = 0
    reinforced: int = 0
    skipped_records: dict[str, int] = field(default_factory=dict)
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form for the CLI."""
        return dict(self.__dict__)


class CheckpointStore:
    """Scratchpad checkpoints in ``scratchpad_checkpoints`` (written through the writer)."""

    def __init__(self, db: Any) -> None:
        """Bind to one project database."""
        self.db = db

    def save(self, session_id: str, blob: bytes, *, wait: bool = True) -> None:
        """Store (replace) a session's checkpoint; with ``wait`` it is durable on return."""
        def write(tx: Tx) -> None:
            tx.execute("INSERT INTO scratchpad_checkpoints(session_id, saved_at, state) VALUES (?,?,?)"
                       " ON CONFLICT(session_id) DO UPDATE SET saved_at = excluded.saved_at,"
                       " state = excluded.state", (session_id, tx.now, blob))
        fut = self.db.writer.submit(FnOp("scratchpad_checkpoint", write))
        if wait:
            fut.result(60)

    def load(self, session_id: str) -> Scratchpad | None:
        """The last checkpointed scratchpad of a session, or None."""
        rows = self.db.reads.conn().execute(
            "SELECT state FROM scratchpad_checkpoints WHERE session_id = ?", (session_id,)).fetchall()
        if not rows:
            return None
        try:
            return Scratchpad.from_state(bytes(rows[0][0]))
        except (ValueError, KeyError, TypeError):
            logger.exception("checkpoint of %s is unreadable; starting over", session_id)
            return None

    def pending(self, *, older_than_s: float | None = None) -> list[str]:
        """Sessions with a checkpoint but no promotion (interrupted by a crash, or still running).

        With ``older_than_s``, only checkpoints not saved for that long: a hook-observed
        session running in another process checkpoints after every tool call.
        """
        if older_than_s is None:
            return [r[0] for r in self.db.reads.conn().execute(
                "SELECT session_id FROM scratchpad_checkpoints ORDER BY saved_at")]
        cutoff = iso(utc_now() - timedelta(seconds=older_than_s))
        return [r[0] for r in self.db.reads.conn().execute(
            "SELECT session_id FROM scratchpad_checkpoints WHERE saved_at < ? ORDER BY saved_at", (cutoff,))]


class Ingestor:
    """Imports transcripts and live sessions of one project and learns from each session."""

    def __init__(self, db: Any, promoter: Promoter, *, project_dir: Path | None = None,
                 synthesizer: Any | None = None) -> None:
        """``promoter`` carries the novelty filter and optional LLMs; ``synthesizer`` (a
        ``model_synthesis.ModelSynthesizer``, only when the user configured a model) writes
        candidate memories from each finished session's evidence."""
        self.db = db
        self.promoter = promoter
        self.project_dir = project_dir
        self.synthesizer = synthesizer
        self.checkpoints = CheckpointStore(db)

    # -- files --------------------------------------------------------------------------
    def ingest_project(self, home: Path | None = None) -> list[IngestReport]:
        """Import every transcript of the project found on disk, oldest first."""
        if self.project_dir is None:
            return []
        reports = [self.ingest_file(ref.path) for ref in find_transcripts(self.project_dir, home)]
        if self.synthesizer is not None:
            try:  # sessions imported while they ran have settled since: their one synthesis call
                self.synthesizer.sweep()
            except Exception:
                logger.exception("model synthesis sweep failed")
        return reports

    def ingest_file(self, path: Path | str, *, finished: bool = False) -> IngestReport:
        """Import one transcript (any supported format) unless it is already known.

        ``finished``: the session is known to be over (its agent said so: a session-end hook), so
        the model (when one is configured) synthesises it now instead of once it has settled.
        """
        path = Path(path)
        report = IngestReport(str(path), "failed")
        try:
            st = path.stat()
            conn = self.db.reads.conn()
            row = conn.execute("SELECT size, mtime, content_hash FROM imported_transcripts WHERE path = ?",
                               (str(path),)).fetchall()
            if row and int(row[0][0]) == st.st_size and abs(float(row[0][1]) - st.st_mtime) < 1e-6:
                report.status = "unchanged"
                return report
            digest = file_hash(path)
            if row and row[0][2] == digest:
                report.status = "unchanged"
                self._record(path, "", st, 0, digest)
                return report
            twin = conn.execute("SELECT path FROM imported_transcripts WHERE content_hash = ? AND path <> ?",
                                (digest, str(path))).fetchall()
            if twin:
                report.status = "duplicate"
                return report
            result = import_any(path)
        except TranscriptImportError as exc:
            report.error = exc.code
            return report
        except OSError as exc:
            report.error = "file_unreadable"
            logger.warning("cannot ingest %s: %s", path, exc)
            return report
        agent = next((e.agent for e in result.events if isinstance(e, SessionStart)), "unknown")
        results, fresh = self.learn_events(result.events, finished=finished)
        report.status, report.agent = "imported", agent
        report.sessions, report.events, report.new_events = len(result.sessions), len(result.events), fresh
        report.added = sum(len(r.added) for r in results)
        report.reinforced = sum(len(r.reinforced) for r in results)
        report.skipped_records = dict(result.skipped)
        if not result.events:
            # Readable, but nothing in it is a Claude Code, Codex or Gemini CLI record. Recorded
            # all the same, so it is not re-parsed until it changes.
            report.status, report.error = "empty", "no_agent_records"
        self._record(path, agent, st, len(result.events), digest)
        return report

    def _record(self, path: Path, agent: str, st: os.stat_result, events: int, digest: str) -> None:
        def write(tx: Tx) -> None:
            tx.execute("INSERT INTO imported_transcripts(path, agent, size, mtime, event_count, imported_at,"
                       " content_hash) VALUES (?,?,?,?,?,?,?) ON CONFLICT(path) DO UPDATE SET"
                       " size = excluded.size, mtime = excluded.mtime, content_hash = excluded.content_hash,"
                       " event_count = max(event_count, excluded.event_count), imported_at = excluded.imported_at,"
                       " agent = CASE WHEN excluded.agent = '' THEN agent ELSE excluded.agent END",
                       (str(path), agent, st.st_size, st.st_mtime, events, tx.now, digest))
        self.db.writer.run(FnOp("record_imported_transcript", write))

    # -- events -----------------------------------------------------------------------------
    def learn_events(self, events: Iterable[AgentEvent], *, finished: bool = False
                     ) -> tuple[list[PromotionResult], int]:
        """Observe and promote every session in ``events`` (skipping events learned before).

        Returns the promotion results and how many events were new. ``finished``: see ingest_file.
        """
        by_file_session: OrderedDict[str, list[AgentEvent]] = OrderedDict()
        for ev in events:
            by_file_session.setdefault(ev.session_id, []).append(ev)
        conn = self.db.reads.conn()
        # A transcript that continues a session learned before (a resume, a fork) is that
        # session: its copied part is skipped and the rest is learned under the first id.
        by_session: OrderedDict[str, list[AgentEvent]] = OrderedDict()
        copied: dict[str, list[str]] = {}
        roots: dict[str, tuple[str, int]] = {}
        for sid, evs in by_file_session.items():
            cont = recognise(conn, sid, evs)
            if cont.root != sid:
                evs, skipped = as_root(evs, cont)
                copied.setdefault(cont.root, []).extend(skipped)
                roots.setdefault(cont.root, (sid, cont.shared))
            by_session.setdefault(cont.root, []).extend(evs)
        observers: dict[str, tuple[Observer, list[str]]] = {}
        fresh_total = 0
        for sid, evs in by_session.items():
            seen = {r[0] for r in conn.execute("SELECT event_key FROM observer_seen_events WHERE session_id = ?",
                                               (sid,))}
            fresh = [e for e in evs if e.event_key not in seen]
            skipped = [k for k in copied.get(sid, []) if k not in seen]
            if not fresh and not skipped:
                continue
            obs = Observer(sid)
            start = next((e for e in evs if isinstance(e, SessionStart)), None)
            if start is not None and (start.event_key in seen or sid in roots):
                obs.observe(start)  # session metadata for a continuation; not a new fact
            for ev in fresh:
                if ev is not start or sid not in roots:
                    obs.observe(ev)
            observers[sid] = (obs, [e.event_key for e in fresh if e.event_key] + skipped)
            fresh_total += len(fresh)
        digests = {sid: obs.finalize() for sid, (obs, _) in observers.items()}
        self._merge_parallel(observers, digests)
        order = sorted(digests, key=lambda s: digests[s].started_at)
        results = [self.promoter.promote(digests[sid], event_keys=observers[sid][1],
                                         continued=roots.get(sid)) for sid in order]
        for sid in order:
            self._synthesize(digests[sid], finished=finished)
        return results, fresh_total

    def learn_digest(self, digest: SessionDigest, *, event_keys: list[str] | None = None) -> PromotionResult:
        """Promote one finished session's digest, then let the model (if any) synthesise from it.

        Every door that finishes a session (own agent, external CLI runs, parallel groups)
        goes through here, so model synthesis sees all of them.
        """
        result = self.promoter.promote(digest, event_keys=event_keys)
        self._synthesize(digest, finished=True)
        return result

    def _synthesize(self, digest: SessionDigest, *, finished: bool = False) -> None:
        """The model's pass over a session, when one is configured (never fails learning)."""
        if self.synthesizer is None:
            return
        try:
            self.synthesizer.after_session(digest, finished=finished)
        except Exception:
            logger.exception("model synthesis failed for %s", digest.session_id)

    def _merge_parallel(self, observers: dict[str, tuple[Observer, list[str]]],
                        digests: dict[str, SessionDigest]) -> None:
        """Parallel sub-agents of one parent: quorum-confirmed signals go to the parent's digest."""
        children: dict[str, list[str]] = {}
        for sid, d in digests.items():
            if d.parent_session_id:
                children.setdefault(d.parent_session_id, []).append(sid)
        for parent, kids in children.items():
            if len(kids) < 2:
                continue
            target = digests.get(parent) or digests[kids[0]]
            known = {s.key for s in target.signals}
            for merged in merge_parallel([observers[k][0].sp for k in kids]):
                if merged.quorum >= 2 and merged.signal.key not in known:
                    merged.signal.data["min_sessions"] = merged.min_sessions
                    target.signals.append(merged.signal)

    # -- live sessions --------------------------------------------------------------------
    def live(self, session_id: str, *, checkpoint_every: int = 10) -> Observer:
        """An observer for a running session, checkpointed every few steps, restored after a crash."""
        restored = self.checkpoints.load(session_id)
        if restored is not None:
            logger.info("restored scratchpad of %s at step %d", session_id, restored.step)
        return Observer(session_id, scratchpad=restored, checkpointer=self.checkpoints.save,
                        checkpoint_every=checkpoint_every)

    def finish(self, observer: Observer, outcome: str | None = None) -> PromotionResult:
        """Finalize and promote a live session (its checkpoint is dropped in the same write)."""
        return self.learn_digest(observer.finalize(outcome))

    def recover(self, *, older_than_s: float | None = None) -> list[PromotionResult]:
        """Promote every session a crash left with only a checkpoint or a journal (outcome unknown).

        ``older_than_s`` leaves alone checkpoints saved more recently (sessions that may still run).
        """
        from desktop.memory.observer import journal

        out = []
        sessions = self.checkpoints.pending(older_than_s=older_than_s)
        sessions += [s for s in journal.pending(self.db, older_than_s=older_than_s) if s not in sessions]
        for sid in sessions:
            pad = self.checkpoints.load(sid)
            obs, _ = journal.catch_up(self.db, sid, pad)
            if obs is not None:
                out.append(self.promoter.promote(obs.finalize("unknown")))
        return out
