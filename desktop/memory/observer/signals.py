"""The observer's vocabulary: the 17 signal classes, their scores, and text/path heuristics.

Everything here is pure and cheap (precompiled regexes, frozen tables) because the
detectors call it on the hot path of ``Observer.observe``. Values follow the
reference design's signal table: a priority score per class, the memory types a
class may become, and how many sessions must show it before it is promoted.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any, Final

from desktop.memory.observer.signal_kinds import (
    ASKED_TESTS,
    BACKTRACK,
    CHECK_GAP,
    CHECK_RULE,
    CO_ACCESS,
    COMMAND_FIX,
    CONFIG_TOUCH,
    CONTEXT_TOKEN_SPIKE,
    DEAD_END,
    ERROR_FIX,
    ERROR_RETRY,
    EXPLICIT,
    EXTERNAL_REFERENCE,
    FILE_ACCESS,
    GLOB_IGNORE,
    HOOK_BLOCK,
    IMPORT_CHASE,
    PARALLEL_CONFLICT,
    PROJECT_FACT,
    READ_ABANDON,
    RECIPE,
    REJECTED_FLAG,
    REPEATED_GREP,
    REVIEWED_TESTS,
    SELF_CORRECTION,
    SEQUENCE,
    SHELL_ESCAPE,
    SHELL_STRAY,
    STATED_CAUSE,
    STEP_OVERRUN,
    TEST_ORDER,
    TIME_ANOMALY,
    TOOL_ARGS,
    TYPE_CLASH,
    USER_RULE,
    WRONG_PLACE,
)
from desktop.memory.observer.signal_kinds import REVIEWED_TESTS_LEAD as REVIEWED_TESTS_LEAD  # re-exported
from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.types import MemoryType

# -- signal classes (their names: signal_kinds) ----------------------------------------


@dataclass(frozen=True, slots=True)
class SignalSpec:
    """One row of the design's signal table."""

    name: str
    score: float
    promotes_to: tuple[str, ...]
    min_sessions: int


