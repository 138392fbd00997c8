"""Reinforcement from use: access counts, cited/flagged feedback, confirmation by a person.

:func:`record_feedback` is the one entry point every door calls (Engram's agent at
session end, the MCP server when it shows memories, hooks after a Claude Code turn,
the CLI). An outcome per memory -- shown, cited, flagged, confirmed or ignored (shown,
and the answer is known, but not cited) -- is written to the memory's history as a
``use`` entry, then the rules below move it.

A use *counts* only for a memory Engram showed to that session (the injection ledger,
:mod:`shown`, says so). A memory an agent found by its own search, recorded itself or
merely names in its reply gets its history entry and nothing else: an agent cannot
promote what it wrote by citing it, by searching for it over and over, or by naming
a session it was never part of. For a counted use:

* ``access_count``, ``uses_since_correction`` and ``last_accessed_at`` (which resets
  decay) move.
* Each 5th use without a correction adds 0.05 confidence, and a citation adds 0.05,
  up to the memory's evidence ceiling (:func:`desktop.memory.trust.evidence_ceiling`:
  0.95 for the user's word and what evidence promoted, the agent cap 0.7 for an
  agent's or a file's word); a memory already above it is never lowered. A content
  edit is a correction (a trigger resets the count).

Use never ends a quarantine and never clears a review flag: candidates and memories
waiting for review are never injected, and only a person (or independent evidence at
promotion) lifts them. Feedback from a person or a correction:

* flagged: weakened (-0.1, floor 0.05), its uncorrected-use count resets and it is
  marked for review;
* confirmed (only a person can confirm): strengthened like a citation (up to 0.95),
  out of quarantine and review.

Every automatic change writes an audit row (actor ``engram``) with its reason,
set-based, in the same op as the change.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, ClassVar

from desktop.memory.citations import cited_ids
from desktop.memory.lifecycle.shown import counted_before, shown_in_session
from desktop.memory.store.live import LIVE_SQL
from desktop.memory.store.writer import Tx, WriteOp
from desktop.memory.trust import CAP, CEILING_SQL, NotAllowedError, is_agent

ACTOR = "engram"
REINFORCE_EVERY = 5
STEP = 0.05
FLAG_PENALTY = 0.10
FLOOR = 0.05


class Outcome(enum.StrEnum):
    """What happened to a memory an agent was given (the ``use`` history entry says which)."""

    SHOWN = "shown"          # given to an agent; whether it helped is not known (MCP search)
    CITED = "cited"          # the agent cited it: it helped
    FLAGGED = "flagged"      # someone said it is wrong
    CONFIRMED = "confirmed"  # someone said it is right
    IGNORED = "ignored"      # given, the answer is known, and it was not cited


_WORDS = {Outcome.SHOWN: "shown to an agent", Outcome.CITED: "shown and cited",
          Outcome.FLAGGED: "flagged as wrong", Outcome.CONFIRMED: "confirmed as right",
          Outcome.IGNORED: "shown, not cited"}


@dataclass
class FeedbackReport:
    """What one feedback op changed."""

    used: int = 0
    counted: list[int] = field(default_factory=list)
    reinforced: list[int] = field(default_factory=list)
    confirmed: list[int] = field(default_factory=list)
    helped: list[int] = field(default_factory=list)
    flagged: list[int] = field(default_factory=list)
    outcomes: dict[int, str] = field(default_factory=dict)


def _temp(tx: Tx, name: str, ids: Iterable[int]) -> int:
    tx.execute(f"CREATE TEMP TABLE IF NOT EXISTS {name}(id INTEGER PRIMARY KEY)")
    tx.execute(f"DELETE FROM temp.{name}")
    rows = [(int(i),) for i in set(ids)]
    tx.conn.executemany(f"INSERT INTO temp.{name}(id) VALUES (?)", rows)
    return len(rows)


def _ids(tx: Tx, sql: str, params: Any = ()) -> list[int]:
    return [int(r[0]) for r in tx.execute(sql, params)]


class RecordUse(WriteOp[FeedbackReport]):
    """Memories were used (injected/shown); some helped (cited), some were flagged wrong."""

    name: ClassVar[str] = "record_use"

    def __init__(self, used: Iterable[int] = (), *, helped: Iterable[int] = (),
                 flagged: Iterable[int] = (), confirmed: Iterable[int] = (), judged: bool = False,
                 session_id: str | None = None, source: str | None = None,
                 actor: str = ACTOR, reason: str | None = None) -> None:
        """``judged``: the answer is known, so a used memory neither cited nor flagged was ignored.

        ``session_id`` is the session the memories were shown to: only the ids the injection
        ledger holds for it count as uses (see the module docstring).
        """
        if is_agent(actor) and set(confirmed):
            raise NotAllowedError("Only the user can confirm a memory.")
        self.flagged = sorted(set(flagged))
        self.confirmed = sorted(set(confirmed) - set(self.flagged))
        self.helped = sorted((set(helped) | set(self.confirmed)) - set(self.flagged))
        # Citing, confirming or flagging a memory means it was used.
        self.used = sorted(set(used) | set(self.helped) | set(self.flagged))
        self.judged = judged or bool(self.helped or self.flagged)
        self.session_id = session_id
        self.source = source
        self.actor = actor
        self.reason = reason

    def outcome(self, mid: int) -> Outcome:
        """The history outcome of one used memory."""
        if mid in self.flagged:
            return Outcome.FLAGGED
        if mid in self.confirmed:
            return Outcome.CONFIRMED
        if mid in self.helped:
            return Outcome.CITED
        return Outcome.IGNORED if self.judged else Outcome.SHOWN

    def apply(self, tx: Tx) -> FeedbackReport:
        """Write every use to history; move only the uses the session was shown, then apply feedback."""
        rep = FeedbackReport()
        if not self.used:
            return rep
        rep.used = _temp(tx, "_used", self.used)
        # Shown to this session, and not already counted for it (a report repeated is one use).
        shown = shown_in_session(tx, self.session_id, self.used) - counted_before(tx, self.session_id, self.used)
        self._history(tx, rep, shown)
        # Flagged memories are corrections, not uncorrected uses: handled below.
        rep.counted = sorted(shown - set(self.flagged))
        _temp(tx, "_counted", rep.counted)
        live = f"id IN (SELECT id FROM temp._counted) AND {LIVE_SQL}"
        tx.execute(f"UPDATE memories SET access_count = access_count + 1, "
                   f"uses_since_correction = uses_since_correction + 1, last_accessed_at = ? WHERE {live}",
                   (tx.now,))
        rep.reinforced = _ids(tx, f"SELECT id FROM memories WHERE {live} "
                                  f"AND uses_since_correction % {REINFORCE_EVERY} = 0 AND confidence < {CEILING_SQL}")
        if rep.reinforced:
            self._audit_set(tx, "reinforce", rep.reinforced,
                            f"printf('Used %d times without correction: confidence %.2f -> %.2f.', "
                            f"uses_since_correction, confidence, min({CEILING_SQL}, confidence + {STEP}))")
            self._update(tx, rep.reinforced, f"confidence = min({CEILING_SQL}, confidence + {STEP})")
        counted = set(rep.counted)
        helped = [i for i in self.helped if i in counted]
        if helped:
            rep.helped = helped
            raised = f"max(confidence, min({CEILING_SQL}, confidence + {STEP}))"
            self._audit_set(tx, "feedback", helped,
                            f"printf('Cited and helped: confidence %.2f -> %.2f.', confidence, {raised})")
            self._update(tx, helped, f"confidence = {raised}")
        if self.confirmed:  # a person's word: out of quarantine and review, strengthened up to the cap
            rep.confirmed = _ids(tx, f"SELECT id FROM memories WHERE id IN ({','.join('?' * len(self.confirmed))})"
                                     f" AND {LIVE_SQL}", self.confirmed)
            if rep.confirmed:
                raised = f"max(confidence, min({CAP}, confidence + {STEP}))"
                self._audit_set(tx, "confirm", rep.confirmed,
                                f"printf('Confirmed by a person: confidence %.2f -> %.2f, quarantine and review "
                                f"ended.', confidence, {raised})")
                self._update(tx, rep.confirmed, f"confidence = {raised}, candidate = 0, needs_review = 0")
        if self.flagged:
            rep.flagged = self.flagged
            self._audit_set(tx, "feedback", self.flagged,
                            f"printf('Flagged as wrong: confidence %.2f -> %.2f, needs review.', confidence, "
                            f"max({FLOOR}, confidence - {FLAG_PENALTY}))")
            self._update(tx, self.flagged, f"confidence = max({FLOOR}, confidence - {FLAG_PENALTY}), "
                                           "needs_review = 1, uses_since_correction = 0")
        if rep.counted:
            tx.changed("memory", "accessed", rep.counted)
        changed = set(rep.reinforced) | set(rep.helped) | set(rep.confirmed) | set(self.flagged)
        if changed:
            tx.changed("memory", "updated", changed)
        return rep

    def _history(self, tx: Tx, rep: FeedbackReport, shown: set[int]) -> None:
        """One ``use`` entry per live memory: the outcome, where, in which session, and whether it counted."""
        live = {int(r[0]) for r in tx.execute(
            f"SELECT id FROM memories WHERE id IN (SELECT id FROM temp._used) AND {LIVE_SQL}")}
        where = f" via {self.source}" if self.source else ""
        session = f" in session {self.session_id}" if self.session_id else ""
        rows = []
        for mid in sorted(live):
            outcome = self.outcome(mid)
            rep.outcomes[mid] = outcome.value
            detail = {"outcome": outcome.value, "session": self.session_id, "source": self.source,
                      "counted": mid in shown}
            rows.append((tx.now, self.actor, "use", mid, f"{_WORDS[outcome].capitalize()}{where}{session}.",
                         json.dumps(detail, ensure_ascii=False)))
        if rows:  # one batch: this runs on every injection
            tx.audit_many(rows)

    def _audit_set(self, tx: Tx, action: str, ids: list[int], reason_sql: str) -> None:
        _temp(tx, "_fb", ids)
        extra = f" ({self.reason})" if self.reason else ""
        tx.audit_from(f"SELECT ?, ?, ?, id, {reason_sql} || ?, json_object('confidence', confidence, "
                      f"'access_count', access_count) FROM memories WHERE id IN (SELECT id FROM temp._fb)",
                      (tx.now, self.actor, action, extra))

    def _update(self, tx: Tx, ids: list[int], sets: str) -> None:
        _temp(tx, "_fb", ids)
        tx.execute(f"UPDATE memories SET {sets}, updated_at = ? WHERE id IN (SELECT id FROM temp._fb)",
                   (tx.now,))


def record_feedback(db: Any, shown: Iterable[int] = (), *, answer_text: str | None = None,
                    cited: Iterable[int] = (), flagged: Iterable[int] = (), confirmed: Iterable[int] = (),
                    judged: bool | None = None, session_id: str | None = None, source: str | None = None,
                    actor: str = ACTOR, reason: str | None = None) -> Future[FeedbackReport]:
    """THE way any door reports what happened to memories it gave an agent; returns at once.

    ``shown``: ids given to the agent (injected, returned by a search). ``answer_text``:
    the agent's answer, whose ``[Memory #id: ...]`` citations count as cited. When the
    answer is known (``judged``, default: an answer or citations were given) a shown
    memory that was not cited is recorded as ignored. Only the ids the injection ledger
    holds for ``session_id`` count as uses; every id gets its history entry. Hooks call
    this after a turn with the reply's citations; Engram's agent at session end; the MCP
    server on a search (no session: history only).
    """
    helped = set(cited) | set(cited_ids(answer_text) if answer_text else [])
    known = judged if judged is not None else (answer_text is not None or bool(helped))
    return db.writer.submit(RecordUse(shown, helped=helped, flagged=flagged, confirmed=confirmed, judged=known,
                                      session_id=session_id, source=source, actor=actor, reason=reason))


def record_use(db: Any, used: Iterable[int], *, answer_text: str | None = None,
               flagged: Iterable[int] = ()) -> Future[FeedbackReport]:
    """Record that `used` memories were given to an agent outside any session (history only)."""
    return record_feedback(db, used, answer_text=answer_text, flagged=flagged)


def flag_wrong(db: Any, memory_id: int, *, reason: str | None = None, actor: str = "user"
               ) -> Future[FeedbackReport]:
    """Someone said a memory was wrong: weaken it and mark it for review."""
    return record_feedback(db, flagged=[memory_id], actor=actor, reason=reason)


def confirm_right(db: Any, memory_id: int, *, reason: str | None = None, actor: str = "user"
                  ) -> Future[FeedbackReport]:
    """A person said a memory is right: strengthen it, end quarantine and review (agents may not)."""
    return record_feedback(db, confirmed=[memory_id], actor=actor, reason=reason)
