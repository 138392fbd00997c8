"""Fixtures for the benchmarks written as pytest files (bench/gui_stall.py): the suite's own, reused."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "ui"))

from tests.conftest import _isolated_data_dir  # noqa: F401
from tests.ui.conftest import _no_modal_message_boxes, project_dir, tour_win, win  # noqa: F401
