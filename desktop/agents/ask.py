"""Ask Memory and "why was this retrieved": the real retrieval pipeline, for every door.

The app's browser and Ask panel used to rank with a small ranker of their own (its
own source-trust table), so the app and the CLI could disagree. Now both go
through ``SearchService.search(explain=True)``; this module only shapes the answer
(a :class:`Hit` per result with its score parts) and, with a chat model, writes a
short cited answer. Blocking: call it off the GUI thread.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from desktop.memory.types import Memory

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.agents")


@dataclass
class Hit:
    """One retrieved memory with its total score and the parts that make it up."""

    memory: Memory
    score: float
    parts: dict[str, float] = field(default_factory=dict)
    multipliers: dict[str, float] = field(default_factory=dict)


@dataclass
class Answer:
    """Ask Memory's answer: text (empty with no model) and the ranked hits it cites."""

    text: str
    hits: list[Hit]
    used_llm: bool = False


def _hit(result: Any) -> Hit:
    ex = result.explanation
    parts = {**{k: float(v) for k, v in ex.partial.items()}, **{k: float(v) for k, v in ex.boosts.items()}}
    return Hit(result.memory, float(result.score), parts, {k: float(v) for k, v in ex.multipliers.items()})


def search(project: Project, text: str, *, limit: int = 20) -> list[Hit]:
    """Ranked memories for `text` from the project's SearchService, each with its score breakdown."""
    if not text.strip():
        return []
    response = project.search.search(text, limit=limit, explain=True)
    return [_hit(r) for r in response.results]


def explain(project: Project, memory: Memory, text: str) -> Hit | None:
    """The score breakdown of one memory for a query (None when the pipeline does not return it)."""
    return next((h for h in search(project, text, limit=60) if h.memory.id == memory.id), None)


def ask(project: Project, question: str, *, llm: Any | None = None, limit: int = 8) -> Answer:
    """Answer a question from memory; with no model, the ranked memories and their citations.

    With a provider the model writes a short answer citing memories as [Memory #ID: brief].
    """
    hits = search(project, question, limit=limit)
    if llm is None or not hits:
        return Answer("", hits, False)
    from desktop.agents.messages import ChatMessage

    context = "\n".join(f"{h.memory.citation()} {h.memory.content}" for h in hits)
    messages = [ChatMessage("system", "Answer from the project memories below only. Cite each memory you use "
                                      "exactly as [Memory #ID: brief]. Say so when they do not answer.\n\n"
                                      + context),
                ChatMessage("user", question)]
    try:
        turn = llm.chat(messages, [])
    except Exception as exc:  # the ranked memories are still an answer
        log.warning("Ask Memory model call failed: %s", exc)
        return Answer("", hits, False)
    return Answer(turn.text.strip(), hits, True)


def llm_from_settings(settings: Any) -> Any | None:
    """The chat provider chosen in Settings, or None (no model, no key, runtime absent)."""
    name = getattr(settings, "llm_provider", "none")
    if name in ("", "none"):
        return None
    try:
        from desktop.agents.providers import make_provider

        return make_provider(name, settings=settings, model=getattr(settings, "llm_model", "") or "")
    except Exception as exc:
        log.info("no chat model for Ask Memory: %s", exc)
        return None
