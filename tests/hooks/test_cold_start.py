"""`engram list` and the inline hooks start lean: no numpy, networkx, ollama, onnxruntime or tokenizers
(timings live in bench/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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


# A hook ends with os._exit (threads past the budget must not hold the agent): list the modules there.
HOOK_PROBE = """
import json, os, sys
real_exit = os._exit
def listing_exit(code):
    sys.stdout.write("\\n" + json.dumps(sorted(sys.modules)) + "\\n")
    sys.stdout.flush()
    real_exit(code)
os._exit = listing_exit
sys.argv = ["engram", *json.loads(sys.argv[1])]
import desktop.cli.main as m
m.main()
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
    assert "desktop.cli.search_cmds" not in loaded  # a core command builds only the core commands' parser


@pytest.mark.parametrize(("event", "native", "fields", "shown"), [
    ("session-start", "SessionStart", {"source": "startup"}, "pinned"),
    ("prompt", "UserPromptSubmit", {"prompt": "Is the refund webhook handler idempotent?"}, "prompt"),
])
def test_inline_hooks_import_nothing_heavy(event: str, native: str, fields: dict[str, str], shown: str,
                                           payments_dir: Path, data_dir: Path, memories: dict[str, int],
                                           tmp_path: Path) -> None:
    """Without the service, a hook answers from FTS5 and packs with the vocabulary: no model, no numpy."""
    payload = {"session_id": f"cold-{event}", "cwd": str(payments_dir), "hook_event_name": native, **fields}
    done = subprocess.run([sys.executable, "-c", HOOK_PROBE, json.dumps(["hook", event, "--data-dir", str(data_dir)])],
                          input=json.dumps(payload), capture_output=True, text=True, cwd=REPO, timeout=60,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin", "HOME": str(tmp_path),
                               "ENGRAM_HOOK_NO_SERVICE": "1"})
    answer, listing = done.stdout.rstrip().rsplit("\n", 1)
    context = json.loads(answer)["hookSpecificOutput"]["additionalContext"]
    assert f'<memory id="{memories[shown]}"' in context  # it did answer, with the memory
    loaded = set(json.loads(listing))
    assert not [m for m in HEAVY if m in loaded]
    assert "argparse" not in loaded  # the usual command line is read by hand (~15 ms a process)


def test_graph_default_depth_matches_the_graph_package() -> None:
    from desktop.cli.graph_cmds import DEFAULT_DEPTH
    from desktop.memory.graph.closure import DEFAULT_DEPTH as REAL

    assert DEFAULT_DEPTH == REAL