_T = MemoryType
SIGNAL_SPECS: Final[dict[str, SignalSpec]] = {s.name: s for s in (
    SignalSpec(CO_ACCESS, 0.91, (_T.CAUSAL_DEPENDENCY, _T.PREFETCH_PATTERN), 3),
    SignalSpec(SELF_CORRECTION, 0.88, (_T.GOTCHA, _T.MODULE_INSIGHT), 1),
    SignalSpec(ERROR_RETRY, 0.85, (_T.ERROR_PATTERN, _T.GOTCHA), 2),
    SignalSpec(PARALLEL_CONFLICT, 0.82, (_T.GOTCHA,), 1),
    SignalSpec(READ_ABANDON, 0.79, (_T.GOTCHA,), 3),
    SignalSpec(REPEATED_GREP, 0.76, (_T.MODULE_INSIGHT, _T.GOTCHA), 2),
    SignalSpec(TEST_ORDER, 0.74, (_T.TASK_CALIBRATION,), 3),
    SignalSpec(SEQUENCE, 0.73, (_T.WORKFLOW_RECIPE,), 3),
    SignalSpec(FILE_ACCESS, 0.72, (_T.PREFETCH_PATTERN,), 3),
    SignalSpec(STEP_OVERRUN, 0.71, (_T.TASK_CALIBRATION,), 3),
    SignalSpec(BACKTRACK, 0.68, (_T.GOTCHA,), 2),
    SignalSpec(CONFIG_TOUCH, 0.66, (_T.CAUSAL_DEPENDENCY,), 2),
    SignalSpec(GLOB_IGNORE, 0.64, (_T.GOTCHA,), 2),
    SignalSpec(CONTEXT_TOKEN_SPIKE, 0.63, (_T.CONTEXT_COST,), 3),
    SignalSpec(EXTERNAL_REFERENCE, 0.61, (_T.MODULE_INSIGHT,), 3),
    SignalSpec(IMPORT_CHASE, 0.52, (_T.CAUSAL_DEPENDENCY,), 4),
    SignalSpec(TIME_ANOMALY, 0.48, (), 3),
    SignalSpec(DEAD_END, 0.80, (_T.DEAD_END,), 1),
    SignalSpec(EXPLICIT, 0.95, (_T.NOTE,), 1),
    SignalSpec(USER_RULE, 0.97, (_T.PREFERENCE,), 1),
    SignalSpec(COMMAND_FIX, 0.93, (_T.GOTCHA,), 1),
    # A bug fixed once is history (its fix is in the code); fixed again in another session, a lesson.
    SignalSpec(ERROR_FIX, 0.92, (_T.ERROR_PATTERN,), 2),
    SignalSpec(RECIPE, 0.9, (_T.WORKFLOW_RECIPE,), 2),
    SignalSpec(STATED_CAUSE, 0.86, (_T.GOTCHA, _T.DECISION), 1),
    SignalSpec(HOOK_BLOCK, 0.95, (_T.GOTCHA,), 1),
    # One empty search is exploration; the same wrong place in a second session is a lesson.
    SignalSpec(WRONG_PLACE, 0.84, (_T.GOTCHA,), 2),
    SignalSpec(CHECK_RULE, 0.9, (_T.ERROR_PATTERN,), 1),
    SignalSpec(CHECK_GAP, 0.9, (_T.GOTCHA,), 1),
    SignalSpec(PROJECT_FACT, 0.94, (_T.NOTE, _T.REQUIREMENT), 1),
    # One request is that day's; the same request in another session is the user's habit.
    SignalSpec(ASKED_TESTS, 0.9, (_T.PREFERENCE,), 2),
    SignalSpec(REVIEWED_TESTS, 0.9, (_T.PREFERENCE,), 2),
    SignalSpec(SHELL_STRAY, 0.86, (_T.GOTCHA,), 2),
    # The output shows what ran: one run is the harness's behaviour, not a slip.
    SignalSpec(SHELL_ESCAPE, 0.86, (_T.GOTCHA,), 1),
    # The program's own refusal is the evidence: one run.
    SignalSpec(REJECTED_FLAG, 0.86, (_T.GOTCHA,), 1),
    # The tool's refusal, or the user's words declining the call: one session.
    SignalSpec(TOOL_ARGS, 0.86, (_T.GOTCHA,), 1),
    # One session's mix-up is that day's refactoring; the same pair in another session, the project's rule.
    SignalSpec(TYPE_CLASH, 0.86, (_T.GOTCHA,), 2),
)}
# The score a signal needs (0.4 by the design rule) is the promotion preset's ``min_value``:
# desktop/memory/trust_levels.py.
#: Lowest value evicted first when the scratchpad is full; the others are never evicted.
EVICTION_ORDER: Final[tuple[str, ...]] = (
    TIME_ANOMALY, FILE_ACCESS, SEQUENCE, CO_ACCESS, CONTEXT_TOKEN_SPIKE, IMPORT_CHASE,
    GLOB_IGNORE, EXTERNAL_REFERENCE, STEP_OVERRUN, TEST_ORDER, CONFIG_TOUCH, BACKTRACK,
    READ_ABANDON, REPEATED_GREP, ERROR_RETRY, DEAD_END,
)
NEVER_EVICTED: Final = frozenset({SELF_CORRECTION, PARALLEL_CONFLICT, EXPLICIT, USER_RULE, COMMAND_FIX,
                                  ERROR_FIX, RECIPE, STATED_CAUSE, HOOK_BLOCK, WRONG_PLACE, CHECK_RULE, CHECK_GAP,
                                  PROJECT_FACT, ASKED_TESTS, REVIEWED_TESTS, SHELL_STRAY,
                                  SHELL_ESCAPE, REJECTED_FLAG, TOOL_ARGS, TYPE_CLASH})


