"""How Engram starts its own headless processes (hooks, the warm service, the MCP server).

Every one of these runs inside a folder an agent works in, which is a repository Engram
does not trust. ``python -m desktop.cli.main`` there puts that folder first on
``sys.path``: a repository shipping ``desktop/cli/main.py`` would run its own code as the
user on the first hook. So Engram is started by an absolute entry point that never looks
at the working folder:

* the frozen app: its own executable with :data:`CLI_FLAG` (a headless entry, no GUI);
* an installed Engram: the ``engram`` console script beside the running interpreter (a
  script puts its own ``bin/`` folder on ``sys.path``, not the working folder);
* otherwise this interpreter with ``-P`` (Python 3.11: never prepend the working folder
  or the script's folder), which keeps ``PYTHONPATH`` for a source checkout.

Processes Engram spawns itself also get a working folder and a ``PYTHONPATH`` that a
repository cannot influence (:func:`spawn_environment`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: The frozen app's argument that runs the command line instead of the window.
CLI_FLAG = "--cli"


def _console_script() -> Path | None:
    """The ``engram`` script installed beside this interpreter, when there is one."""
    folder = Path(sys.executable).parent
    for name in ("engram", "engram.exe", "engram-script.py"):
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def engram_argv() -> list[str]:
    """The absolute command that runs ``engram`` (the arguments follow), safe in any folder."""
    if getattr(sys, "frozen", False):
        return [str(Path(sys.executable).resolve()), CLI_FLAG]
    script = _console_script()
    if script is not None:
        return [str(script.absolute())]
    return [str(Path(sys.executable).absolute()), "-P", "-m", "desktop.cli.main"]


def hook_argv() -> list[str]:
    """The absolute command that runs ``engram`` for a hook (``hook EVENT ...`` follows): this
    interpreter isolated and without ``site``, on Engram's own hook entry point, which starts in
    half the time (``cli/engram_hook.py``). The frozen app runs itself, as for any command."""
    if getattr(sys, "frozen", False):
        return engram_argv()
    entry = Path(__file__).resolve().parent.parent / "cli" / "engram_hook.py"
    # The interpreter's path as it is, not resolved: a venv's python is a link, and the venv is
    # found from where the link is.
    return [str(Path(sys.executable).absolute()), "-I", "-S", str(entry)]


def spawn_environment() -> dict[str, str]:
    """This process's environment without the relative ``PYTHONPATH`` entries (``.``, ``''``)
    that would make a child import from whatever folder it starts in."""
    env = dict(os.environ)
    entries = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and os.path.isabs(p)]
    if entries:
        env["PYTHONPATH"] = os.pathsep.join(entries)
    else:
        env.pop("PYTHONPATH", None)
    return env
