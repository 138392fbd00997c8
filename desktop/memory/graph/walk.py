"""Which files of a project the indexer looks at, and which it skips and why.

Ignore rules: the usual vendor/build/cache folders, coding agents' own folders
(``.claude``, ``.codex``, ``.gemini``, ...: their settings hold machine paths and are
not project code), every ``.gitignore`` on the way down (pathspec, git wildmatch
semantics, each file relative to its folder), and lock files. Directory symlinks are
not followed (like git), so symlink loops cannot trap the walk; file symlinks are
read through and a dangling or looping one is skipped as unreadable. Content checks
(binary, minified, huge) need the bytes and live in :func:`classify`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from desktop.memory.graph.languages import detect_language, extension
from desktop.memory.text.file_kinds import PROSE_EXTENSIONS

log = logging.getLogger("engram.graph")

MAX_FILE_BYTES = 1_000_000
MINIFIED_AVG_LINE = 300  # average characters per line above which a file is machine-written
BINARY_PROBE = 8192

IGNORED_DIRS: frozenset[str] = frozenset({
    ".git", ".hg", ".svn", "node_modules", "bower_components", "venv", ".venv", "env", ".env",
    "dist", "build", "target", "out", "__pycache__", "vendor", ".tox", ".nox", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".idea", ".gradle", ".next", ".nuxt", ".cache", ".eggs",
    "site-packages", "coverage", ".terraform", ".engram",
})
#: Coding agents' own folders (settings, hooks, plugins, transcripts): the agent's, not the project's code.
AGENT_DIRS: frozenset[str] = frozenset({
    ".claude", ".codex", ".gemini", ".cursor", ".agents", ".windsurf", ".continue", ".roo", ".kiro", ".opencode",
})
LOCK_FILES: frozenset[str] = frozenset({
    "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "Cargo.lock", "Pipfile.lock",
    "composer.lock", "go.sum", "uv.lock",
})
# Text formats worth a file node and prose chunks besides the parsed languages.
EXTRA_TEXT_EXTENSIONS: frozenset[str] = frozenset({
    ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".rb", ".php", ".sh", ".bash", ".html", ".htm",
    ".css", ".scss", ".sql", ".kt", ".swift", ".scala", ".lua", ".vue", ".svelte", ".proto",
    ".graphql", ".gradle", ".xml",
})
TEXT_NAMES: frozenset[str] = frozenset({"Dockerfile", "Makefile", "README", "LICENSE", "go.mod"})


@dataclass
class WalkResult:
    """Files to consider plus what was left out before reading (path, reason)."""

    files: list[str] = field(default_factory=list)
    ignored: list[tuple[str, str]] = field(default_factory=list)
    unsupported: int = 0


def is_source_name(rel_path: str) -> bool:
    """True for files the indexer reads: parsed languages, prose/config and common text formats."""
    name = rel_path.rsplit("/", 1)[-1]
    ext = extension(rel_path)
    return (detect_language(rel_path) is not None or ext in PROSE_EXTENSIONS
            or ext in EXTRA_TEXT_EXTENSIONS or name in TEXT_NAMES)


class IgnoreRules:
    """Vendor folders plus every .gitignore met so far (one spec per folder)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._specs: dict[str, pathspec.GitIgnoreSpec | None] = {}

    def _spec(self, rel_dir: str) -> pathspec.GitIgnoreSpec | None:
        if rel_dir not in self._specs:
            spec = None
            gi = self.root / rel_dir / ".gitignore" if rel_dir else self.root / ".gitignore"
            try:
                lines = gi.read_text(encoding="utf-8", errors="replace").splitlines()
                spec = pathspec.GitIgnoreSpec.from_lines(lines)
            except OSError:
                spec = None
            self._specs[rel_dir] = spec
        return self._specs[rel_dir]

    def forget(self, rel_dir: str) -> None:
        """Drop a cached .gitignore (it changed on disk)."""
        self._specs.pop(rel_dir, None)

    def reason(self, rel_path: str, is_dir: bool) -> str | None:
        """Why ``rel_path`` is ignored ('vendor', 'agent settings', 'gitignored', 'lock file'), or None."""
        parts = rel_path.split("/")
        dir_parts = parts if is_dir else parts[:-1]
        for p in dir_parts:
            if p in IGNORED_DIRS or p.endswith(".egg-info"):
                return "vendor"
            if p in AGENT_DIRS:
                return "agent settings"
        if not is_dir and parts[-1] in LOCK_FILES:
            return "lock file"
        # Each .gitignore applies to paths below its own folder.
        for depth in range(len(parts)):
            base = "/".join(parts[:depth])
            spec = self._spec(base)
            if spec is None:
                continue
            sub = "/".join(parts[depth:]) + ("/" if is_dir else "")
            if spec.match_file(sub):
                return "gitignored"
        return None


def inside(root: Path, path: Path) -> bool:
    """Whether ``path`` (already resolved) lies inside the resolved project ``root``."""
    try:
        return path.is_relative_to(Path(root).resolve())
    except (OSError, RuntimeError):
        return False


def walk(root: Path, rules: IgnoreRules | None = None, start: str = "") -> WalkResult:
    """List the candidate files under ``root`` (or its sub-folder ``start``), sorted."""
    rules = rules or IgnoreRules(root)
    out = WalkResult()
    stack = [start]
    while stack:
        rel_dir = stack.pop()
        try:
            entries = list(os.scandir(root / rel_dir if rel_dir else root))
        except OSError as exc:
            log.info("cannot list %s: %s", rel_dir or ".", exc)
            out.ignored.append((rel_dir + "/", f"unreadable: {exc.strerror or exc}"))
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                why = rules.reason(rel, True)
                if why:
                    out.ignored.append((rel + "/", why))
                else:
                    stack.append(rel)
                continue
            if entry.is_symlink():
                try:
                    target = Path(entry.path).resolve(strict=True)
                    if target.is_dir():
                        continue  # directory symlinks are not followed
                    if not inside(root, target):
                        # /etc/passwd, ~/.pgpass: a repository may point anywhere; never read it
                        out.ignored.append((rel, "outside the project"))
                        continue
                except (OSError, RuntimeError):
                    pass  # dangling or looping: reported unreadable when read
            if not is_source_name(rel):
                out.unsupported += 1
                continue
            why = rules.reason(rel, False)
            if why:
                out.ignored.append((rel, why))
                continue
            out.files.append(rel)
    out.files.sort()
    return out


def classify(rel_path: str, data: bytes) -> str | None:
    """Return why the bytes should not be indexed ('binary', 'minified', 'too large'), or None."""
    if len(data) > MAX_FILE_BYTES:
        return "too large"
    if b"\x00" in data[:BINARY_PROBE]:
        return "binary"
    name = rel_path.rsplit("/", 1)[-1]
    if ".min." in name:
        return "minified"
    if len(data) > 2048:
        lines = data.count(b"\n") + 1
        if len(data) / lines > MINIFIED_AVG_LINE:
            return "minified"
    return None


def iter_known_under(paths: Iterator[str] | list[str], rel_dir: str) -> list[str]:
    """Known file paths inside ``rel_dir`` (a deleted or moved folder)."""
    prefix = rel_dir.rstrip("/") + "/"
    return [p for p in paths if p.startswith(prefix)]
