"""Confinement to the project root: no path traversal, no symlink escapes.

Every path an agent gives is resolved with ``realpath`` (which follows every
symlink that exists) and must land inside the real project root. A file that
does not exist yet is checked through its deepest existing parent, so creating
``a/b/new.txt`` through a symlinked ``a`` that points outside is refused too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from desktop.agents.errors import PathOutsideProject

#: Folders no tool walks into: VCS internals, dependency trees, caches.
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
                       ".ruff_cache", ".pytest_cache", "dist", "build", ".tox", "target"})


@dataclass(frozen=True)
class ProjectRoot:
    """The real (symlink-free) project folder every tool is confined to."""

    root: Path
    real: Path = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "real", Path(os.path.realpath(self.root)))

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """The real absolute path of ``path`` (relative to the root), or PathOutsideProject."""
        text = os.fspath(path).strip()
        if not text:
            raise PathOutsideProject("An empty path is not a file in the project.")
        if "\x00" in text:
            raise PathOutsideProject("A path with a NUL byte is refused.")
        candidate = Path(text).expanduser()
        if not candidate.is_absolute():
            candidate = self.real / candidate
        real = Path(os.path.realpath(candidate))
        if real != self.real and not real.is_relative_to(self.real):
            raise PathOutsideProject(f"{text} is outside the project folder; tools may only touch "
                                     f"files under {self.real}.")
        return real

    def relative(self, real: Path) -> str:
        """The project-relative POSIX path of a resolved path ("." for the root)."""
        rel = real.relative_to(self.real).as_posix()
        return rel or "."

    def walk_files(self, start: Path | None = None, *, limit: int = 50_000) -> list[Path]:
        """Files under ``start`` (default: the root), skipping VCS/dependency folders and
        symlinks that lead outside the project."""
        base = start or self.real
        out: list[Path] = []
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for name in sorted(filenames):
                p = Path(dirpath) / name
                if p.is_symlink():
                    try:
                        self.resolve(p)
                    except PathOutsideProject:
                        continue
                out.append(p)
                if len(out) >= limit:
                    return out
        return out
