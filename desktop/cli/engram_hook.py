"""The hook's own entry point: ``python -I -S …/desktop/cli/engram_hook.py hook EVENT --agent A …``.

An agent starts a new process for every hook, tool calls included, and most of a hook answered
by the warm service is that start. ``site`` is most of it: the site-packages folders, their
``.pth`` files and an editable install's import finder cost ~30 ms before the first line of
Engram runs (``python -c pass`` 41 / 60 ms at p50 / p95, with ``-I -S`` 14 / 29 ms, on this
machine). So the installed hook command runs the interpreter isolated (``-I``: no ``PYTHON*``
variable, no user site, neither the working folder nor this file's folder on ``sys.path``) and
without ``site`` (``-S``), and this file puts the folder Engram is installed in, found from its
own absolute path, first on ``sys.path``, and answers as ``engram hook`` does (``main.run_hook``): the
lean client (``agents/hooks/client.quick_hook``) needs nothing else. When the service cannot answer,
``site`` is set up then (the venv's packages: the full runner needs the database and the models).

A repository an agent works in never chooses the code: the path is absolute, the working folder
is not on ``sys.path``, and ``PYTHONPATH`` is ignored.
"""

import os
import sys


def main(argv: list[str]) -> int:
    """Answer one hook (``argv``: ``hook EVENT --agent A ...``); exits 0 whatever happens."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.path.insert(0, root)
    from desktop.cli.main import run_hook

    return run_hook(argv[1:] if argv[:1] == ["hook"] else argv, site_missing=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
