"""Run git in a test repository (shared by test folders; never via a ``conftest`` import)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(repo: Path, *args: str) -> str:
    """Run ``git -C repo args...`` and return its stdout; raise if it fails."""
    done = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True)
    return done.stdout
