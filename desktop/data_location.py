"""Where Engram keeps its data: ``$ENGRAM_DATA_DIR``, the folder the user chose, or the platform's.

Apart from :mod:`desktop.settings` (which re-exports it) because the hook client, a new
process for every agent event, needs only this and not the settings dataclass.
"""

from __future__ import annotations

import os

from desktop import APP_NAME, ORG_NAME

TYPE_CHECKING = False  # not typing's, nor pathlib at import: the hook client reads this module
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

DATA_DIR_ENV = "ENGRAM_DATA_DIR"


def _platformdirs() -> Any:
    # Imported when needed: with $ENGRAM_DATA_DIR or --data-dir a hook never asks the platform.
    import platformdirs

    return platformdirs


def _location_file() -> Path:
    from pathlib import Path

    return Path(_location_path())


def _location_path() -> str:
    # Outside the data folder on purpose: it says where the data folder is.
    return os.path.join(_platformdirs().user_config_dir(APP_NAME, ORG_NAME), "data-location.json")


def default_data_dir() -> Path:
    """Where Engram keeps its data: $ENGRAM_DATA_DIR, else the folder the user chose, else the platform's."""
    from pathlib import Path

    return Path(default_data_folder())


def default_data_folder() -> str:
    """:func:`default_data_dir` as a string, with no pathlib: the hook client calls it on every event."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return os.path.expanduser(override)
    import json

    try:
        with open(_location_path(), encoding="utf-8") as f:
            chosen = json.load(f).get("data_dir")
    except (OSError, ValueError, AttributeError):
        chosen = None
    if isinstance(chosen, str) and chosen:
        return os.path.expanduser(chosen)
    return str(_platformdirs().user_data_dir(APP_NAME, ORG_NAME))


def choose_data_location(folder: Path | None) -> Path:
    """Remember a data folder chosen by the user (None goes back to the platform default).

    Takes effect at the next start; projects already stored stay where they are.
    Returns the folder Engram will use.
    """
    from pathlib import Path

    from desktop.memory.projects import atomic_write_json

    target = _location_file()
    if folder is None:
        target.unlink(missing_ok=True)
        return Path(_platformdirs().user_data_dir(APP_NAME, ORG_NAME))
    folder = Path(folder).expanduser().resolve()
    folder.mkdir(parents=True, exist_ok=True)
    if not os.access(folder, os.W_OK):
        from desktop.memory.store.errors import ReadOnlyLocationError

        raise ReadOnlyLocationError(f"The folder {folder} is read-only.")
    atomic_write_json(target, {"data_dir": str(folder)})
    return folder
