"""The one thing pyproject.toml cannot say: ship the top-level ``resources/`` inside the wheel.

The repository keeps its run-time data (tokenizer, int8 model, translations, icons, style
sheet) in ``resources/`` at the top level, where the source tree and the PyInstaller spec
expect it. A wheel only carries packages, so that folder is mapped onto the package
``desktop.resources`` (``site-packages/desktop/resources/``), where
:func:`desktop.paths.resources_root` finds it through ``importlib.resources``.
Everything else about the project is declared in pyproject.toml.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import find_packages, setup

ROOT = Path(__file__).resolve().parent
# Without the tokenizer the installed app cannot search: refuse to build a broken wheel.
REQUIRED = ("models/all-minilm-l6-v2/tokenizer.json",)
missing = [name for name in REQUIRED if not (ROOT / "resources" / name).is_file()]
if missing:
    raise SystemExit(f"resources/ is incomplete, missing: {', '.join(missing)}")

# Folders of resources/ with importable names are declared as (data-only) packages too, as
# setuptools asks of data folders inside a package; names like all-minilm-l6-v2 are not importable
# and ride along through the recursive glob of their parent.
DATA_FOLDERS = sorted(
    folder.relative_to(ROOT / "resources").parts
    for folder in (ROOT / "resources").rglob("*")
    if folder.is_dir() and all(part.isidentifier() for part in folder.relative_to(ROOT / "resources").parts)
)
DATA_PACKAGES = ["desktop.resources", *("desktop.resources." + ".".join(parts) for parts in DATA_FOLDERS)]

setup(
    packages=[*find_packages(include=["desktop", "desktop.*"]), *DATA_PACKAGES],
    package_dir={"desktop.resources": "resources"},
    # Recursive glob: models/, i18n/ (the compiled .qm), icons/, styles/. The int8-MatMul model
    # (packaging/quantize_model.py, gitignored) is carried when it was built before the wheel.
    package_data={"desktop.resources": ["**/*"]},
    exclude_package_data={"desktop.resources": ["**/__pycache__/*", "**/*.pyc"]},
)
