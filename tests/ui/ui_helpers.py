"""Helpers shared by the desktop tests: sample memories."""

from __future__ import annotations

from desktop.memory.store.memory_ops import NewMemory

SAMPLES = [
    ("gotcha", "Discounts are applied before tax in cart.py", ["shop/cart.py"], 0.92),
    ("decision", "Money is stored as integer cents in models.py", ["shop/models.py"], 0.95),
    ("dead_end", "Caching cart totals in a module dict broke concurrent checkouts", ["shop/cart.py"], 0.9),
    ("workflow_recipe", "Run the cart tests with pytest tests/test_cart.py", [], 0.85),
    ("error_pattern", "Cart tests hang without REDIS_URL set", ["tests/test_cart.py"], 0.88),
    ("preference", "Keep cart functions short and pure", ["shop/cart.py"], 0.9),
    ("requirement", "Cart prices must always include VAT", ["shop/cart.py"], 0.97),
]


def seed(window: object, *, extra: list[NewMemory] | None = None) -> list[int]:
    """Add the sample memories; returns their ids."""
    items = [NewMemory(content=c, type=t, related_files=f, confidence=conf) for t, c, f, conf in SAMPLES]
    results = window.project.memories.add_many(items + (extra or [])).result()  # type: ignore[attr-defined]
    return [r.id for r in results]
