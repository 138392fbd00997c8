"""Locate bundled read-only resources: source tree, installed wheel or frozen app.

Engram ships data files (the tokenizer of the bundled embedding model, the
int8 model when built, translations, icons, the style sheet) in the
repository's top-level ``resources/`` folder. The same folder is found in
three layouts, and every caller goes through :func:`resource_path` instead of
building these paths by hand:

* a frozen app (PyInstaller): unpacked under ``sys._MEIPASS/resources``;
* an installed wheel: setup.py maps the folder onto the package
  ``desktop.resources``, found through ``importlib.resources``;
* the source tree (checkout, editable install): ``<repository>/resources``.
"""

from __future__ import annotations

import importlib.resources
import sys
from pathlib import Path

__all__ = ["bundled_tokenizer_path", "resource_path", "resources_root"]

# desktop/paths.py -> desktop/ -> repository root.
_SOURCE_ROOT = Path(__file__).resolve().parent.parent


def _installed_root() -> Path | None:
    """Return ``desktop/resources`` of an installed wheel, or None in a source tree.

    ``desktop`` is a regular package installed as plain files (never zipped: its
    native dependencies need real files too), so the Traversable is a real folder.
    """
    try:
        root = Path(str(importlib.resources.files("desktop").joinpath("resources")))
    except (ModuleNotFoundError, TypeError):
        return None
    return root if root.is_dir() else None


def resources_root() -> Path:
    """Return the ``resources/`` folder of the running app.

    When frozen by PyInstaller (``sys.frozen`` is set) the bundle's data lives
    under ``sys._MEIPASS``; an installed wheel carries it as ``desktop/resources``;
    otherwise it is the repository's own folder.
    """
    if getattr(sys, "frozen", False):
        # _MEIPASS is the onedir folder or the onefile unpack dir; fall back to the
        # executable's folder for freezers that set `frozen` but not _MEIPASS.
        base = getattr(sys, "_MEIPASS", None) or Path(sys.executable).resolve().parent
        return Path(base) / "resources"
    return _installed_root() or _SOURCE_ROOT / "resources"


def resource_path(*parts: str) -> Path:
    """Return the path of a bundled resource, e.g. ``resource_path("models", "x.json")``.

    The path is not checked for existence: callers decide whether a missing
    resource is an error (and which error code it maps to).
    """
    return resources_root().joinpath(*parts)


def bundled_tokenizer_path() -> Path:
    """Return the ``tokenizer.json`` of the bundled embedding model (all-MiniLM-L6-v2).

    Here rather than beside the model code: the context packer counts tokens with it,
    and must not import the embedding package (numpy) to find it.
    """
    return resource_path("models", "all-minilm-l6-v2", "tokenizer.json")
