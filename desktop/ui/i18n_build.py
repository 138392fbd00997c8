"""Compile the translation sources in i18n/*.ts into resources/i18n/*.qm.

Run as `python -m desktop.ui.i18n_build` (the set-up scripts and the PyInstaller
build do). `--update` first refreshes the .ts sources from the code with lupdate.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import subprocess
import sys
from pathlib import Path

log = logging.getLogger("engram.i18n")

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "i18n"
OUTPUT = ROOT / "resources" / "i18n"
LANGUAGES = ("en", "fr")


def tool(name: str) -> str:
    """Path of a PySide6 tool (pyside6-lupdate / pyside6-lrelease) next to this interpreter."""
    here = Path(sys.executable).parent / name
    if here.exists():
        return str(here)
    found = shutil.which(name)
    if not found:
        raise FileNotFoundError(f"{name} not found; install PySide6-Essentials")
    return found


def ui_sources() -> list[Path]:
    """Python files whose strings are translated."""
    return sorted(p for p in (ROOT / "desktop" / "ui").rglob("*.py") if p.name != "i18n_build.py")


def update_sources(extra_args: list[str] | None = None, targets: list[Path] | None = None) -> None:
    """Run lupdate over the UI code into the .ts files (keeps existing translations)."""
    ts_files = targets or [SOURCES / f"engram_{lang}.ts" for lang in LANGUAGES]
    cmd = [tool("pyside6-lupdate"), *map(str, ui_sources()), "-ts", *map(str, ts_files)]
    subprocess.run(cmd + (extra_args or []), check=True, capture_output=True)


def compile_all(output: Path = OUTPUT) -> list[Path]:
    """lrelease every .ts into .qm files; returns the .qm paths."""
    output.mkdir(parents=True, exist_ok=True)
    out = []
    for ts in sorted(SOURCES.glob("engram_*.ts")):
        qm = output / (ts.stem + ".qm")
        subprocess.run([tool("pyside6-lrelease"), str(ts), "-qm", str(qm)], check=True, capture_output=True)
        out.append(qm)
    return out


def main() -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--update", action="store_true", help="refresh .ts sources from the code first")
    args = parser.parse_args()
    if args.update:
        update_sources()
    for qm in compile_all():
        log.info("compiled %s", qm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
