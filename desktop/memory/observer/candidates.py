"""From a session's signals to candidate memories: the read-only half of promotion (``promotion``).

Session-type gate, validation (a failed session yields only dead ends and what the user said),
frequency (each signal class needs its minimum number of sessions), rendering by template, trust
(text after a web lookup, or from tool output that reads like an instruction, needs review at
confidence x 0.7), scoring and the gate's cap; then each chosen candidate becomes a ``NewMemory``
with its provenance and why it may be injected at once (``promotion_reason``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from desktop.memory.observer.observer import SessionDigest
from desktop.memory.observer.prose_lessons import attach_files
from desktop.memory.observer.signals import (
    ASKED_TESTS,
    CHECK_GAP,
    CHECK_RULE,
    CO_ACCESS,
    COMMAND_FIX,
    DEAD_END,
    ERROR_FIX,
    ERROR_RETRY,
    EXPLICIT,
    FILE_ACCESS,
    HOOK_BLOCK,
    PROJECT_FACT,
    RECIPE,
    REJECTED_FLAG,
    REPEATED_GREP,
    REVIEWED_TESTS,
    SELF_CORRECTION,
    SEQUENCE,
    SHELL_ESCAPE,
    SIGNAL_SPECS,
    STATED_CAUSE,
    TOOL_ARGS,
    TYPE_CLASH,
    USER_RULE,
    Signal,
    excerpt,
)
from desktop.memory.observer.templates import Rendered, looks_like_instruction, render
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.trust import AGENT_MAX_CONFIDENCE, AGENT_WORD_SIGNALS
from desktop.memory.trust_levels import PromotionPreset, promotion_preset
from desktop.memory.types import MemoryScope, MemorySource

TAINT_FACTOR: Final = 0.7
#: Lessons identified by their signal key (a purpose, a fact's value): never folded by text likeness.
EXACT_KINDS: Final = frozenset({RECIPE, PROJECT_FACT})
#: Strong evidence promotes at once (issue 13): the user said it, or a passing run proved the fix.
STRONG_EVIDENCE: Final = {USER_RULE: "user_instruction", ERROR_FIX: "proven_fix", COMMAND_FIX: "proven_fix",
                           # A checker failed, the flagged file was edited, the checker passed.
                           CHECK_RULE: "proven_fix", CHECK_GAP: "proven_fix",
                           # A rule the project's (or the user's) hook enforces in code.
                           HOOK_BLOCK: "enforced_by_hook",
                           # The failed run's own output shows the command as the harness rewrote it.
                           SHELL_ESCAPE: "command_outcome",
                           # The program said which flag it does not take.
                           REJECTED_FLAG: "command_outcome",
                           # The tool refused the call, or the user declined it in their words.
                           TOOL_ARGS: "command_outcome",
                           # The compiler's own words, in two sessions.
                           TYPE_CLASH: "command_outcome"}


@dataclass(frozen=True)
class Gate:
    """How many memories a session type may promote, and from which signal classes."""

    cap: int
    kinds: frozenset[str] | None  # None: every class


SESSION_GATES: Final[dict[str, Gate]] = {
    "build": Gate(20, None),
    "insights": Gate(5, frozenset({CO_ACCESS, SELF_CORRECTION, REPEATED_GREP, STATED_CAUSE})),
    "roadmap": Gate(3, frozenset({EXPLICIT})),
    "terminal": Gate(3, frozenset({ERROR_RETRY, SEQUENCE, COMMAND_FIX, RECIPE, ERROR_FIX, CHECK_RULE, CHECK_GAP})),
    "changelog": Gate(0, frozenset()),
    "spec_creation": Gate(3, frozenset({FILE_ACCESS, REPEATED_GREP})),
    "pr_review": Gate(8, frozenset({ERROR_RETRY, SELF_CORRECTION, STATED_CAUSE})),
    # Sessions of installed tools (Claude Code, Codex, Gemini CLI) are not in the
    # design's pipeline table: treated as unreviewed coding sessions.
    "interactive": Gate(10, None),
    "headless": Gate(8, None),
    "subagent": Gate(5, None),
    "compaction": Gate(5, None),
}
DEFAULT_GATE: Final = Gate(5, None)


@dataclass
class Candidate:
    """A signal on its way to becoming a memory."""

    signal: Signal
    rendered: Rendered
    priority: float
    confidence: float
    sessions: int
    needs_review: bool = False
    drop_reason: str | None = None


def users_words(sig: Signal) -> bool:
    """True for what the user said (a rule, or a fact they stated): it holds whatever the session's
    outcome, every gate lets it through, and no trust preset asks for more sessions."""
    return sig.kind in (USER_RULE, ASKED_TESTS, REVIEWED_TESTS) or \
        (sig.kind == PROJECT_FACT and sig.data.get("source") == "user")


def error_signals(digest: SessionDigest) -> list[Signal]:
    """Every error of the session as an error_retry signal keyed by fingerprint (counted per session)."""
    known = {s.key for s in digest.signals}
    out = []
    for err in digest.errors:
        key = f"{ERROR_RETRY}:{err['fingerprint']}"
        if key not in known:
            out.append(Signal(ERROR_RETRY, key, err["first_step"], list(err.get("fix_files", [])),
                              {"fingerprint": err["fingerprint"], "tool": err["tool"]},
                              [excerpt(err["message"], 120)], tainted=digest.external_step is not None
                              and err["first_step"] > digest.external_step))
    return out


def build_candidates(digest: SessionDigest, prior: dict[str, int], *, failed: bool,
                     preset: PromotionPreset | None = None) -> list[Candidate]:
    """Apply validation, frequency, rendering, trust and scoring; then the gate and its cap (pure).

    ``preset`` (the project's trust settings; balanced when None) shifts the frequency
    minimum, the score floor and the cap; what the user said is exempt from the first two.
    """
    preset = preset or promotion_preset(None)
    gate = SESSION_GATES.get(digest.session_type, DEFAULT_GATE)
    errors = {e["fingerprint"]: e for e in digest.errors}
    out: list[Candidate] = []
    for sig in [*digest.signals, *error_signals(digest)]:
        spec = SIGNAL_SPECS[sig.kind]
        cand = Candidate(sig, Rendered("note", ""), spec.score, 0.0, prior.get(sig.key, 0) + 1)
        out.append(cand)
        # What the user said holds whatever the session's outcome; every gate lets it through.
        if failed and sig.kind not in (DEAD_END, EXPLICIT) and not users_words(sig):
            cand.drop_reason = "validation"
            continue
        if gate.kinds is not None and sig.kind not in gate.kinds and sig.kind not in (EXPLICIT, DEAD_END) \
                and not users_words(sig):
            cand.drop_reason = "gate"
            continue
        need = int(sig.data.get("min_sessions", spec.min_sessions))
        if sig.kind in digest.early and sig.count >= 3:
            need = 1  # an early-promotion trigger fired: strong evidence within one session
        if sig.kind != EXPLICIT and not users_words(sig):
            need = max(1, need + preset.extra_sessions)
        if cand.sessions < need:
            cand.drop_reason = "frequency"
            continue
        if sig.kind == STATED_CAUSE:
            # A root cause is attached to its files: files of this project the session touched.
            sig.files = attach_files(sig.files, digest.files)
            if not sig.files:
                cand.drop_reason = "unattached"
                continue
        rendered = render(sig, errors.get(sig.data.get("fingerprint", "")))
        if rendered is None or not rendered.content.strip():
            cand.drop_reason = "no_template"
            continue
        cand.rendered = rendered
        tainted = sig.tainted or (rendered.from_tool_output and looks_like_instruction(rendered.content))
        base = 0.85 if sig.kind == EXPLICIT else min(0.9, 0.3 + 0.4 * spec.score + 0.05 * min(cand.sessions - 1, 4))
        cand.priority = spec.score + (0.05 if sig.kind in digest.early else 0.0)
        if sig.data.get("quorum"):
            base = min(0.95, base + 0.1)
        cand.confidence = base * (TAINT_FACTOR if tainted else 1.0)
        if sig.kind in AGENT_WORD_SIGNALS:  # the agent's own words: never above the agents' cap
            cand.confidence = min(cand.confidence, AGENT_MAX_CONFIDENCE)
        cand.needs_review = tainted
        if tainted:
            cand.priority *= TAINT_FACTOR
        if cand.priority < preset.min_value and sig.kind != EXPLICIT and not users_words(sig):
            cand.drop_reason = "score"
    live = sorted((c for c in out if c.drop_reason is None), key=lambda c: (-c.priority, -c.sessions))
    for c in live[preset.cap(gate.cap):]:
        c.drop_reason = "cap"
    return out


def to_new_memory(c: Candidate, digest: SessionDigest) -> NewMemory:
    """The NewMemory for a candidate, with its provenance (session, steps, evidence)."""
    sig = c.signal
    explicit = sig.kind == EXPLICIT
    prov = {"session_id": digest.session_id, "agent": digest.agent, "signal": sig.kind,
            "steps": [sig.step], "evidence": [excerpt(e, 200) for e in sig.evidence[:3]]}
    promoted = promotion_reason(c)
    meta: dict[str, Any] = {"signal": sig.kind, "signal_key": sig.key[:300], "sessions": c.sessions,
                            "events": [str(e) for e in sig.data.get("events", [])][:8], **_measured(sig.data)}
    if sig.kind in EXACT_KINDS and sig.data.get("purpose"):
        meta["purpose"] = str(sig.data["purpose"])
    if sig.data.get("why"):  # why the scorer kept the user's words: the features that fired, and the score
        meta["why"] = {"features": list(sig.data["why"])[:12], "score": sig.data.get("score")}
    if promoted:
        meta["promoted_on"] = promoted
    if isinstance(sig.data.get("triggers"), list):
        meta["triggers"] = sig.data["triggers"][:6]  # what makes the lesson fire (memory_triggers)
    if sig.data.get("declined"):
        meta["declined"] = True  # the user's refusal, not the tool's: a call that goes through contradicts nothing
    return NewMemory(
        content=c.rendered.content, type=c.rendered.type, confidence=round(c.confidence, 4),
        tags=["observer", sig.kind], related_files=c.rendered.files[:8],
        scope=MemoryScope.GLOBAL.value,
        source=MemorySource.AGENT_EXPLICIT.value if explicit else MemorySource.OBSERVER_INFERRED.value,
        session_id=digest.session_id, provenance_session_ids=[digest.session_id], provenance=[prov],
        needs_review=c.needs_review, metadata=meta, candidate=promoted is None)


def promotion_reason(c: Candidate) -> str | None:
    """Why a learned memory may be injected at once, or None: it stays a candidate.

    Strong evidence (a user instruction, a fix a passing run proved) or the same lesson in
    another session; tainted text (after a web lookup, instruction-like tool output) never,
    and never the agent's own words (what it recorded, the causes it stated): the same agent
    saying it again, in any number of sessions, is not evidence.
    """
    if c.needs_review or c.signal.kind in AGENT_WORD_SIGNALS:
        return None
    # An error the session caused in a file it had already edited, then fixed: proven, but
    # about its own half-done change. It waits for another session like any other lesson.
    own = bool(c.signal.data.get("self_inflicted"))
    if c.signal.kind == PROJECT_FACT:
        return "user_instruction" if users_words(c.signal) else "command_outcome"
    if c.signal.kind in STRONG_EVIDENCE and not own:
        return STRONG_EVIDENCE[c.signal.kind]
    if c.sessions >= 2:
        return "reinforced"
    return None


def _measured(data: dict[str, Any]) -> dict[str, int]:
    """The numbers a signal measured (a step overrun's planned and actual steps), kept for calibration."""
    return {k: int(data[k]) for k in ("planned", "actual") if isinstance(data.get(k), (int, float))}
