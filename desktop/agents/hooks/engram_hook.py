"""The hook's own entry point: ``python -I -S .../engram_hook.py hook EVENT --agent A ...``.

An agent starts a new process for every hook, tool calls included, and most of a hook answered
by the warm service is that start. ``site`` is most of it: the site-packages folders, their
``.pth`` files and an editable install's import finder cost ~30 ms before the first line of
Engram runs (``python -c pass`` 41 / 60 ms at p50 / p95, with ``-I -S`` 14 / 29 ms, on this
machine). So the installed hook command runs the interpreter isolated (``-I``: no ``PYTHON*``
variable, no user site, neither the working folder nor this file's folder on ``sys.path``) and
without ``site`` (``-S``), and this file puts the folder Engram is installed in, found from its
own absolute path, first on ``sys.path``: the lean client (``client.quick_hook``) needs nothing
else. When the service cannot answer, ``site`` is set up then (the venv's packages: the full
runner needs the database and the models) and the full runner answers, as ``engram hook`` does.

A repository an agent works in never chooses the code: the path is absolute, the working folder
is not on ``sys.path``, and ``PYTHONPATH`` is ignored.
"""

import os
import sys


def main(argv: list[str]) -> int:
    """Answer one hook (``argv``: ``hook EVENT --agent A ...``); exits 0 whatever happens."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    sys.path.insert(0, root)
    args = argv[1:] if argv[:1] == ["hook"] else argv
    from desktop.agents.hooks.client import quick_hook, read_stdin, silence_stderr

    silence_stderr()
    stdin = b""
    try:
        stdin = read_stdin()
        if quick_hook(args, stdin):
            os._exit(0)  # nothing left to wait for; skip the interpreter's shutdown
    except Exception:  # the full runner below answers (or stays silent) whatever happened here
        pass
    import site

    site.main()  # the venv's packages, after Engram's own folder (already first)
    from desktop.cli import hook_cmds

    return hook_cmds.run_hook_command(args, stdin)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
