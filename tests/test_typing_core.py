"""The core type-checks: mypy on the memory engine, agents, CLI and app wiring reports nothing.

Runs with the project's [tool.mypy] settings (check_untyped_defs, warn_unused_ignores),
so an unchecked Optional, a row value used as the wrong type or a stale
``# type: ignore`` shows up here, not as a crash in a code path the tests miss.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mypy  # noqa: F401  (a dev dependency: missing is an error, not a skip)

ROOT = Path(__file__).resolve().parents[1]
CORE_PATHS = ["desktop/memory", "desktop/agents", "desktop/cli", "desktop/composition.py", "desktop/settings.py"]


def test_core_type_checks() -> None:
    result = subprocess.run([sys.executable, "-m", "mypy", *CORE_PATHS], cwd=ROOT,
                            capture_output=True, text=True, timeout=280)
    output = result.stdout + result.stderr
    print(output)
    assert result.returncode == 0, f"mypy {' '.join(CORE_PATHS)} failed:\n{output}"
