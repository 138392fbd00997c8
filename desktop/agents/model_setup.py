"""Is a model set up for Engram's agent, and if not, what is there to connect?

The session view asks this (off the GUI thread) so that, with no model, it says how
to connect one -- Ollama running or not, which models it has, or an API key in
Settings -- instead of quietly running a scripted demo on the user's project.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("engram.agents")

PROBE_TIMEOUT_S = 0.5


@dataclass
class ModelSetup:
    """What the settings choose and what this machine offers."""

    provider: str                       # none | ollama | openai | anthropic
    model: str
    ollama_running: bool = False
    ollama_models: list[str] = field(default_factory=list)

    @property
    def configured(self) -> bool:
        """True when Settings name a provider (a key or a running server is checked when it runs)."""
        return self.provider not in ("", "none")


def ollama_models(host: str, timeout: float = PROBE_TIMEOUT_S) -> list[str] | None:
    """Models a local Ollama server has pulled; None when nothing answers at `host`."""
    try:
        with urllib.request.urlopen(f"{host.rstrip('/')}/api/tags", timeout=timeout) as resp:
            data = json.loads(resp.read().decode("utf-8") or "{}")
    except (OSError, ValueError, urllib.error.URLError):
        return None
    return [str(m.get("name") or m.get("model") or "") for m in data.get("models", []) if isinstance(m, dict)]


def model_setup(settings: Any) -> ModelSetup:
    """Read the settings and probe Ollama (at most half a second). Call off the GUI thread."""
    setup = ModelSetup(str(getattr(settings, "llm_provider", "none") or "none"),
                       str(getattr(settings, "llm_model", "") or ""))
    found = ollama_models(str(getattr(settings, "ollama_host", "http://127.0.0.1:11434")))
    if found is not None:
        setup.ollama_running, setup.ollama_models = True, found
    return setup
