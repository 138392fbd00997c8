"""The guided tour: a small sample project Engram creates for itself, and its scripted agent.

The tour's agent is Engram's own agent loop (``AgentSession``: injection, tools, the
observer, feedback) with a scripted model instead of a real one (:class:`TourScript`):
it searches memory, looks at the code graph, records what it learned and answers citing
what it used. It runs only on the sample project: it changes nothing, so it must not
claim work in a user's project. The sample lives under the data folder
(``tour/shopfront``), is created once, and is clearly named. The app (Help > Guided Tour)
and ``engram tour`` run the same :func:`tour_session`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.store.errors import EngramError

if TYPE_CHECKING:
    from desktop.agents.messages import ChatMessage
    from desktop.agents.session import AgentSession
    from desktop.agents.session_types import SessionEvent
    from desktop.memory.preferences import ProjectPrefs
    from desktop.memory.project import Project

log = logging.getLogger("engram.app")

TOUR_DIR = "tour"
SAMPLE_NAME = "shopfront (Engram tour)"
_FILES = {
    "shop/__init__.py": "",
    "shop/models.py": ('"""Money is stored as integer cents."""\n\n\nclass Product:\n'
                       '    def __init__(self, name: str, cents: int) -> None:\n'
                       '        self.name = name\n        self.cents = cents\n'),
    "shop/cart.py": ('"""The cart: discounts are applied before tax, per line."""\n\n'
                     'from shop.models import Product\n\n\n'
                     'def line_total(product: Product, qty: int, discount: float = 0.0) -> int:\n'
                     '    return round(product.cents * qty * (1 - discount))\n\n\n'
                     'def total(lines: list[tuple[Product, int]], vat: float = 0.2) -> int:\n'
                     '    return round(sum(line_total(p, q) for p, q in lines) * (1 + vat))\n'),
    "tests/test_cart.py": ("from shop.cart import total\nfrom shop.models import Product\n\n\n"
                           "def test_total_includes_vat() -> None:\n"
                           "    assert total([(Product('pen', 100), 2)]) == 240\n"),
    "README.md": "# shopfront\n\nA sample project created by Engram for its guided tour. Safe to delete.\n",
}
_MEMORIES = [
    ("gotcha", "Discounts are applied before tax in shop/cart.py, per line", ["shop/cart.py"]),
    ("decision", "Money is stored as integer cents in shop/models.py", ["shop/models.py"]),
    ("dead_end", "Caching cart totals in a module dict broke concurrent checkouts", ["shop/cart.py"]),
    ("workflow_recipe", "Run the cart tests with pytest tests/test_cart.py", ["tests/test_cart.py"]),
    ("requirement", "Cart prices must always include VAT", ["shop/cart.py"]),
]


# A task the sample project's memories answer: the tour suggests it, the user may type their own.
SUGGESTED_TASK = "Fix the checkout discount bug in cart.py"


def tour_root(data_dir: Path | str) -> Path:
    """Where the sample project lives (inside Engram's data folder, never in the user's projects)."""
    return Path(data_dir) / TOUR_DIR / "shopfront"


def is_tour_project(project: Project) -> bool:
    """True when `project` is the tour's sample project."""
    try:
        return Path(project.info.root).resolve() == tour_root(project.settings.data_dir).resolve()
    except OSError:
        return False


def create_sample(data_dir: Path | str) -> Path:
    """Write the sample project's files (once; existing files are left alone). Returns its folder."""
    root = tour_root(data_dir)
    for rel, text in _FILES.items():
        path = root / rel
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    return root


def seed_sample(project: Project) -> int:
    """Give the opened sample project its starting memories (idempotent: duplicates reinforce). Blocking."""
    if not is_tour_project(project):
        raise ValueError("only the tour's sample project is seeded")
    from desktop.memory.store.memory_ops import NewMemory

    items = [NewMemory(content=c, type=t, related_files=f, confidence=0.9, source="imported",
                       tags=["tour"]) for t, c, f in _MEMORIES]
    results = project.memories.add_many(items, actor="engram", reason="guided tour sample").result(30)
    return sum(1 for r in results if r.created)


