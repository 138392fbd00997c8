"""The Qt UI type-checks: `mypy desktop/ui` (with the project's [tool.mypy] settings) reports nothing.

PySide6 ships type stubs, so a wrong widget type, an unchecked Optional (layout(),
model(), item()) or a signal shadowing a QObject method shows up here before it
shows up as a crash in a dialog nobody opened in the tests.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mypy  # noqa: F401  (a dev dependency: missing is an error, not a skip)

ROOT = Path(__file__).resolve().parents[2]


def test_ui_type_checks() -> None:
    result = subprocess.run([sys.executable, "-m", "mypy", "desktop/ui"], cwd=ROOT,
                            capture_output=True, text=True, timeout=280)
    output = result.stdout + result.stderr
    print(output)
    assert result.returncode == 0, f"mypy desktop/ui failed:\n{output}"
