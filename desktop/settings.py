"""Application settings (non-secret) and where they live.

Only the composition root reads settings; services receive what they need as
constructor arguments. API keys are never here: they live in the OS keyring.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from desktop.data_location import DATA_DIR_ENV, choose_data_location, default_data_dir

log = logging.getLogger("engram.settings")

__all__ = ["DATA_DIR_ENV", "SETTINGS_FILE", "Settings", "choose_data_location", "default_data_dir"]

SETTINGS_FILE = "settings.json"

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
    # What writes memories from each finished session besides the rules (opt-in; issue 26):
    # auto (the agent model above, when one is set) | none | claude-cli | codex-cli | gemini-cli.
    memory_model: str = "auto"
    memory_model_name: str = ""               # the CLI's model (empty: the CLI's default)
    memory_model_token_cap: int = 6000        # tokens sent per request (one request per session)
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, data_dir: Path | None = None) -> Settings:
        """Read settings.json from the data folder (defaults when absent or unreadable).

        Only the composition root calls this (``desktop.composition.load_settings``).
        """
        base = Path(data_dir) if data_dir else default_data_dir()
        path = base / SETTINGS_FILE
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
        atomic_write_json(self.data_dir / SETTINGS_FILE, data)
