"""What pyproject.toml cannot say: ship the top-level ``resources/`` inside the wheel, translations compiled.

The repository keeps its run-time data (tokenizer, int8 model, translations, icons, style
sheet) in ``resources/`` at the top level, where the source tree and the PyInstaller spec
expect it. A wheel only carries packages, so that folder is mapped onto the package
``desktop.resources`` (``site-packages/desktop/resources/``), where
:func:`desktop.paths.resources_root` finds it through ``importlib.resources``.

The compiled translations (``*.qm``) are build products, never committed: ``build_py``
compiles ``i18n/*.ts`` into the build's ``desktop/resources/i18n/`` with Qt's lrelease
(PySide6, a build requirement), so a wheel built from a fresh checkout speaks French too.
Everything else about the project is declared in pyproject.toml.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

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



def _lrelease() -> list[str]:
    """Qt's lrelease from PySide6 (beside this interpreter, on PATH, or through PySide6's own launcher)."""
    for candidate in (Path(sys.executable).parent / "pyside6-lrelease", shutil.which("pyside6-lrelease")):
        if candidate and Path(candidate).exists():
            return [str(candidate)]
    return [sys.executable, "-c", "import sys; from PySide6.scripts.pyside_tool import lrelease; sys.exit(lrelease())"]


class BuildWithTranslations(build_py):
    """build_py, then every ``i18n/engram_*.ts`` compiled into the build's ``desktop/resources/i18n/``."""

    def run(self) -> None:
        super().run()
        sources = sorted((ROOT / "i18n").glob("engram_*.ts"))
        if not sources:
            return  # an sdist without the sources: the .qm it carries in resources/ were copied above
        target = Path(self.build_lib) / "desktop" / "resources" / "i18n"
        target.mkdir(parents=True, exist_ok=True)
        for ts in sources:
            done = subprocess.run([*_lrelease(), str(ts), "-qm", str(target / f"{ts.stem}.qm")],
                                  capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise SystemExit(f"cannot compile {ts.name} (is PySide6 installed?): {done.stderr.strip()[-300:]}")


class SdistWithTranslationSources(sdist):
    """An sdist carries ``i18n/*.ts``, so the wheel built from it compiles them too."""

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        for ts in sorted((ROOT / "i18n").glob("engram_*.ts")):
            (Path(base_dir) / "i18n").mkdir(exist_ok=True)
            shutil.copy2(ts, Path(base_dir) / "i18n" / ts.name)


setup(
    cmdclass={"build_py": BuildWithTranslations, "sdist": SdistWithTranslationSources},
    packages=[*find_packages(include=["desktop", "desktop.*"]), *DATA_PACKAGES],
    package_dir={"desktop.resources": "resources"},
    # Recursive glob: models/, i18n/ (the compiled .qm), icons/, styles/. The int8-MatMul model
    # (packaging/quantize_model.py, gitignored) is carried when it was built before the wheel.
    package_data={"desktop.resources": ["**/*"]},
    exclude_package_data={"desktop.resources": ["**/__pycache__/*", "**/*.pyc"]},
)
