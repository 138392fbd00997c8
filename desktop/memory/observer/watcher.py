"""Watch a project's transcript folders and learn from sessions as they end.

Agents append to their transcripts while a session runs, and none of them writes
an explicit "session over" record we can rely on. A transcript is therefore
ingested once it has stopped growing for ``quiet_seconds``; if it grows again
later (a resumed session), only the new events are learned (see ingest).
Plain Python: a watchdog observer thread plus one small polling thread.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer as FsObserver

from desktop.memory.observer.discover import claude_slugs
from desktop.memory.observer.gemini import project_hash
from desktop.memory.observer.ingest import Ingestor

logger = logging.getLogger("engram.observer")

_SUFFIXES = (".jsonl", ".json")


def watch_roots(project_dir: Path, home: Path | None = None) -> list[Path]:
    """Folders where agents write this project's transcripts (existing ones only)."""
    base = home or Path.home()
    roots = [base / ".claude" / "projects" / slug for slug in claude_slugs(project_dir)]
    roots.append(base / ".codex" / "sessions")
    roots.append(base / ".gemini" / "tmp" / project_hash(str(Path(project_dir).resolve())) / "chats")
    return [r for r in dict.fromkeys(roots) if r.is_dir()]


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: TranscriptWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory:
            return
        path = str(getattr(event, "dest_path", "") or event.src_path)
        if path.endswith(_SUFFIXES):
            self.watcher.touched(Path(path))


class TranscriptWatcher:
    """Ingests new and grown transcripts once they are quiet. ``start()``/``stop()``."""

    def __init__(self, ingestor: Ingestor, roots: list[Path], *, quiet_seconds: float = 20.0,
                 poll_seconds: float = 2.0) -> None:
        """Watch ``roots`` (see :func:`watch_roots`) and feed quiet files to ``ingestor``."""
        self.ingestor = ingestor
        self.roots = roots
        self.quiet_seconds = quiet_seconds
        self.poll_seconds = poll_seconds
        self._dirty: dict[Path, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._fs: Any = None
        self._thread: threading.Thread | None = None
        self.reports: list[Any] = []

    def touched(self, path: Path) -> None:
        """Note that a transcript changed (called from the watchdog thread)."""
        with self._lock:
            self._dirty[path] = time.monotonic()

    def start(self) -> None:
        """Start watching (recursive) and the quiet-file poller."""
        if self._thread is not None:
            return
        self._fs = FsObserver()
        handler = _Handler(self)
        for root in self.roots:
            self._fs.schedule(handler, str(root), recursive=True)
        self._fs.start()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="engram-transcript-watcher", daemon=True)
        self._thread.start()
        logger.info("watching %d transcript folders", len(self.roots))

    def stop(self) -> None:
        """Stop watching; files still settling are ingested now."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join(10)
        self._thread = None
        if self._fs is not None:
            self._fs.stop()
            self._fs.join(10)
            self._fs = None
        self.flush(force=True)

    close = stop

    def _run(self) -> None:
        while not self._stop.wait(self.poll_seconds):
            self.flush()

    def flush(self, force: bool = False) -> int:
        """Ingest transcripts quiet for long enough (all of them with ``force``)."""
        now = time.monotonic()
        with self._lock:
            ready = [p for p, t in self._dirty.items() if force or now - t >= self.quiet_seconds]
            for p in ready:
                del self._dirty[p]
        for path in ready:
            if "subagents" in path.parts:
                # Sub-agent files are imported with their parent session's file.
                parent = path.parent.parent.with_suffix(".jsonl")
                path = parent if parent.exists() else path
            try:
                self.reports.append(self.ingestor.ingest_file(path))
            except Exception:  # a bad file must never stop the watcher
                logger.exception("ingesting %s failed", path)
        return len(ready)
