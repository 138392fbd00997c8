"""Memories written by a language model from a session's evidence, when the user has one.

Off unless a model is configured: the composition root injects a :class:`JSONModel`
(Ollama, an OpenAI-compatible API or Anthropic, wrapped by
``desktop.agents.json_model``); this module never imports a provider. Two passes:

* after each finished session, one call turns its :class:`SessionEvidence` into at
  most :data:`MAX_MEMORIES` memories;
* every :data:`CONSOLIDATE_EVERY` sessions, a consolidation call reads the evidence of
  the recent sessions and the model's earlier candidates and returns at most a
  handful of merged, generalised memories (a lesson seen in several sessions).

The reply must be JSON matching :data:`REPLY_SCHEMA` exactly (no extra keys, no
wrong types); anything else is rejected whole. Each memory is then *grounded*:
every file, command and value it declares, every `code span` and every path-like
word of its text must occur in the evidence, or the memory is dropped — a model
that invents a file or a command teaches nothing. What survives is stored as a
candidate needing review (never injected until confirmed or reinforced).
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Final, Protocol

import jsonschema

from desktop.memory.observer.evidence import CommandRun, SessionEvidence
from desktop.memory.observer.observer import SessionDigest
from desktop.memory.store.live import LIVE_SQL
from desktop.memory.store.memory_ops import AddMemories, NewMemory
from desktop.memory.store.writer import FnOp, Tx
from desktop.memory.types import MemoryScope, MemorySource, MemoryType

logger = logging.getLogger("engram.observer")

MAX_MEMORIES: Final = 5
#: A transcript that has not grown for this long is a finished session. The watcher imports a
#: transcript after 20 quiet seconds, often mid-session; its evidence waits (merged with what
#: comes next) so each session costs one synthesis call. Live sessions are finished at once.
SETTLE_SECONDS: Final = 1800.0
CONSOLIDATE_EVERY: Final = 10
CONSOLIDATION_WINDOW: Final = 20
CONSOLIDATION_LOG: Final = "*consolidation*"
#: Calls tried for one session's evidence before it is given up (a call cut by its process dying).
MAX_ATTEMPTS: Final = 2
#: The consolidation prompt's budget (about 10k tokens: small local models have 8-32k windows).
#: A BookMinder session's evidence is about 3k tokens (median of 44, max 5k), so sessions are
#: sent newest first without command outputs until the budget is spent.
CONSOLIDATION_CHARS: Final = 36_000
#: The kinds of knowledge a model may state; the observer's statistical kinds are not its job.
MODEL_TYPES: Final = (MemoryType.GOTCHA.value, MemoryType.DECISION.value, MemoryType.PREFERENCE.value,
                      MemoryType.PATTERN.value, MemoryType.REQUIREMENT.value, MemoryType.ERROR_PATTERN.value,
                      MemoryType.WORKFLOW_RECIPE.value)

REPLY_SCHEMA: Final[dict[str, Any]] = {
    "type": "object", "additionalProperties": False, "required": ["memories"],
    "properties": {"memories": {"type": "array", "maxItems": MAX_MEMORIES, "items": {
        "type": "object", "additionalProperties": False,
        "required": ["type", "content", "files", "commands", "values"],
        "properties": {
            "type": {"enum": list(MODEL_TYPES)},
            "content": {"type": "string", "minLength": 20, "maxLength": 400},
            "files": {"type": "array", "maxItems": 8, "items": {"type": "string", "minLength": 1, "maxLength": 300}},
            "commands": {"type": "array", "maxItems": 4,
                         "items": {"type": "string", "minLength": 1, "maxLength": 300}},
            "values": {"type": "array", "maxItems": 6, "items": {"type": "string", "minLength": 1, "maxLength": 200}},
        }}}},
}
_VALIDATOR: Final = jsonschema.Draft202012Validator(REPLY_SCHEMA)

SYSTEM: Final = (
    "You turn the evidence of a coding-agent session into memories a developer of this project would "
    "want the next agent to know: how to build, test, run or deploy; rules the user gave; a command that "
    "failed and the one that worked; an error and the change that fixed it; decisions. Skip anything "
    "generic or obvious. Each memory is one or two standalone sentences naming the files, commands and "
    "values concerned. Name ONLY files, commands and values that appear in the evidence, verbatim. "
    f"Write at most {MAX_MEMORIES} memories; none is fine. Reply with one JSON object and nothing else: "
    '{"memories": [{"type": one of ' + ", ".join(MODEL_TYPES) + ', "content": "...", '
    '"files": ["path"], "commands": ["command"], "values": ["value"]}]}')
SESSION_TASK: Final = "Evidence of one finished session:"
CONSOLIDATION_TASK: Final = ("Evidence of the project's recent sessions, and memories proposed earlier "
                             "(merge repeats into one, keep what several sessions confirm):")

_FENCE: Final = re.compile(r"^\s*```(?:json)?\s*\n(.*)\n\s*```\s*$", re.S)
_CODE_SPAN: Final = re.compile(r"`([^`]+)`")
_PATHLIKE: Final = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+|[\w-]+\.(?:py|pyi|ts|tsx|js|jsx|mjs|json|toml|"
                              r"ya?ml|md|cfg|ini|sh|txt|rs|go|java|sql|lock|env|html|css))(?![\w/])")


class JSONModel(Protocol):
    """A chat model asked for one JSON reply (the composition root adapts a provider)."""

    name: str

    def complete(self, system: str, prompt: str) -> str:
        """The model's reply text to ``prompt`` under ``system``; raises on timeout or transport failure."""


