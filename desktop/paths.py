"""Locate bundled read-only resources, from the source tree or a frozen app.

Engram ships data files (the tokenizer of the bundled embedding model,
translations, icons) in the repository's ``resources/`` folder. PyInstaller
unpacks the same folder under ``sys._MEIPASS``, so every caller goes through
:func:`resource_path` and never builds these paths by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["resource_path", "resources_root"]

# desktop/paths.py -> desktop/ -> repository root.
_SOURCE_ROOT = Path(__file__).resolve().parent.parent


def resources_root() -> Path:
    """Return the ``resources/`` folder of the running app.

    When frozen by PyInstaller (``sys.frozen`` is set) the bundle's data lives
    under ``sys._MEIPASS``; otherwise it is the repository's own folder.
    """
    if getattr(sys, "frozen", False):
        # _MEIPASS is the onedir folder or the onefile unpack dir; fall back to the
        # executable's folder for freezers that set `frozen` but not _MEIPASS.
        base = getattr(sys, "_MEIPASS", None) or Path(sys.executable).resolve().parent
        return Path(base) / "resources"
    return _SOURCE_ROOT / "resources"


def resource_path(*parts: str) -> Path:
    """Return the path of a bundled resource, e.g. ``resource_path("models", "x.json")``.

    The path is not checked for existence: callers decide whether a missing
    resource is an error (and which error code it maps to).
    """
    return resources_root().joinpath(*parts)
