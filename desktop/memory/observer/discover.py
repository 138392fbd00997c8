"""Find the transcripts other agents wrote about one project.

Where each agent keeps them:

* Claude Code: ``~/.claude/projects/<slug>/<session>.jsonl`` where the slug is the
  absolute project path with every non-alphanumeric character (``/``, ``.``, ...)
  turned into ``-``. Subagent files under ``<session>/subagents/`` are imported with
  their session and are not listed separately.
* Codex: ``$CODEX_HOME`` or ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``; the
  project is only named inside, by the first record's ``session_meta.cwd``.
* Gemini CLI: ``~/.gemini/tmp/<sha256 of the project path>/chats/session-*.json`` up to 0.4x;
  0.61 writes ``~/.gemini/tmp/<short name>/chats/session-*.jsonl`` with the project path in
  that folder's ``.project_root`` (and ``~/.gemini/projects.json`` mapping paths to names).
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from desktop.memory import safe_json
from desktop.memory.observer.gemini import project_hash, project_root_of

logger = logging.getLogger("engram.observer")

# session_meta can embed long instructions; the first line is read up to this size.
_META_LIMIT = 4_000_000


@dataclass(frozen=True, slots=True)
class TranscriptRef:
    """One transcript file found on disk, with what ``import_any`` will treat it as."""

    path: Path
    agent: str  # claude-code | codex | gemini-cli
    format: str  # claude-code-jsonl | codex-rollout | gemini-chat | gemini-jsonl
    size: int
    mtime: float


def _project_paths(project_dir: Path) -> list[str]:
    """The project path as written (absolute) and resolved (symlinks followed)."""
    absolute = os.path.abspath(os.path.expanduser(str(project_dir)))
    forms = [absolute]
    try:
        resolved = str(Path(absolute).resolve())
    except OSError:
        resolved = absolute
    if resolved != absolute:
        forms.append(resolved)
    return forms


def claude_slugs(project_dir: Path) -> list[str]:
    """Candidate ``~/.claude/projects`` folder names for a project.

    The documented rule replaces ``/`` and ``.``; Claude Code actually replaces every
    non-alphanumeric character, so both spellings are tried (they usually agree).
    """
    slugs: dict[str, None] = {}
    for path in _project_paths(project_dir):
        slugs.setdefault(re.sub(r"[/.]", "-", path), None)
        slugs.setdefault(re.sub(r"[^A-Za-z0-9]", "-", path), None)
    return list(slugs)


def _ref(path: Path, agent: str, fmt: str) -> TranscriptRef | None:
    try:
        st = path.stat()
    except OSError:  # vanished between listing and stat: not an error, just gone
        return None
    return TranscriptRef(path, agent, fmt, st.st_size, st.st_mtime)


def _codex_cwd(path: Path) -> str | None:
    """The cwd in a rollout file's first record, or None if unreadable."""
    try:
        with path.open("rb") as handle:
            first = handle.readline(_META_LIMIT)
        record = safe_json.loads(first.decode("utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    payload = record.get("payload") if record.get("type") == "session_meta" else record
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    return cwd if isinstance(cwd, str) else None


def _inside(cwd: str, projects: list[str]) -> bool:
    """True when a session ran in the project or one of its subfolders."""
    norm = os.path.normpath(cwd)
    return any(norm == p or norm.startswith(p.rstrip(os.sep) + os.sep) for p in projects)


def _safe_glob(folder: Path, pattern: str) -> list[Path]:
    try:
        return sorted(folder.glob(pattern)) if folder.is_dir() else []
    except OSError:
        return []


#: What a transcript file is called in a folder someone points at (Claude Code and Codex
#: JSONL, Gemini CLI's saved chats); anything else in the folder is not read.
_TRANSCRIPT_PATTERNS = ("*.jsonl", "session-*.json")


def expand_transcript_paths(paths: list[Path]) -> list[Path]:
    """Files as given; each folder replaced by the transcript files under it (recursively), oldest session
    first: a later session reinforces or retires what an earlier one taught, so the order is the history's,
    not the file names' (session ids are random)."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = {f for pattern in _TRANSCRIPT_PATTERNS for f in _safe_glob(path, f"**/{pattern}") if f.is_file()}
            out += sorted(found, key=lambda f: (started_at(f), str(f)))
        else:
            out.append(path)
    return out


_STARTED: Final = re.compile(r'"(?:timestamp|startTime)"\s*:\s*"(\d{4}-\d\d-\d\dT[^"]{1,40})"')
_HEAD_BYTES: Final = 65536


def started_at(path: Path) -> str:
    """When a transcript's session started: the first ISO timestamp in its first 64 KB (Claude Code's and
    Codex's ``timestamp``, Gemini's ``startTime``), or its modification time when it shows none."""
    try:
        with path.open("rb") as f:
            head = f.read(_HEAD_BYTES).decode("utf-8", "replace")
        m = _STARTED.search(head)
        if m:
            return m.group(1)
        return datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat()
    except OSError:
        return ""


def _gemini_folders(tmp: Path, projects: list[str]) -> list[Path]:
    """Gemini CLI 0.61 folders (``tmp/<name>/``) whose ``.project_root`` is the project or inside it."""
    out = []
    for marker in _safe_glob(tmp, "*/.project_root"):
        root = project_root_of(marker.parent / "chats" / "x")
        if root and _inside(root, projects):
            out.append(marker.parent)
    return out


def find_transcripts(project_dir: Path, home: Path | None = None) -> list[TranscriptRef]:
    """List every Claude Code, Codex and Gemini CLI transcript about ``project_dir``.

    ``home`` replaces the user's home folder (tests; ``$CODEX_HOME`` is honoured only
    when ``home`` is not given). Sorted by modification time, oldest first, so
    sessions can be replayed in the order they happened.
    """
    base = home if home is not None else Path.home()
    projects = _project_paths(Path(project_dir))
    refs: list[TranscriptRef] = []

    for slug in claude_slugs(Path(project_dir)):
        for path in _safe_glob(base / ".claude" / "projects" / slug, "*.jsonl"):
            ref = _ref(path, "claude-code", "claude-code-jsonl")
            if ref:
                refs.append(ref)

    codex_home = Path(os.environ["CODEX_HOME"]) if home is None and os.environ.get("CODEX_HOME") \
        else base / ".codex"
    for path in _safe_glob(codex_home / "sessions", "**/rollout-*.jsonl"):
        cwd = _codex_cwd(path)
        if cwd and _inside(cwd, projects):
            ref = _ref(path, "codex", "codex-rollout")
            if ref:
                refs.append(ref)

    hashes = {project_hash(p) for p in projects}
    for digest in sorted(hashes):
        for path in _safe_glob(base / ".gemini" / "tmp" / digest / "chats", "session-*.json"):
            ref = _ref(path, "gemini-cli", "gemini-chat")
            if ref:
                refs.append(ref)
    for folder in _gemini_folders(base / ".gemini" / "tmp", projects):
        for path in _safe_glob(folder / "chats", "session-*.jsonl"):
            ref = _ref(path, "gemini-cli", "gemini-jsonl")
            if ref:
                refs.append(ref)

    unique = list({r.path: r for r in refs}.values())  # a path found via two slugs once
    unique.sort(key=lambda r: (r.mtime, str(r.path)))
    logger.debug("found %d transcripts for %s", len(unique), projects[0])
    return unique
