"""Fixtures of the attack tests: the hook tests' real ``engram hook`` processes and project."""

from __future__ import annotations

from tests.hooks.conftest import data_dir, engram_bin, hook_env, payments_dir  # noqa: F401
from tests.hooks.conftest import memories as payment_memories  # noqa: F401
