"""Projects: a folder the user opens, with its own database under the user-data folder.

The database lives outside the project folder so that opening a repository never
adds files to it, and so that a read-only checkout can still have memory.
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.digests import sha256
from desktop.memory.store.errors import CorruptDatabaseError, ReadOnlyLocationError, ValidationError, os_error

log = logging.getLogger("engram.projects")

DB_NAME = "engram.db"
MAX_RECENT = 12


@dataclass(frozen=True)
class ProjectInfo:
    """Where a project's folder and database are."""

    root: Path
    name: str
    db_path: Path


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")[:40] or "project"


def atomic_write_json(path: Path, data: Any) -> None:
    """Write JSON via a temp file and rename, so a crash or full disk never leaves half a file."""
    import tempfile  # a hook opens projects on every agent event and writes none of these

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise os_error(exc, path) from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, ensure_ascii=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise os_error(exc, path) from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class ProjectRegistry:
    """Maps project folders to databases under one data folder and remembers recent projects."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)

    def ensure_writable(self) -> None:
        """Create the data folder; raise ReadOnlyLocationError if it cannot be written."""
        try:
            (self.data_dir / "projects").mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ReadOnlyLocationError(f"Cannot create the data folder {self.data_dir}: {exc.strerror}.") from exc
        if not os.access(self.data_dir, os.W_OK):
            raise ReadOnlyLocationError(f"The data folder {self.data_dir} is read-only.")

    def info(self, folder: Path | str) -> ProjectInfo:
        """The project for `folder` (which must be an existing directory)."""
        root = Path(folder).expanduser().resolve()
        if not root.is_dir():
            raise ValidationError(f"{root} is not a folder.")
        digest = sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:10]
        home = self.data_dir / "projects" / f"{_slug(root.name)}-{digest}"
        return ProjectInfo(root=root, name=root.name or str(root), db_path=home / DB_NAME)

    def prepare(self, folder: Path | str) -> ProjectInfo:
        """Create the project's folder in the data dir and record its source path."""
        self.ensure_writable()
        info = self.info(folder)
        info.db_path.parent.mkdir(parents=True, exist_ok=True)
        meta = info.db_path.parent / "project.json"
        if not meta.exists():
            atomic_write_json(meta, {"root": str(info.root), "name": info.name})
        return info

    # -- recent projects ---------------------------------------------------------
    @property
    def _recent_file(self) -> Path:
        return self.data_dir / "recent.json"

    def recent(self) -> list[Path]:
        """Recently opened project folders that still exist, most recent first."""
        try:
            items = json.loads(self._recent_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return [Path(p) for p in items if isinstance(p, str) and Path(p).is_dir()]

    def remember(self, folder: Path | str) -> None:
        """Put `folder` first in the recent list."""
        root = str(Path(folder).resolve())
        items = [str(p) for p in self.recent() if str(p) != root]
        try:
            atomic_write_json(self._recent_file, [root, *items][:MAX_RECENT])
        except OSError as exc:  # the project still opens; only the list is not updated
            log.warning("could not update recent projects: %s", exc)


    def forget(self, folder: Path | str) -> None:
        """Take `folder` off the recent list (its memory stays in the data folder, untouched)."""
        root = str(Path(folder).resolve())
        items = [str(p) for p in self.recent() if str(p) != root]
        try:
            atomic_write_json(self._recent_file, items)
        except OSError as exc:
            log.warning("could not update recent projects: %s", exc)


class InstanceLock:
    """Held by the app while it has a project open, so a second app on the same project knows.

    Two windows on one database both work (SQLite serialises their writes), but each
    only hears its own changes: the second one is told, instead of going stale silently.
    An advisory ``flock`` on a file beside the database: released by the OS if the
    process dies, so a crash never leaves the project "open elsewhere".
    """

    def __init__(self, db_path: Path) -> None:
        self.path = Path(db_path).with_name("app.lock")
        self._fh: Any = None

    def acquire(self) -> bool:
        """Take the lock; False when another process holds it (that app has this project open)."""
        import fcntl

        try:
            fh = self.path.open("a+")
        except OSError as exc:  # a read-only data folder: nothing to compare with, say nothing
            log.info("cannot create %s: %s", self.path, exc)
            return True
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            return False
        self._fh = fh
        return True

    def close(self) -> None:
        """Release the lock (closing the file releases it)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def move_aside_corrupt(error: CorruptDatabaseError) -> Path:
    """Rename a damaged database (and its WAL/SHM) so a fresh one can be created.

    Only called after the user agreed; the damaged file is kept, never overwritten.
    """
    src = Path(error.path)
    n = 1
    while True:
        dest = src.with_name(f"{src.name}.corrupt-{n}")
        if not dest.exists():
            break
        n += 1
    os.replace(src, dest)
    for suffix in ("-wal", "-shm"):
        side = Path(str(src) + suffix)
        if side.exists():
            os.replace(side, Path(str(dest) + suffix))
    log.warning("moved damaged database %s to %s", src, dest)
    return dest
