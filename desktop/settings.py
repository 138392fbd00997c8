"""Application settings (non-secret) and where they live.

Only the composition root reads settings; services receive what they need as
constructor arguments. API keys are never here: they live in the OS keyring.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from desktop import APP_NAME, ORG_NAME

log = logging.getLogger("engram.settings")

DATA_DIR_ENV = "ENGRAM_DATA_DIR"


def _location_file() -> Path:
    # Outside the data folder on purpose: it says where the data folder is.
    return Path(platformdirs.user_config_dir(APP_NAME, ORG_NAME)) / "data-location.json"


def default_data_dir() -> Path:
    """Where Engram keeps its data: $ENGRAM_DATA_DIR, else the folder the user chose, else the platform's."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override).expanduser()
    try:
        chosen = json.loads(_location_file().read_text(encoding="utf-8")).get("data_dir")
    except (OSError, ValueError, AttributeError):
        chosen = None
    if isinstance(chosen, str) and chosen:
        return Path(chosen).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME, ORG_NAME))


def choose_data_location(folder: Path | None) -> Path:
    """Remember a data folder chosen by the user (None goes back to the platform default).

    Takes effect at the next start; projects already stored stay where they are.
    Returns the folder Engram will use.
    """
    from desktop.memory.projects import atomic_write_json

    target = _location_file()
    if folder is None:
        target.unlink(missing_ok=True)
        return Path(platformdirs.user_data_dir(APP_NAME, ORG_NAME))
    folder = Path(folder).expanduser().resolve()
    folder.mkdir(parents=True, exist_ok=True)
    if not os.access(folder, os.W_OK):
        from desktop.memory.store.errors import ReadOnlyLocationError

        raise ReadOnlyLocationError(f"The folder {folder} is read-only.")
    atomic_write_json(target, {"data_dir": str(folder)})
    return folder


@dataclass
class Settings:
    """Everything configurable that is not a secret."""

    data_dir: Path = field(default_factory=default_data_dir)
    language: str = "system"
    embedding_provider: str = "auto"          # auto | local | ollama | openai
    embedding_model: str = ""
    ollama_host: str = "http://127.0.0.1:11434"
    llm_provider: str = "none"                # none | ollama | openai | anthropic
    llm_model: str = ""
    openai_base_url: str = "https://api.openai.com/v1"
    auto_memory: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, data_dir: Path | None = None) -> Settings:
        """Read settings.json from the data folder (defaults when absent or unreadable)."""
        base = Path(data_dir) if data_dir else default_data_dir()
        path = base / "settings.json"
        values: dict[str, Any] = {}
        try:
            values = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable settings %s: %s", path, exc)
        known = {k: v for k, v in values.items() if k in cls.__dataclass_fields__ and k != "data_dir"}
        return cls(data_dir=base, **known)

    def save(self) -> None:
        """Write settings.json atomically."""
        from desktop.memory.projects import atomic_write_json

        data = asdict(self)
        data.pop("data_dir")
        atomic_write_json(self.data_dir / "settings.json", data)
