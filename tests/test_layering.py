"""The layers hold: the core imports no agents, UI, CLI or composition root; the agents no UI, CLI or Qt.

Every import counts, wherever it is written: at module level, inside a function (the lazy
imports that keep a hook process light), under ``TYPE_CHECKING``, and a module name handed to
``importlib.import_module`` or ``__import__`` as a string. Relative imports are resolved.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: package -> what nothing in it may import (a module or anything under it).
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "desktop.memory": ("desktop.agents", "desktop.ui", "desktop.cli", "desktop.composition", "PySide6", "qasync"),
    "desktop.agents": ("desktop.ui", "desktop.cli", "PySide6", "qasync"),
}


def module_name(path: Path, root: Path) -> str:
    """``desktop/memory/store/writer.py`` -> ``desktop.memory.store.writer`` (a package is its __init__)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_names(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in the file, wherever it is written."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    here = module_name(path, root)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Call) and _is_dynamic_import(node.func) and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            found.append((node.lineno, node.args[0].value))
    return found


def _is_dynamic_import(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in ("__import__", "import_module")
    return isinstance(func, ast.Attribute) and func.attr == "import_module"


def violations(package: str, forbidden: tuple[str, ...], root: Path = ROOT) -> list[str]:
    """``file:line imports module`` for every forbidden import under ``package``."""
    folder = root.joinpath(*package.split("."))
    out = []
    for path in sorted(folder.rglob("*.py")):
        for line, name in imported_names(path, root):
            if any(name == f or name.startswith(f + ".") for f in forbidden):
                out.append(f"{path.relative_to(root)}:{line} imports {name}")
    return out


#: The agents' modules that are doors of their own (a process an agent CLI starts): only they open
#: projects through the composition root. Everything else in the agents gets an open Project.
AGENT_DOORS = ("desktop.agents.hooks.runner", "desktop.agents.hooks.service", "desktop.agents.mcp_front")


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_layers_hold(package: str) -> None:
    found = violations(package, FORBIDDEN[package])
    assert not found, f"{package} may not import {', '.join(FORBIDDEN[package])}:\n" + "\n".join(found)


def test_only_the_agent_doors_open_projects_through_the_composition_root() -> None:
    inside = [name for name in _modules("desktop.agents") if name not in AGENT_DOORS]
    found = [f"{name} imports {imported}" for name in inside
             for _line, imported in imported_names(_path(name), ROOT) if imported.startswith("desktop.composition")]
    assert not found, "\n".join(found)


def _modules(package: str) -> list[str]:
    return [module_name(p, ROOT) for p in sorted(ROOT.joinpath(*package.split(".")).rglob("*.py"))]


def _path(module: str) -> Path:
    path = ROOT.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def test_the_check_sees_every_kind_of_import(tmp_path: Path) -> None:
    """A module-level, a function-level, a TYPE_CHECKING, a relative and a string import are all caught."""
    pkg = tmp_path / "desktop" / "memory" / "sub"
    pkg.mkdir(parents=True)
    for folder in (tmp_path / "desktop", tmp_path / "desktop" / "memory", pkg):
        (folder / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "bad.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "import desktop.ui.app\n"
        "if TYPE_CHECKING:\n    from desktop.composition import Engram\n"
        "def f():\n    from desktop.agents import session\n    from ...cli import main\n"
        "    import importlib\n    importlib.import_module('desktop.agents.providers')\n"
        "    __import__('desktop.ui.tasks')\n", encoding="utf-8")
    found = violations("desktop.memory", FORBIDDEN["desktop.memory"], tmp_path)
    lines = sorted(int(f.split(":")[1].split()[0]) for f in found)
    assert {2, 4, 6, 7, 9, 10} <= set(lines), found


def test_no_signature_takes_an_untyped_project() -> None:
    """Every function that takes a project says which type it is (the core's Project), never Any."""
    found = []
    for path in sorted((ROOT / "desktop").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                found += [f"{path.relative_to(ROOT)}:{node.lineno} {node.name}({a.arg}: Any)" for a in args
                          if a.arg == "project" and (a.annotation is None or ast.unparse(a.annotation) == "Any")]
    assert not found, "\n".join(found)
