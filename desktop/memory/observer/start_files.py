"""Which files to name at a session start, and only when that beats the obvious guess.

A list of files "past sessions needed" is worth saying only if it predicts what the next session
reads better than the simplest guess, the files the previous session touched. This module
measures both on the project's own history, session by session (each scored against the files
that session then read, using only the sessions before it), and says the list only when it is
ahead over the recent sessions by a sign test, and only when most files it named were then read
(blind judges found a list beating a weak baseline at 31 % useless at every start: the next
session opened none of it). Each file comes with its evidence: read in k of the last n sessions.
Nothing is estimated: with too few sessions, nothing is said.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final

from desktop.memory.stats import sign_test

WINDOW: Final = 10          # the sessions a file's evidence counts over
MIN_SHARE: Final = 0.5      # read in at least half of them
MAX_FILES: Final = 8
SCORED: Final = 20          # recent sessions the list is judged on
MIN_SCORED: Final = 8       # fewer than this: not enough history to judge
ALPHA: Final = 0.05
MIN_PRECISION: Final = 0.5  # a named file is read by the next session more often than not


@dataclass(frozen=True)
class FileEvidence:
    """One file to name, with how often it was read."""

    path: str
    sessions: int
    window: int


@dataclass
class StartFiles:
    """The list to say (empty when it does not beat the baseline) and the judgement behind it."""

    files: list[FileEvidence] = field(default_factory=list)
    scored: int = 0
    list_precision: float = 0.0
    baseline_precision: float = 0.0
    wins: int = 0
    losses: int = 0
    p_value: float = 1.0


def _history(conn: Any, limit: int) -> list[set[str]]:
    """The files of the most recent ``limit`` sessions, oldest first."""
    rows = conn.execute(
        "SELECT m.session_id FROM session_metrics m WHERE EXISTS "
        "(SELECT 1 FROM observer_session_files f WHERE f.session_id = m.session_id) "
        "ORDER BY coalesce(m.started_at, ''), m.rowid").fetchall()
    ids = [str(r[0]) for r in rows][-limit:]
    if not ids:
        return []
    files: dict[str, set[str]] = {i: set() for i in ids}
    for sid, path in conn.execute(
            "SELECT session_id, file_path FROM observer_session_files WHERE session_id IN "
            "(SELECT value FROM json_each(?))", (json.dumps(ids),)):
        files[str(sid)].add(str(path))
    return [files[i] for i in ids]


def frequent(history: list[set[str]], window: int = WINDOW) -> list[FileEvidence]:
    """Files read in at least half of the last ``window`` sessions, most often first."""
    recent = history[-window:]
    if len(recent) < window:
        return []
    counts = Counter(p for files in recent for p in files)
    need = math.ceil(MIN_SHARE * len(recent))
    ranked = sorted((p for p, k in counts.items() if k >= need), key=lambda p: (-counts[p], p))
    return [FileEvidence(p, counts[p], len(recent)) for p in ranked[:MAX_FILES]]


def start_files(conn: Any) -> StartFiles:
    """The evidence-backed list for the next session, if it has beaten the baseline here."""
    history = _history(conn, WINDOW + SCORED + 1)
    out = StartFiles()
    list_hits = list_size = base_hits = base_size = 0
    for i in range(WINDOW, len(history)):
        before, actual = history[:i], history[i]
        guess = [f.path for f in frequent(before)]
        baseline = before[-1]
        if not guess or not baseline or not actual:
            continue
        p_list = len(set(guess) & actual) / len(guess)
        p_base = len(baseline & actual) / len(baseline)
        list_hits += len(set(guess) & actual)
        list_size += len(guess)
        base_hits += len(baseline & actual)
        base_size += len(baseline)
        out.scored += 1
        out.wins += p_list > p_base
        out.losses += p_list < p_base
    out.list_precision = list_hits / list_size if list_size else 0.0
    out.baseline_precision = base_hits / base_size if base_size else 0.0
    out.p_value = sign_test(out.wins, out.losses)
    if worth_saying(out):
        out.files = frequent(history)
    return out


def worth_saying(judged: StartFiles) -> bool:
    """True when the list has been judged on enough sessions, beat the baseline by the sign test,
    and most files it named were then read."""
    return (judged.scored >= MIN_SCORED and judged.p_value < ALPHA
            and judged.list_precision > judged.baseline_precision and judged.list_precision >= MIN_PRECISION)
