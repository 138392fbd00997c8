"""A configured chat provider seen as the observer's :class:`JSONModel` (one JSON reply per call).

The observer's model synthesis (``desktop.memory.observer.model_synthesis``) only
knows a ``complete(system, prompt) -> str`` protocol; this adapter gives it the
provider the user chose in Settings (Ollama, an OpenAI-compatible API or Anthropic),
with a shorter timeout than an agent turn: synthesis runs after a session, in the
background, and a stalled model must not hold transcript learning for minutes.
"""

from __future__ import annotations

import logging
from typing import Any, Final

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


def synthesis_model(settings: Any, *, timeout: float = SYNTHESIS_TIMEOUT_S) -> ProviderJSONModel | None:
    """The model for memory synthesis from Settings, or None (none configured, no key, unreachable set-up)."""
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
