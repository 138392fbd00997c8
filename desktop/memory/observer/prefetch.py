"""Which files should a new session read first? Ranked from everything a session start knows.

The score is a small, interpretable model of "will the next session need file f":

* a frequency estimate that mixes a short-term and a long-term view: the share of
  recent sessions that needed f, each weighted ``0.5 ** (sessions_ago / half_life)``
  (sessions are counted, not days, so a project touched monthly and one touched
  hourly both treat "the last session" as recent), blended with the plain share of
  all sessions that needed f (``short_share`` decides the mix); both are in 0..1;
* work state: files edited (or created) by the last session that touched files are
  likely continued, so they get a bonus;
* prompt evidence: files named outright in the prompt *or in what it expands to* (a
  slash command's text, ``@``-attached files) get a bonus, and prompt words learned
  (TF-IDF weighted) to co-occur with files in earlier first prompts add a 0..1 share;
* the project's state at session start (:mod:`start_context`): uncommitted files,
  files of the last commits, the handoff/progress notes the project keeps and the
  files those notes name, each with its own bonus. Files the history never saw can
  be proposed this way (a file named in the prompt that exists, an untracked file).

Nine parameters (:class:`PrefetchParams`) in all; the defaults are the grid point
``bench/bench_learning.py`` chose on the first half of the BookMinder replay only (it
reports the held-out half, and the reverse split, separately). On those days the
replayed git state left almost nothing uncommitted, so the git weights could not be
told apart from 0 and stay 0 (the reverse split chose 0.3 and 0.05); the handoff
notes' contents are not in the copies, so ``handoff_named`` is unmeasured and 0.
Set them through ``PrefetchParams`` for a project whose git state has been measured.
Files an agent deleted or moved away (see ``file_ops``) and paths that cannot be files
are never proposed.
Learned state is read once into :class:`PrefetchFeatures` so that ranking with other
parameters costs no further queries.
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from desktop.memory.observer.cross_session import prompt_terms
from desktop.memory.observer.start_context import StartContext, named_files
from desktop.memory.observer.tool_names import plausible_file

logger = logging.getLogger("engram.observer")

RECENT_SESSIONS: Final = 500
"""How many of the newest sessions the short-term estimate looks at (older ones weigh ~0)."""
_MENTION: Final = re.compile(r"[@`'\"]?([\w./-]+\.\w{1,8})\b")


@dataclass(frozen=True)
class PrefetchParams:
    """The whole scoring model: nine numbers, no per-file or per-project cases."""

    half_life: float = 1.0
    """Sessions after which a past need counts half in the short-term estimate."""
    short_share: float = 0.7
    """Weight of the decayed (short-term) share against the all-time share (0..1)."""
    mention: float = 0.2
    """Bonus for a file named outright in the prompt."""
    last_edit: float = 0.1
    """Bonus for a file edited or created by the last session that touched files."""
    terms: float = 0.0
    """Weight of the learned prompt-term association (normalised to 0..1)."""
    uncommitted: float = 0.0
    """Bonus for a file with uncommitted changes (git status) at session start."""
    committed: float = 0.0
    """Bonus for a file changed by one of the last few commits."""
    handoff: float = 0.3
    """Bonus for a handoff/progress note the project keeps (HANDOFF.md, TODO.md, docs/*progress*)."""
    handoff_named: float = 0.0
    """Bonus for a file such a note names."""


DEFAULT_PARAMS: Final = PrefetchParams()


@dataclass
class PrefetchItem:
    """One ranked file with its score and the parts that made it."""

    file: str
    score: float
    parts: dict[str, float] = field(default_factory=dict)


@dataclass
class PrefetchFeatures:
    """Everything the ranking needs, read from the database once per prompt."""

    total_sessions: int
    session_counts: dict[str, int]
    """All-time number of sessions that needed each file."""
    ages: dict[str, list[int]]
    """For each file, how many sessions ago it was needed (0 = the newest session)."""
    recent_sessions: int
    """How many sessions the ``ages`` cover."""
    last_edited: set[str]
    mentioned: set[str]
    terms: dict[str, float]
    """Prompt-term association, normalised to 0..1."""
    context: dict[str, set[str]] = field(default_factory=dict)
    """Start-context files by kind: ``uncommitted``, ``committed``, ``handoff``, ``handoff_named``."""


def decayed_share(ages: list[int], horizon: int, half_life: float) -> float:
    """Exponentially weighted share of the last ``horizon`` sessions that needed a file.

    ``ages`` are sessions-ago values (0 = newest); the result is in 0..1 and equals
    the plain share when ``half_life`` is very large.
    """
    if horizon <= 0 or not ages:
        return 0.0
    decay = 0.5 ** (1.0 / max(half_life, 1e-6))
    norm = (1 - decay ** horizon) / (1 - decay) if decay < 1 else float(horizon)
    return min(1.0, sum(decay ** a for a in ages) / norm)


def mentioned_files(prompt: str, files: Any) -> set[str]:
    """Known files the prompt names outright (full path or a path suffix such as ``cli.py``)."""
    names = {m.group(1).lstrip("./@") for m in _MENTION.finditer(prompt)}
    names.discard("")
    if not names:
        return set()
    return {p for p in files if any(p == m or p.endswith("/" + m) for m in names)}


def resolve_names(names: Iterable[str], known: Any, exists: Callable[[str], bool] | None) -> set[str]:
    """Known files matching ``names`` (full path or path suffix), plus unknown names that ``exists``."""
    out: set[str] = set()
    for raw in names:
        name = raw.lstrip("@").removeprefix("./")
        if not name:
            continue
        hits = {p for p in known if p == name or p.endswith("/" + name)}
        if hits:
            out |= hits
        elif exists is not None and plausible_file(name) and not os.path.isabs(name) and exists(name):
            out.add(name)
    return out


def _context_sets(ctx: StartContext | None, known: Any, removed: set[str],
                  exists: Callable[[str], bool] | None) -> dict[str, set[str]]:
    if ctx is None:
        return {}
    def keep(paths: Iterable[str]) -> set[str]:
        return {p for p in paths if plausible_file(p) and not os.path.isabs(p) and p not in removed
                and (p in known or exists is None or exists(p))}
    return {"uncommitted": keep(ctx.uncommitted), "committed": keep(ctx.committed), "handoff": keep(ctx.handoff),
            "handoff_named": resolve_names(ctx.handoff_named, known, exists) - removed}


def prefetch_features(conn: Any, prompt: str, context: StartContext | None = None, *,
                      exists: Callable[[str], bool] | None = None) -> PrefetchFeatures | None:
    """Read the learned state relevant to ``prompt`` (and the session's start ``context``).

    ``exists`` says whether a project-relative path is a file of the project; with it,
    files the history never saw can be proposed from the prompt and the context.
    None when nothing is learned and the context names nothing.
    """
    # Files an agent deleted or moved away are not worth reading first. The observer no longer
    # records paths that cannot be files; the filter keeps them out of older databases too.
    rows = conn.execute("SELECT file_path, session_count, removed_at FROM observer_file_nodes").fetchall()
    removed = {str(p) for p, _, gone in rows if gone is not None}
    nodes = [(p, n) for p, n, gone in rows if gone is None and int(n or 0) > 0 and plausible_file(p)]
    counts = {p: int(n) for p, n in nodes}
    text = f"{prompt}\n{context.expansion}" if context is not None and context.expansion else prompt
    ctx = _context_sets(context, counts, removed, exists)
    mentioned = (mentioned_files(text, counts) | resolve_names(named_files(text), counts, exists)) - removed
    if not nodes and not mentioned and not any(ctx.values()):
        return None
    total = max(1, int(conn.execute("SELECT count(*) FROM session_metrics").fetchall()[0][0]))
    recent = [r[0] for r in conn.execute("SELECT session_id FROM session_metrics"
                                         " ORDER BY ended_at DESC, rowid DESC LIMIT ?", (RECENT_SESSIONS,))]
    age_of = {sid: i for i, sid in enumerate(recent)}
    ages: dict[str, list[int]] = {}
    edited_by: dict[int, set[str]] = {}
    for sid, path, edited in conn.execute(
            "SELECT sf.session_id, sf.file_path, sf.edited FROM observer_session_files sf"
            " JOIN (SELECT session_id FROM session_metrics ORDER BY ended_at DESC, rowid DESC LIMIT ?) r"
            " ON r.session_id = sf.session_id", (RECENT_SESSIONS,)):
        age = age_of[sid]
        ages.setdefault(path, []).append(age)
        if edited:
            edited_by.setdefault(age, set()).add(path)
        else:
            edited_by.setdefault(age, set())
    # Work state: the newest session that touched any file (chat-only sessions carry none).
    last_edited = edited_by[min(edited_by)] if edited_by else set()
    branch = context.branch if context is not None and context.branch else ""
    terms = _term_scores(conn, prompt_terms(f"{text} {branch.replace('/', ' ')}"), total)
    top = max(terms.values(), default=0.0)
    return PrefetchFeatures(
        total_sessions=total, session_counts=counts, ages=ages, recent_sessions=len(recent),
        last_edited=last_edited & counts.keys(), mentioned=mentioned,
        terms={p: v / top for p, v in terms.items() if p in counts} if top > 0 else {}, context=ctx)


def score_parts(features: PrefetchFeatures, params: PrefetchParams = DEFAULT_PARAMS
                ) -> dict[str, dict[str, float]]:
    """Each component's weighted contribution per file (the score is their sum)."""
    f, p = features, params
    lam = min(1.0, max(0.0, p.short_share))
    parts: dict[str, dict[str, float]] = {"recent": {}, "frequency": {}, "work_state": {}, "mention": {},
                                          "terms": {}}
    for kind in ("uncommitted", "committed", "handoff", "handoff_named"):
        weight = float(getattr(p, kind))
        parts[kind] = {path: weight for path in f.context.get(kind, ())} if weight else {}
    for path, n in f.session_counts.items():
        short = decayed_share(f.ages.get(path, []), f.recent_sessions, p.half_life)
        if short:
            parts["recent"][path] = lam * short
        parts["frequency"][path] = (1 - lam) * n / (f.total_sessions + 2)  # +2: a smoothed share
    for path in f.last_edited:
        parts["work_state"][path] = p.last_edit
    for path in f.mentioned:
        parts["mention"][path] = p.mention
    for path, v in f.terms.items():
        parts["terms"][path] = p.terms * v
    return parts


def rank(features: PrefetchFeatures | None, params: PrefetchParams = DEFAULT_PARAMS, k: int = 10, *,
         exclude_missing_under: str | None = None) -> list[PrefetchItem]:
    """The ``k`` best files under ``params``, best first (ties by path, so stable)."""
    if features is None:
        return []
    parts = score_parts(features, params)
    scores: dict[str, float] = {}
    for values in parts.values():
        for path, v in values.items():
            scores[path] = scores.get(path, 0.0) + v
    out: list[PrefetchItem] = []
    for path, s in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])):
        if exclude_missing_under is not None and (os.path.isabs(path) or not os.path.exists(
                os.path.join(exclude_missing_under, path))):
            continue  # outside the project, or no longer in it
        out.append(PrefetchItem(path, round(s, 4), {n: round(v.get(path, 0.0), 3) for n, v in parts.items()}))
        if len(out) >= k:
            break
    return out


def prefetch_plan(conn: Any, prompt: str, k: int = 10, *, exclude_missing_under: str | None = None,
                  params: PrefetchParams = DEFAULT_PARAMS, context: StartContext | None = None
                  ) -> list[PrefetchItem]:
    """The ``k`` files a new session on ``prompt`` should read first, best first.

    ``conn`` is a read connection of the project database; ``context`` is what the
    session start knows (``start_context.start_context``). With ``exclude_missing_under``
    (the project folder), files that no longer exist there, and files outside it, are
    skipped, and files the history never saw are proposed when they exist there.
    """
    exists = None
    if exclude_missing_under is not None:
        root = exclude_missing_under
        exists = lambda rel: os.path.isfile(os.path.join(root, rel))  # noqa: E731
    feats = prefetch_features(conn, prompt, context, exists=exists)
    return rank(feats, params, k, exclude_missing_under=exclude_missing_under)


def _term_scores(conn: Any, terms: list[str], total: int) -> dict[str, float]:
    """Prompt words -> files, learned from earlier first prompts, IDF-weighted per word."""
    if not terms:
        return {}
    out: dict[str, float] = {}
    marks = ",".join("?" * len(terms))
    rows = conn.execute(f"SELECT term, file_path, weight, session_count FROM observer_term_files"
                        f" WHERE term IN ({marks})", terms).fetchall()
    by_term: dict[str, list[tuple[str, float, int]]] = {}
    for term, path, w, n in rows:
        by_term.setdefault(term, []).append((path, float(w), int(n)))
    for items in by_term.values():
        df = max(n for _, _, n in items)  # sessions whose prompt used the term
        idf = math.log(1 + total / df)
        mass = sum(w for _, w, _ in items)
        for path, w, _ in items:
            out[path] = out.get(path, 0.0) + idf * w / mass
    return out