@dataclass(slots=True)
class Signal:
    """One observation a detector made, kept in the scratchpad until session end."""

    kind: str
    key: str  # identity within the session: the same key seen again updates, not appends
    step: int
    files: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    evidence: list[str] = field(default_factory=list)
    count: int = 1
    tainted: bool = False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form for checkpoints."""
        return {"kind": self.kind, "key": self.key, "step": self.step, "files": self.files,
                "data": self.data, "evidence": self.evidence, "count": self.count,
                "tainted": self.tainted}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Signal:
        """Inverse of to_dict."""
        return cls(d["kind"], d["key"], int(d["step"]), list(d.get("files", [])),
                   dict(d.get("data", {})), list(d.get("evidence", [])), int(d.get("count", 1)),
                   bool(d.get("tainted", False)))


# -- reasoning language -----------------------------------------------------------------

# Anchored at the start of a sentence: "actually" mid-sentence is usually not a correction.
SELF_CORRECTION_PATTERNS: Final = tuple(re.compile(p, re.I) for p in (
    r"I was wrong about (.+)",
    r"Let me reconsider[.:]? (.+)",
    r"Actually,? (.+?) (?:not|instead of|rather than) (.+)",
    r"I initially thought (.+?) but (.+)",
    r"Correction: (.+)",
    r"Wait[,.]? (.+)",
    r"I (?:was|am) mistaken[,.:]? (.+)",
    r"My (?:earlier )?assumption (?:was|is) wrong[,.:]? ?(.*)",
))
_SENTENCE_SPLIT: Final = re.compile(r"(?<=[.!?])\s+|\n+")
DEAD_END_PATTERNS: Final = tuple(re.compile(p, re.I) for p in (
    r"this approach (?:won't|will not|cannot|can't|doesn't|does not) work",
    r"I need to abandon this",
    r"let me try a different approach",
    r"(?:unavailable|not available) in (?:test|ci|production|this environment)",
    r"this (?:isn't|is not) going to work",
    r"that (?:didn't|did not) work\b.{0,40}\b(?:instead|different)",
))
# Sentences shorter than this are too vague to become a memory on their own.
_MIN_SENTENCE = 12


def first_sentence_with(text: str, start: int, limit: int = 240) -> str:
    """The sentence around ``start`` in ``text``, trimmed to ``limit`` characters."""
    left = max(text.rfind(". ", 0, start), text.rfind("\n", 0, start))
    right_candidates = [i for i in (text.find(". ", start), text.find("\n", start)) if i != -1]
    right = min(right_candidates) + 1 if right_candidates else len(text)
    sentence = " ".join(text[left + 1:right].split())
    return redact_then_cut(sentence, limit)


def match_self_correction(text: str) -> str | None:
    """The self-correcting sentence in agent prose, or None."""
    # Corrections are stated early in a turn; bounded work per event.
    for raw in _SENTENCE_SPLIT.split(text[:4000])[:80]:
        sentence = " ".join(raw.strip(" -*>").split())
        if len(sentence) < 25 or sentence.endswith(":"):
            continue
        for pattern in SELF_CORRECTION_PATTERNS:
            if pattern.match(sentence):
                return redact_then_cut(sentence, 240)
    return None


def match_dead_end(text: str) -> str | None:
    """The dead-end sentence in agent prose ("this approach won't work"), or None."""
    head = text[:4000]
    for pattern in DEAD_END_PATTERNS:
        m = pattern.search(head)
        if m:
            return first_sentence_with(head, m.start())
    return None


# -- error fingerprints ---------------------------------------------------------------------

_FP_RULES: Final = (
    (re.compile(r"\x1b\[[0-9;]*[A-Za-z]"), ""),  # terminal colours
    (re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.@+~-]+)+[\\/]?"), "<path>"),  # absolute/unix paths
    (re.compile(r"\b[\w.-]+\.(?:py|ts|tsx|js|jsx|rs|go|java|rb|md|json|toml|ya?ml|c|h|cpp|cs|kt|swift)\b"), "<file>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{7,64}\b"), "<hex>"),
    (re.compile(r"\bline \d+\b|:\d+(?::\d+)?\b", re.I), "<line>"),
    (re.compile(r"\d+(?:\.\d+)?"), "<n>"),
    (re.compile(r"(['\"`]).{1,80}?\1"), "<str>"),
    (re.compile(r"\s+"), " "),
)
_BARE_EXIT: Final = re.compile(r"^(?:error: )?exit (?:code|status):? ?\d+\.?$", re.I)
_ERROR_LINE: Final = re.compile(
    r"(?:error|exception|failed|failure|not found|denied|cannot|can't|unable|invalid|refused|"
    r"traceback|fatal|no such|undefined|missing|timed? ?out)", re.I)


def error_core(message: str) -> str:
    """The most telling line of an error output (the first line that names an error)."""
    # "Exit code 1" says nothing about which error it was; the next line does.
    lines = [ln.strip() for ln in message[-6000:].splitlines()
             if ln.strip() and not _BARE_EXIT.match(ln.strip())]
    if not lines:
        return ""
    if any(ln.startswith("Traceback") for ln in lines):
        # Python prints the exception last; the traceback header is the same for every error.
        for line in reversed(lines):
            if re.match(r"^[\w.]*(?:Error|Exception|Exit)\b", line):
                return redact_then_cut(line, 300)
    for line in lines:
        if _ERROR_LINE.search(line) and not line.startswith(("=", "-", "+")):
            return redact_then_cut(line, 300)
    return redact_then_cut(lines[0], 300)


def normalize_error(message: str) -> str:
    """An error line with paths, file names, hex, line numbers and numbers replaced."""
    text = error_core(message)
    for pattern, repl in _FP_RULES:
        text = pattern.sub(repl, text)
    return text.strip().lower()[:200]


def error_fingerprint(tool: str, message: str) -> str:
    """A stable id for "the same error": tool plus the normalised error line, hashed."""
    norm = normalize_error(message)
    return hashlib.sha1(f"{tool}|{norm}".encode()).hexdigest()[:16]


# -- paths ------------------------------------------------------------------------------------

_CONFIG_NAMES: Final = frozenset({
    "package.json", "tsconfig.json", "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt",
    ".env", "Cargo.toml", "go.mod", "Makefile", "Dockerfile", "pytest.ini", "tox.ini", "conftest.py",
    ".gitignore", "vite.config.ts", "webpack.config.js", "ruff.toml", ".pre-commit-config.yaml",
    "CLAUDE.md", "GEMINI.md", "AGENTS.md",
})
_CONFIG_RE: Final = re.compile(r"(?:^|/)(?:\.env(?:\.\w+)?|[\w.-]+\.config\.[jt]s|[\w-]+rc(?:\.json)?)$")
_TEST_RE: Final = re.compile(r"(?:^|/)(?:tests?|specs?|__tests__)/|(?:^|/)test_[^/]+$|_(?:test|spec)\.\w+$|"
                             r"\.(?:test|spec)\.\w+$|(?:^|/)describe_[^/]+$")
_IMPORT_RE: Final = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+)|"
                               r"import .*? from ['\"]([^'\"]+)['\"]|use\s+([\w:]+))", re.M)


def is_config_file(path: str) -> bool:
    """True for build/tooling configuration (package.json, pyproject.toml, .env, ...)."""
    name = posixpath.basename(path)
    return name in _CONFIG_NAMES or bool(_CONFIG_RE.search(path))


def is_test_file(path: str) -> bool:
    """True for test and spec files."""
    return bool(_TEST_RE.search(path))


def module_of(path: str) -> str:
    """The module a file belongs to: its first two folders (``.`` for root files)."""
    parts = path.replace("\\", "/").lstrip("./").split("/")[:-1]
    if not parts or parts[0] == "":
        return "."
    return "/".join(parts[:2])


def imported_names(source: str, limit: int = 40) -> list[str]:
    """Module names a file's text imports (Python/JS/Rust forms), for import chasing."""
    out: list[str] = []
    for m in _IMPORT_RE.finditer(source[:20_000]):
        name = next((g for g in m.groups() if g), "")
        if name:
            out.append(name)
            if len(out) >= limit:
                break
    return out


def import_matches(name: str, path: str) -> bool:
    """True when an imported module name plausibly refers to the file at ``path``."""
    stem = posixpath.splitext(path)[0]
    dotted = stem.replace("/", ".")
    tail = name.lstrip("./").replace("::", ".").replace("/", ".")
    return bool(tail) and (dotted.endswith(tail) or tail.endswith(posixpath.basename(stem)))


def excerpt(text: str, limit: int = 160) -> str:
    """A one-line, bounded excerpt for provenance."""
    return redact_then_cut(" ".join(text.split()), limit, "…")  # redact first, then cut
