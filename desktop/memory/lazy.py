"""Lazy package exports (PEP 562), one implementation for every package that uses them.

A package maps each public name to the submodule defining it; the submodule is
imported on first access, so a short-lived process (a hook, ``engram list``) loads
only what it touches.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports ``package.<where[name]>`` on first use."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__
