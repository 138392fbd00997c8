"""The one composition root: loads the user's settings once and builds every Project from them.

Every door starts here: the app, the ``engram`` command, the MCP server, a hook
process and the warm hook service (``engram serve``). :func:`load_settings` is the
only place settings are read; :class:`Engram` hands them, with the agents' model
factory, to each :class:`~desktop.memory.project.Project` it opens, so a model or
provider chosen in the app is the one every other door uses.
"""

from __future__ import annotations

import logging
from pathlib import Path

from desktop.agents.model_factory import AgentModels
from desktop.memory.project import Project
from desktop.memory.projects import ProjectRegistry
from desktop.memory.store.database import Database
from desktop.memory.store.writer import Clock, utc_now
from desktop.settings import SETTINGS_FILE, Settings

log = logging.getLogger("engram.app")


def load_settings(data_dir: Path | str | None = None) -> Settings:
    """The user's settings: ``settings.json`` in ``data_dir`` (default: the user-data folder)."""
    return Settings.load(Path(data_dir) if data_dir else None)


def settings_stamp(data_dir: Path | str) -> tuple[int, int]:
    """When and how big the settings file was last saved ((0, 0) when there is none): a long-running
    door (the warm hook service) compares stamps to take up settings the app saved since."""
    try:
        st = (Path(data_dir) / SETTINGS_FILE).stat()
    except OSError:
        return 0, 0
    return st.st_mtime_ns, st.st_size


class Engram:
    """Application-level container: the settings, the project registry, and opening projects."""

    def __init__(self, settings: Settings | None = None, *, clock: Clock = utc_now) -> None:
        """``settings``: already loaded (the app edits them in place); None loads the user's."""
        self.settings = settings or load_settings()
        self.clock = clock
        self.registry = ProjectRegistry(self.settings.data_dir)
        self.models = AgentModels(self.settings)

    @classmethod
    def for_data_dir(cls, data_dir: Path | str | None) -> Engram:
        """The composition root of a door that is told where the data folder is (CLI, hooks, service)."""
        return cls(load_settings(data_dir))

    def open_project(self, folder: Path | str, *, remember: bool = True, maintain: bool = True,
                     check: bool = True) -> Project:
        """Open (creating if needed) the database of the project in `folder`.

        Every door (app, CLI, MCP, agent runs) opens projects here, so every door gets
        the same upkeep: with ``maintain`` (the default) memories written while the
        project is open are checked for conflicts and anchored to the files they name,
        and closing the project finishes that work first. ``maintain=False`` is for
        read-only inspection (``engram doctor``). ``check=False`` skips the whole-file integrity
        check (hooks, which open the database on every agent event; see Database).

        Raises CorruptDatabaseError, NewerDatabaseError, ReadOnlyLocationError as
        known errors; the caller decides how to word them.
        """
        info = self.registry.prepare(folder)
        db = Database(info.db_path, clock=self.clock, check=check).open()
        if remember:
            self.registry.remember(info.root)
        log.info("opened project %s (%s)", info.name, info.db_path)
        project = Project(info, db, self.settings, self.models)
        if maintain:
            try:
                project.start_upkeep()
            except Exception:  # upkeep is optional; the project works without it
                log.exception("could not start memory upkeep")
        return project