class NotTheTour(EngramError):
    """The scripted tour agent was asked to run on a project that is not the tour's sample."""

    code = "tour_only"


_FOUND = re.compile(r"^#(\d+) \[", re.M)


class TourScript:
    """The tour agent's turns: search memory, look at the code graph, record, answer citing what it used.

    A :class:`~desktop.agents.providers.scripted.ScriptedProvider` asks it for each turn with the
    conversation so far; it reads what its search found from the tool result, like a model would.
    """

    def __init__(self, project: Project, threshold: float) -> None:
        """``threshold``: the trust level's floor; memories below it are not used in the answer."""
        self.project = project
        self.threshold = threshold

    def __call__(self, messages: list[ChatMessage], index: int) -> dict[str, Any]:
        """The turn at ``index`` of the session whose conversation is ``messages``."""
        task = next((m.content for m in messages if m.role == "user"), "").split("\n\n", 1)[0].strip()
        results = [m.content for m in messages if m.role == "tool" and m.name == "search_memory"]
        found = self._used(results[0]) if results else []
        target = next((f for m in found for f in m.related_files), None)
        plan: list[dict[str, Any]] = [{"tool_calls": [{"name": "search_memory", "arguments": {"query": task}}]}]
        if target:
            plan.append({"tool_calls": [{"name": "analyze_impact", "arguments": {"target": target}}]})
        if found:
            cited = ", ".join(f"#{m.id}" for m in found[:4])
            plan.append({"tool_calls": [{"name": "record_memory", "arguments": {
                "type": "work_unit_outcome", "files": [],
                "content": f"For “{redact_then_cut(task, 120)}”, memories {cited} held what was needed; "
                           f"no file was changed (the tour agent only reads)."}}]})
        plan.append({"text": self._answer(task, found)})
        return plan[min(index, len(plan) - 1)]

    def _used(self, result: str) -> list[Any]:
        ids = [int(i) for i in _FOUND.findall(result)]
        known = self.project.memories.get_many(ids)
        return [known[i] for i in ids if i in known and (known[i].confidence > self.threshold or known[i].pinned)][:8]

    @staticmethod
    def _answer(task: str, found: list[Any]) -> str:
        lines = [f"Working on: {task}\n"]
        if not found:
            lines.append("I found nothing in memory about this, so I would explore the code from scratch.")
        else:
            lines.append("Here is what memory already tells me:")
            lines += [f"- {m.citation()} " + ("this path was tried before and abandoned, so I will avoid it."
                                              if m.type == "dead_end" else "I will follow this.") for m in found]
        lines.append("\nThis is the guided tour: I only read, so no file changes. A real agent would now make the "
                     "change and run the tests with these memories in mind.")
        return "\n".join(lines)


def tour_session(project: Project, task: str, *, on_event: Callable[[SessionEvent], None] | None = None,
                 prefs: ProjectPrefs | None = None, pace: float = 0.0) -> AgentSession:
    """The tour's agent on ``task``: Engram's own agent loop with the scripted model, on the sample project only.

    It may neither write files nor run commands. The project's preferences (``prefs``, else
    the stored ones) set the trust level's floor and whether what it records may become a
    candidate memory, as for every agent. Raises :class:`NotTheTour` anywhere else.
    """
    if not is_tour_project(project):
        raise NotTheTour("The scripted tour agent runs only on the tour's sample project.")
    prefs = prefs or project.preferences.load()
    threshold, learn = prefs.injection_floor(), prefs.agents_may_learn()
    from desktop.agents.providers.scripted import ScriptedProvider
    from desktop.agents.session import AgentSession
    from desktop.agents.session_types import SessionConfig

    provider = ScriptedProvider(TourScript(project, threshold), model="engram-tour", pace=pace)
    config = SessionConfig(task=task, provider=provider, ab_group="full", session_type="tour", max_steps=8,
                           min_confidence=threshold, learn=learn, promote=learn)
    return AgentSession(project, config, on_event=on_event)
