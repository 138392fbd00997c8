"""A configured chat provider seen as the observer's :class:`JSONModel` (one JSON reply per call).

The observer's model synthesis (``desktop.memory.observer.model_synthesis``) only
knows a ``complete(system, prompt) -> str`` protocol; this adapter gives it the
model the user chose in Settings: an agent CLI they are logged into (``cli_model``), or
the provider of Engram's own agent (Ollama, an OpenAI-compatible API or Anthropic),
with a shorter timeout than an agent turn: synthesis runs after a session, in the
background, and a stalled model must not hold transcript learning for minutes.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Final

from desktop.agents.cli_model import AGENT_CLIS, DEFAULT_TOKEN_CAP, AgentCLIModel, find_cli
from desktop.agents.messages import ChatMessage, ClosingProvider, Provider

log = logging.getLogger("engram.agents")

SYNTHESIS_TIMEOUT_S: Final = 60.0


class ProviderJSONModel(ClosingProvider):
    """Wraps a chat provider: a system and a user message in, the reply's text out."""

    def __init__(self, provider: Provider) -> None:
        """``provider`` is any chat provider (see ``desktop.agents.providers.make_provider``)."""
        self.provider = provider
        self.name = f"{provider.name}:{provider.model}"

    def complete(self, system: str, prompt: str) -> str:
        """One non-tool turn; raises the provider's errors (timeouts included)."""
        turn = self.provider.chat([ChatMessage("system", system), ChatMessage("user", prompt)], [])
        return turn.text

    def close(self) -> None:
        """Release the provider's HTTP client."""
        self.provider.close()


def synthesis_model(settings: Any, *, timeout: float = SYNTHESIS_TIMEOUT_S) -> Any | None:
    """The model for memory synthesis from Settings, or None (none configured, no key, CLI not found).

    ``memory_model`` chooses it: ``none``; an agent CLI the user is logged into (``claude-cli``,
    ``codex-cli``, ``gemini-cli``, see ``cli_model``); or ``auto``, the agent model provider.
    """
    choice = str(getattr(settings, "memory_model", "auto") or "auto")
    if choice == "none":
        return None
    if choice in AGENT_CLIS:
        extra = getattr(settings, "extra", {}) or {}
        paths, args = extra.get("agent_cli_paths") or {}, extra.get("agent_cli_args") or {}
        exe = find_cli(choice, str(paths.get(choice, "")))
        if exe is None:
            log.info("no model for memory synthesis: %s is not installed", AGENT_CLIS[choice][0])
            return None
        from desktop.memory.observer.model_synthesis import REPLY_SCHEMA

        return AgentCLIModel(choice, exe, model=str(getattr(settings, "memory_model_name", "") or ""),
                             schema=REPLY_SCHEMA, token_cap=int(getattr(settings, "memory_model_token_cap", 0)
                                                                 or DEFAULT_TOKEN_CAP),
                             extra_args=[str(a) for a in args.get(choice, [])])
    name = getattr(settings, "llm_provider", "none") or "none"
    if name in ("none", "scripted"):
        return None
    try:
        from desktop.agents.providers import make_provider

        provider = make_provider(name, settings=settings, model=getattr(settings, "llm_model", "") or "",
                                 timeout=timeout)
    except Exception as exc:  # no key, no keyring: the rules still learn without a model
        log.info("no model for memory synthesis: %s", exc)
        return None
    return ProviderJSONModel(provider)


#: The settings that choose the synthesis model (a change to any of them rebuilds it).
_MODEL_FIELDS = ("memory_model", "memory_model_name", "memory_model_token_cap", "llm_provider", "llm_model",
                 "ollama_host", "openai_base_url")


class ConfiguredModel:
    """The synthesis model the settings name *now*, for long-running doors (the app, ``engram serve``).

    A choice made in Settings (by this process, or by another one: the app writes settings.json,
    the hook service reads it) takes effect at the next session, without a restart. Building a
    model may read the keyring: this runs on the observer's thread, never the GUI's.
    """

    def __init__(self, settings: Any, factory: Any = None) -> None:
        """``settings`` is the door's Settings; ``factory`` builds a model from it (tests inject one)."""
        self.settings = settings
        self.factory = factory or synthesis_model
        self._key: tuple[Any, ...] | None = None
        self._mtime = -1.0
        self._model: Any | None = None
        self.name = "none"

    def _refresh(self) -> None:
        path = Path(getattr(self.settings, "data_dir", "")) / "settings.json"
        try:
            mtime = path.stat().st_mtime
        except OSError:
            mtime = 0.0
        if mtime and mtime != self._mtime:  # another door saved settings: read the model choice again
            from desktop.settings import Settings

            fresh = Settings.load(self.settings.data_dir)
            for name in _MODEL_FIELDS:
                setattr(self.settings, name, getattr(fresh, name))
        self._mtime = mtime
        key = tuple(getattr(self.settings, n, None) for n in _MODEL_FIELDS)
        if key != self._key:
            self.close()
            self._model = self.factory(self.settings)
            self._key = key
            self.name = getattr(self._model, "name", "none") if self._model is not None else "none"

    def available(self) -> bool:
        """True when the settings name a model that could be built."""
        self._refresh()
        return self._model is not None

    def complete(self, system: str, prompt: str) -> str:
        """The configured model's reply (raises when none is configured now)."""
        self._refresh()
        if self._model is None:
            raise RuntimeError("no model is configured for memory synthesis")
        return str(self._model.complete(system, prompt))

    def close(self) -> None:
        """Release the current model's client, if it has one."""
        closer = getattr(self._model, "close", None)
        if callable(closer):
            closer()
        self._model = None
