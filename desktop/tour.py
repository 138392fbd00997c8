"""The guided tour: a small sample project Engram creates for itself, with a few memories.

The scripted (model-free) agent runs only here. It used to be the app's default
provider and wrote a "Session outcome" memory into the user's real project although
it changed nothing; now a user's project never sees it. The sample lives under the
data folder (``tour/shopfront``), is created once, and is clearly named.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
    except (AttributeError, OSError):
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
