"""T1 (session start) and T2 (prefetch plan): what the agent knows before its first step.

T1 goes into the system prompt: the always-inject tier (pinned, then critical;
capped), global and module memories, workflow recipes, work state, and any
contradicting pair flagged as a conflict. T2 goes into the first user message:
the files ``observer/prefetch.py`` ranks for the task (history, the task's words
and named files, the project's start state) whose score is at least what a file
read in half of all past sessions earns from history alone, at most 12 files and
at most the prefetch budget (25% of the context window).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from desktop.agents.errors import PathOutsideProject
from desktop.agents.injection.budget import Allocation, fast_tokens
from desktop.agents.injection.formatting import Section, conflict_lines, fit, render, shown_ids
from desktop.agents.tools.confine import ProjectRoot
from desktop.memory.text.tokens import count_tokens

log = logging.getLogger("engram.agents")

ALWAYS_SHARE = 0.8
FREQUENT_SHARE = 0.5
MAX_PREFETCH_FILES = 12
MAX_ALWAYS_INJECT = 5


@dataclass
class PrefetchedFile:
    """One file loaded into the first message."""

    path: str
    score: float  # observer/prefetch.py's ranking score
    kind: str  # likely (score >= ALWAYS_SHARE) | possible
    tokens: int
    truncated: bool


@dataclass
class PrefetchPlan:
    """The T2 plan: the files and the text that carries them."""

    files: list[PrefetchedFile] = field(default_factory=list)
    text: str = ""
    tokens: int = 0

    @property
    def paths(self) -> list[str]:
        """Project-relative paths of the prefetched files."""
        return [f.path for f in self.files]


@dataclass
class StartContext:
    """Everything injected before the first step."""

    system_text: str = ""
    sections: list[Section] = field(default_factory=list)  # what system_text renders, for callers that merge
    memory_ids: list[int] = field(default_factory=list)
    conflicts: list[tuple[int, int]] = field(default_factory=list)
    prefetch: PrefetchPlan = field(default_factory=PrefetchPlan)
    tokens_t1: int = 0
    modules: list[str] = field(default_factory=list)
    elapsed_ms: float = 0.0


def modules_of(paths: list[str]) -> list[str]:
    """Module names a file list suggests: its top folders and parent folders."""
    out: dict[str, None] = {}
    for p in paths:
        parts = PurePosixPath(p).parts
        if len(parts) > 1:
            out.setdefault(parts[0], None)
            out.setdefault("/".join(parts[:-1]), None)
    return list(out)


def min_prefetch_score() -> float:
    """The bar for loading a whole file into the first message (ranker scores are not shares).

    It is the score a file read in half of all past sessions earns from its all-time share
    alone; recency, the task's words and named files lift other files over it.
    """
    # Imported here: the ranker pulls in the observer, which hook processes rarely need.
    from desktop.memory.observer.prefetch import DEFAULT_PARAMS

    return (1 - DEFAULT_PARAMS.short_share) * FREQUENT_SHARE


def build_prefetch(memory: Any, task: str, root: ProjectRoot, budget_tokens: int, *,
                   exclude: set[str] | None = None) -> PrefetchPlan:
    """Choose, in the ranker's order for ``task``, and read the prefetch files within ``budget_tokens``."""
    plan = PrefetchPlan()
    bar = min_prefetch_score()
    candidates = [(p, s) for p, s in memory.prefetch_candidates(task) if s >= bar
                  and p not in (exclude or set())]
    blocks: list[str] = []
    used = 0
    for path, score in candidates:
        if len(plan.files) >= MAX_PREFETCH_FILES or used >= budget_tokens:
            break
        try:
            real = root.resolve(path)
            if not real.is_file():
                continue
            text = real.read_text(encoding="utf-8", errors="replace")
        except (PathOutsideProject, OSError):
            continue
        cost = fast_tokens(text)
        truncated = False
        if used + cost > budget_tokens:
            room = budget_tokens - used
            if room < 200:  # a sliver of a file helps nobody
                continue
            text = text[: room * 4]
            cost, truncated = fast_tokens(text), True
        kind = "likely" if score >= ALWAYS_SHARE else "possible"
        head = f"=== {path} (prefetch score {score:.2f}{', truncated' if truncated else ''}) ==="
        blocks.append(f"{head}\n{text}")
        plan.files.append(PrefetchedFile(path, score, kind, cost, truncated))
        used += cost
    if blocks:
        plan.text = ("Files past sessions and this task suggest you will need, already loaded for you "
                     "(no need to Read them again):\n\n" + "\n\n".join(blocks))
        plan.tokens = used + 30
    return plan


def build_start_context(memory: Any, task: str, root: ProjectRoot, fmt: str, alloc: Allocation, *,
                        prefetch: bool = True, phase: str | None = None,
                        min_confidence: float | None = None) -> StartContext:
    """T1 and (with ``prefetch``) T2 for a session on ``task``.

    Relevant memories come from the retrieval pipeline with the session's ``phase``,
    the prefetched files as touched files (graph path) and the trust level's
    ``min_confidence`` floor, which also applies to the always-inject tier (pinned excepted).
    """
    from desktop.memory.triggers.warn import is_lesson

    started = time.perf_counter()
    ctx = StartContext()
    if prefetch:
        ctx.prefetch = build_prefetch(memory, task, root, alloc.prefetch)
    candidates = memory.prefetch_candidates(task) if not prefetch else []
    ctx.modules = modules_of(ctx.prefetch.paths or [p for p, _ in candidates])
    floor = min_confidence if min_confidence is not None else 0.0
    always = fit([m for m in memory.always_inject(MAX_ALWAYS_INJECT) if m.pinned or m.confidence >= floor],
                 alloc.always_inject)
    seen = {m.id for m in always}
    found = memory.search(task, limit=8, phase=phase, touched_files=ctx.prefetch.paths,
                          min_confidence=min_confidence) if task.strip() else []
    # A lesson waits for its own moment (the core's is_lesson), as at the hooks' start and prompt.
    relevant = [m for m in found if m.id not in seen and not is_lesson(m)]
    seen |= {m.id for m in relevant}
    scoped = [m for m in memory.scoped(ctx.modules, 8) if m.id not in seen and (m.pinned or m.confidence >= floor)
              and not is_lesson(m)]
    general = fit(relevant + scoped, alloc.retrieval, phase)
    seen = {m.id for m in always} | {m.id for m in general}
    work = fit([m for m in memory.work_state(3) if m.id not in seen], alloc.work_state)
    seen |= {m.id for m in work}
    # Recipe memories carry their id like every other memory; learned tool sequences are not memories.
    recipes = [m for m in memory.recipe_memories(task, 2) if m.id not in seen]
    learned = memory.learned_recipes(2 - len(recipes)) if len(recipes) < 2 else []
    pairs = memory.conflicts(always + general + work)
    flagged = {m.id for pair in pairs for m in pair}
    sections = [
        Section("Always remember", always, conflicts=flagged),
        Section("Relevant to this task", general, conflicts=flagged),
        Section("Where the last session stopped", work, conflicts=flagged),
        Section("Workflow recipes that worked here", recipes, lines=learned),
        Section("Conflicting memories", lines=conflict_lines(pairs)),
    ]
    ctx.sections = sections
    ctx.system_text = render(sections, fmt)
    ctx.memory_ids = shown_ids(sections)
    ctx.conflicts = [(a.id, b.id) for a, b in pairs]
    ctx.tokens_t1 = count_tokens(ctx.system_text) if ctx.system_text else 0
    ctx.elapsed_ms = (time.perf_counter() - started) * 1000
    return ctx