class SynthesisRejected(ValueError):
    """The reply is not JSON, or not the schema; ``code`` says which."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code


@dataclass
class SynthesisReport:
    """What one synthesis call did. ``status``: written, none, malformed, off_schema, failed, empty, off."""

    session_id: str
    status: str
    proposed: int = 0
    memory_ids: list[int] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)
    """(content, reason) of memories that named something not in the evidence."""
    error: str = ""


def parse_reply(text: str) -> list[dict[str, Any]]:
    """The memories of a model reply, or SynthesisRejected (malformed JSON, off-schema)."""
    fenced = _FENCE.match(text)  # a Markdown code fence around the object is packaging, not content
    body = fenced.group(1) if fenced else text.strip()
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as exc:
        raise SynthesisRejected("malformed", str(exc)) from None
    errors = sorted(_VALIDATOR.iter_errors(obj), key=lambda e: list(e.path))
    if errors:
        raise SynthesisRejected("off_schema", errors[0].message[:200])
    return list(obj["memories"])


def _norm(text: str) -> str:
    return " ".join(text.split())


def ungrounded(memory: dict[str, Any], evidence: list[SessionEvidence]) -> str | None:
    """Why ``memory`` names something the evidence does not show, or None when all of it is there."""
    corpus = _norm("\n".join(e.corpus() for e in evidence))
    files = set().union(*(e.known_files() for e in evidence)) if evidence else set()
    for path in memory["files"]:
        if path not in files and path not in corpus:
            return f"file not in evidence: {path}"
    for command in memory["commands"]:
        if _norm(command) not in corpus:
            return f"command not in evidence: {command}"
    for value in memory["values"]:
        if _norm(value) not in corpus:
            return f"value not in evidence: {value}"
    content = memory["content"]
    for span in _CODE_SPAN.findall(content):
        if _norm(span) not in corpus and span not in files:
            return f"quoted text not in evidence: {span}"
    for word in _PATHLIKE.findall(_CODE_SPAN.sub(" ", content)):
        if word.rstrip(".") not in corpus and word.rstrip(".") not in files:
            return f"path not in evidence: {word}"
    return None


def _claim(session_id: str) -> Callable[[Tx], None]:
    def claim(tx: Tx) -> None:
        tx.execute("UPDATE observer_session_evidence SET synthesized = synthesized - 1 WHERE session_id = ?"
                   " AND synthesized <= 0", (session_id,))
    return claim


def _marker(session_id: str) -> Callable[[Tx], None]:
    def mark(tx: Tx) -> None:
        tx.execute("UPDATE observer_session_evidence SET synthesized = 1 WHERE session_id = ?", (session_id,))
    return mark


class ModelSynthesizer:
    """Per-session synthesis and periodic consolidation through an injected :class:`JSONModel`."""

    def __init__(self, db: Any, model: JSONModel, *, gate: Callable[[list[NewMemory]], list[NewMemory]] | None = None,
                 enabled: Callable[[], bool] | None = None, consolidate_every: int = CONSOLIDATE_EVERY,
                 window: int = CONSOLIDATION_WINDOW, settle_seconds: float = SETTLE_SECONDS,
                 clock: Callable[[], float] = time.time) -> None:
        """``gate`` applies the project's policy to what would be stored; ``enabled`` (the auto-memory
        switch) is asked before each session, so an opted-out project sends nothing to a model."""
        self.db = db
        self.model = model
        self.gate = gate
        self.enabled = enabled
        self.consolidate_every = consolidate_every
        self.window = window
        self.settle_seconds = settle_seconds
        self.clock = clock

    def available(self) -> bool:
        """True when a model is configured now (the settings may name none: the rules alone learn)."""
        check = getattr(self.model, "available", None)
        return bool(check()) if callable(check) else True

    def after_session(self, digest: SessionDigest, *, finished: bool = False) -> list[SynthesisReport]:
        """Record a session's evidence and synthesise every settled session (consolidate when due).

        ``finished``: the session is known to be over (a live session); otherwise it is
        synthesised once it has been quiet for ``settle_seconds``. Never raises.
        """
        if self.enabled is not None and not self.enabled():
            return [SynthesisReport(digest.session_id, "off")]
        if digest.evidence is None or digest.evidence.is_empty():
            return [SynthesisReport(digest.session_id, "empty")]
        ev = digest.evidence.redacted()  # a key typed into a command reaches neither the model nor the table
        try:
            self._store_evidence(ev, digest.ended_at or digest.started_at)
        except Exception:
            logger.exception("could not store the evidence of %s", digest.session_id)
            return [SynthesisReport(digest.session_id, "failed", error="store")]
        reports = self.sweep(force={digest.session_id} if finished else set())
        if not any(r.session_id == digest.session_id for r in reports):
            reports.insert(0, SynthesisReport(digest.session_id, "pending"))
        return reports

    def sweep(self, force: set[str] | None = None) -> list[SynthesisReport]:
        """One synthesis call for each recorded session that has settled (or is in ``force``)."""
        if self.enabled is not None and not self.enabled():
            return []
        settled = self.clock() - self.settle_seconds
        rows = self.db.reads.conn().execute(
            "SELECT session_id, ended_at, evidence FROM observer_session_evidence WHERE synthesized <= 0"
            " AND synthesized > ? ORDER BY ended_at, session_id", (-MAX_ATTEMPTS,)).fetchall()
        reports = []
        for sid, ended, raw in rows:
            if float(ended) > settled and sid not in (force or set()):
                continue
            # Claimed before the call: a process cut during it (a hook at its time budget) leaves the
            # claim, so the session is tried again at most MAX_ATTEMPTS times, never on every sweep.
            self.db.writer.run(FnOp("claim_synthesis", _claim(str(sid))))
            ev = SessionEvidence.from_dict(json.loads(raw))
            reports.append(self._run(SESSION_TASK, json.dumps(ev.to_dict(), ensure_ascii=False), [ev], sid,
                                     "model_synthesis"))
            self.db.writer.run(FnOp("mark_synthesized", _marker(str(sid))))
            if self.consolidation_due():
                reports.append(self.consolidate())
        return reports

    def consolidation_due(self) -> bool:
        """True when ``consolidate_every`` sessions were recorded since the last consolidation."""
        conn = self.db.reads.conn()
        recorded = int(conn.execute("SELECT count(*) FROM observer_session_evidence").fetchall()[0][0])
        last = conn.execute("SELECT max(trigger_count) FROM observer_synthesis_log WHERE module = ?",
                            (CONSOLIDATION_LOG,)).fetchall()[0][0]
        return recorded - int(last or 0) >= self.consolidate_every

    def consolidate(self) -> SynthesisReport:
        """One consolidation call over the recent sessions' evidence and earlier model candidates."""
        if self.enabled is not None and not self.enabled():
            return SynthesisReport("consolidation", "off")
        conn = self.db.reads.conn()
        recorded = int(conn.execute("SELECT count(*) FROM observer_session_evidence").fetchall()[0][0])
        earlier = [r[0] for r in conn.execute(
            f"SELECT content FROM memories WHERE {LIVE_SQL} AND tags LIKE '%model_synthesis%'"
            " ORDER BY id DESC LIMIT 30")]
        evidence: list[SessionEvidence] = []
        briefs: list[dict[str, Any]] = []
        used = len(json.dumps(earlier, ensure_ascii=False))
        for (raw,) in conn.execute("SELECT evidence FROM observer_session_evidence"
                                   " ORDER BY ended_at DESC, session_id LIMIT ?", (self.window,)):
            ev = SessionEvidence.from_dict(json.loads(raw))
            brief = {**ev.to_dict(), "commands": [[c.command, c.ok] for c in ev.commands], "files": []}
            size = len(json.dumps(brief, ensure_ascii=False))
            if briefs and used + size > CONSOLIDATION_CHARS:
                break
            # Grounding checks against what the model was shown: no outputs, no read-only files.
            evidence.append(replace(ev, commands=[CommandRun(c.command, c.ok) for c in ev.commands], files=[]))
            briefs.append(brief)
            used += size
        if not briefs:
            return SynthesisReport("consolidation", "empty")
        payload = json.dumps({"sessions": briefs, "proposed_earlier": earlier}, ensure_ascii=False)
        report = self._run(CONSOLIDATION_TASK, payload, evidence, "consolidation", "model_consolidation")

        def log(tx: Tx) -> None:
            tx.execute("INSERT OR REPLACE INTO observer_synthesis_log(module, project_id, trigger_count,"
                       " synthesized_at, memories_generated) VALUES (?,?,?,?,?)",
                       (CONSOLIDATION_LOG, tx.project_id, recorded, int(tx.now_dt.timestamp()),
                        len(report.memory_ids)))
        self.db.writer.run(FnOp("log_consolidation", log))
        return report

    # -- internals ----------------------------------------------------------------------------
    def _store_evidence(self, ev: SessionEvidence, ended_at: float) -> None:
        """Store (or extend, for a transcript that grew) a session's evidence, pending synthesis."""
        def write(tx: Tx) -> None:
            known = tx.execute("SELECT evidence FROM observer_session_evidence WHERE session_id = ?",
                               (ev.session_id,)).fetchall()
            merged = SessionEvidence.from_dict(json.loads(str(known[0][0]))).merged_with(ev) if known else ev
            tx.execute("INSERT INTO observer_session_evidence(session_id, ended_at, evidence) VALUES (?,?,?)"
                       " ON CONFLICT(session_id) DO UPDATE SET evidence = excluded.evidence,"
                       " ended_at = excluded.ended_at, synthesized = 0",
                       (ev.session_id, float(ended_at), merged.to_json()))
        self.db.writer.run(FnOp("store_session_evidence", write))

    def _run(self, task: str, payload: str, evidence: list[SessionEvidence], session_id: str,
             what: str) -> SynthesisReport:
        report = SynthesisReport(session_id, "none")
        try:
            text = self.model.complete(SYSTEM, f"{task}\n{payload}")
        except Exception as exc:  # timeout, refused connection, HTTP error: learn nothing this time
            logger.warning("synthesis model %s failed for %s: %s", getattr(self.model, "name", "?"), session_id, exc)
            report.status, report.error = "failed", type(exc).__name__
            return report
        try:
            items = parse_reply(text)
        except SynthesisRejected as exc:
            logger.warning("synthesis reply for %s rejected: %s", session_id, exc)
            report.status, report.error = exc.code, str(exc)
            return report
        report.proposed = len(items)
        news = []
        for item in items:
            why = ungrounded(item, evidence)
            if why is not None:
                report.dropped.append((item["content"], why))
                logger.info("synthesised memory dropped (%s): %s", why, item["content"][:80])
                continue
            news.append(self._new_memory(item, evidence, what))
        if self.gate is not None:
            news = self.gate(news)
        if news:
            results = self.db.writer.run(AddMemories(news, actor="observer",
                                                     reason="synthesised by a model from session evidence"))
            report.memory_ids = [r.id for r in results]
            report.status = "written"
        return report

    def _new_memory(self, item: dict[str, Any], evidence: list[SessionEvidence], what: str) -> NewMemory:
        sids = [e.session_id for e in evidence][:20]
        return NewMemory(
            content=_norm(item["content"]), type=item["type"], confidence=0.6, tags=["observer", what],
            related_files=list(dict.fromkeys(item["files"]))[:8], scope=MemoryScope.GLOBAL.value,
            source=MemorySource.OBSERVER_INFERRED.value, session_id=sids[0] if len(sids) == 1 else None,
            provenance_session_ids=sids,
            provenance=[{"session_id": s, "signal": what, "steps": [],
                         "evidence": [*item["commands"], *item["values"]][:4]} for s in sids[:5]],
            needs_review=True, candidate=True,
            metadata={"signal": what, "model": getattr(self.model, "name", ""), "commands": item["commands"],
                      "values": item["values"]})
