"""A wheel built from the repository, installed into a fresh venv, works as a user's install.

Issue 17: the wheel used to carry only ``desktop/``; ``engram search`` then died with a
traceback (``tokenizer not found: .../site-packages/resources/...``). Here the wheel is
built from a copy of the project files (the checkout is left untouched), installed
with pip into a new virtual environment, and the commands run from that venv's
``bin/`` with the working directory outside the repository.

To stay offline and fast (~20 s instead of downloading PySide6, onnxruntime, ...),
the fresh venv sees this interpreter's site-packages through a ``.pth`` line, the
way a system-site-packages venv would; pip still resolves the wheel's declared
dependencies against them (``--no-index``), so a bound nothing installed satisfies
fails here too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECT_FILES = ("pyproject.toml", "setup.py", "LICENSE", "README.md")
PROJECT_DIRS = ("desktop", "resources", "i18n")
TOKENIZER = "desktop/resources/models/all-minilm-l6-v2/tokenizer.json"

pytestmark = pytest.mark.slow


def _purelib(python: Path) -> Path:
    """The site-packages folder of the venv whose interpreter is ``python``."""
    return Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())


def _run(cmd: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
         check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a command with no stdin (as in CI) and return its completed process."""
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=240)
    if check and proc.returncode != 0:
        raise AssertionError(f"{cmd} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the wheel from a copy of the project files (no build isolation: offline)."""
    src = tmp_path_factory.mktemp("src")
    for name in PROJECT_FILES:
        shutil.copy2(ROOT / name, src / name)
    for name in PROJECT_DIRS:
        # no compiled translations: a fresh checkout has none (*.qm are build products)
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.qm"))
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation", "--no-index",
          "-q", "-w", str(out)])
    (built,) = out.glob("engram_desktop-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    """A fresh venv with the wheel installed by pip; dependencies come from this interpreter's site-packages."""
    home = tmp_path_factory.mktemp("venv") / "v"
    _run([sys.executable, "-m", "venv", "--without-pip", str(home)])
    python = home / "bin" / "python"
    purelib = _purelib(python)
    # A path line, not an import line: the shared site-packages' own .pth files (an editable
    # install of this checkout among them) are NOT processed, so `desktop` can only come from the wheel.
    shared = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (purelib / "_engram_test_deps.pth").write_text("\n".join(sorted(shared)) + "\n")
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index", "-q", str(wheel)])
    return home


@pytest.fixture
def user_env(tmp_path: Path) -> dict[str, str]:
    """A user's environment: own HOME and data folder, no PYTHONPATH pointing at the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HOME=str(tmp_path / "home"), ENGRAM_DATA_DIR=str(tmp_path / "data"), PYTHONDONTWRITEBYTECODE="1")
    (tmp_path / "home").mkdir()
    return env


def test_the_wheel_carries_the_run_time_resources(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert TOKENIZER in names
    assert {"desktop/resources/styles/engram.qss", "desktop/resources/icons/app.svg"} <= names
    # compiled from i18n/*.ts while the wheel was built (issue 28: the wheel used to carry none)
    assert {"desktop/resources/i18n/engram_en.qm", "desktop/resources/i18n/engram_fr.qm"} <= names
    assert not any(n.startswith("resources/") for n in names)  # nothing lands at the top of site-packages
    assert "License-Expression: MIT AND Apache-2.0" in metadata
    assert "Requires-Dist: mcp<3,>=2" in metadata


def test_search_and_mcp_config_from_a_fresh_venv(venv: Path, user_env: dict[str, str], tmp_path: Path) -> None:
    engram = str(venv / "bin" / "engram")
    project = tmp_path / "project"
    project.mkdir()
    where = _run([str(venv / "bin" / "python"), "-c", "import desktop.paths as p; print(p.resources_root())"],
                 env=user_env, cwd=project).stdout.strip()
    assert where.startswith(str(venv)), where  # the installed copy, not the checkout

    _run([engram, "add", "The writer thread opens transactions with BEGIN IMMEDIATE"], env=user_env, cwd=project)
    found = _run([engram, "search", "--json", "which transactions does the writer open"], env=user_env, cwd=project)
    hits = json.loads(found.stdout)
    assert "BEGIN IMMEDIATE" in json.dumps(hits)

    config = json.loads(_run([engram, "mcp", "--print-config"], env=user_env, cwd=project).stdout)
    assert config["claude-code"]["project"]["json"]["mcpServers"]["engram"] == {"command": "engram", "args": ["mcp"]}
    assert config["codex"]["user"]["toml"].count(str(venv / "bin" / "engram")) == 1

    french = _run([str(venv / "bin" / "python"), "-c",
                   "from PySide6.QtCore import QCoreApplication, QTranslator\n"
                   "from desktop.paths import resource_path\n"
                   "app = QCoreApplication([])\n"
                   "t = QTranslator()\n"
                   "assert t.load('engram_fr', str(resource_path('i18n'))), resource_path('i18n')\n"
                   "print(t.translate('WindowMenus', '&Quit'))\n"], env=user_env, cwd=project)
    assert french.stdout.strip() not in ("", "&Quit"), french.stdout

    doctor = _run([engram, "doctor", "--json"], env=user_env, cwd=project)
    report = json.loads(doctor.stdout)
    assert report["ok"] and {c["name"] for c in report["checks"]} == {"tokenizer", "embedding_model", "vec0",
                                                                       "grammars"}


def test_a_broken_install_says_so_in_one_line(venv: Path, user_env: dict[str, str], tmp_path: Path) -> None:
    tokenizer = _purelib(venv / "bin" / "python") / TOKENIZER
    kept = tokenizer.with_suffix(".kept")
    tokenizer.rename(kept)
    try:
        engram = str(venv / "bin" / "engram")
        _run([engram, "add", "a memory to search for"], env=user_env, cwd=tmp_path)
        search = _run([engram, "search", "memory"], env=user_env, cwd=tmp_path, check=False)
        assert search.returncode == 2
        assert "Traceback" not in search.stderr and search.stderr.count("\n") == 1, search.stderr
        assert search.stderr.startswith("engram: ") and "model_not_found" in search.stderr

        doctor = _run([engram, "doctor"], env=user_env, cwd=tmp_path, check=False)
        assert doctor.returncode == 1 and "FAILED  tokenizer" in doctor.stdout
        assert "Traceback" not in doctor.stderr
    finally:
        kept.rename(tokenizer)
