"""`engram list` starts lean: no numpy, networkx, ollama or onnxruntime (timings live in bench/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.hooks.conftest import REPO

HEAVY = ("numpy", "networkx", "ollama", "onnxruntime", "tokenizers", "PySide6", "sqlite_vec", "urllib.request")
PROBE = """
import io, contextlib, json, sys
sys.argv = ["engram", *json.loads(sys.argv[1])]
import desktop.cli.main as m
with contextlib.redirect_stdout(io.StringIO()):
    m.main()
print(json.dumps(sorted(sys.modules)))
"""


def _modules(args: list[str]) -> set[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args)], capture_output=True, text=True,
                          cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin"}, timeout=60)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("[")]
    assert lines, done.stderr
    return set(json.loads(lines[-1]))


def test_engram_list_imports_nothing_heavy(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    loaded = _modules(["list", "--project", str(tmp_path / "p"), "--data-dir", str(tmp_path / "d")])
    assert "desktop.memory.store" in loaded  # it did open the database
    assert not [m for m in HEAVY if m in loaded]


def test_graph_default_depth_matches_the_graph_package() -> None:
    from desktop.cli.graph_cmds import DEFAULT_DEPTH
    from desktop.memory.graph.closure import DEFAULT_DEPTH as REAL

    assert DEFAULT_DEPTH == REAL
