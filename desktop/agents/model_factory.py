"""The models a project uses, built from the user's settings with the agents' chat providers.

The composition root hands :class:`AgentModels` to every :class:`~desktop.memory.project.Project`
it opens: the core asks it for the embedding provider, the model that writes memories
from a finished session, and the optional search stages, and never imports a provider.
:class:`ChatReranker` adapts the user's cloud chat model to the core's reranker protocol.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from desktop.memory.models import CoreModels, SynthesisModel, stage_timeout

if TYPE_CHECKING:  # a hook process builds this factory on every event: nothing heavy at import
    from desktop.agents.messages import Provider
    from desktop.memory.embedding.base import EmbeddingProvider
    from desktop.memory.retrieval.llm_stages import HydeWriter, Reranker
    from desktop.settings import Settings

log = logging.getLogger("engram.agents")


class ChatReranker:
    """Listwise reranking by the user's configured chat model (OpenAI-compatible or Anthropic).

    The provider's own HTTP timeout bounds the call; any failure skips the stage.
    """

    name = "chat-rerank"

    def __init__(self, provider: Provider) -> None:
        """Wrap a chat provider; no request is made until :meth:`rerank`."""
        self.provider = provider

    def close(self) -> None:
        """Close the chat provider's HTTP client (the search service closes its reranker)."""
        self.provider.close()

    def rerank(self, query: str, documents: Sequence[str]) -> list[int]:
        """Ask the model for the passage numbers in order of relevance."""
        from desktop.agents.messages import ChatMessage
        from desktop.memory.retrieval.llm_stages import call_failed, parse_order, rerank_prompt

        try:
            turn = self.provider.chat([ChatMessage("user", rerank_prompt(query, documents))], [])
            text = turn.text or ""
        except Exception as exc:  # any failure means "skip this stage"
            raise call_failed(exc, "rerank") from None
        return parse_order(text, len(documents))


class AgentModels:
    """Every model a project may use, from one Settings: what the core builds, plus the chat providers."""

    def __init__(self, settings: Settings) -> None:
        """``settings``: the user's settings, loaded once by the composition root."""
        self.settings = settings
        self.core = CoreModels(settings)

    def embedding_provider(self) -> EmbeddingProvider:
        """The embedding provider the settings choose."""
        return self.core.embedding_provider()

    def synthesis_model(self) -> SynthesisModel | None:
        """The model the settings name at each session (an agent CLI, or the agent's chat model), asked for
        memories after it: a choice saved in Settings, by this process or another door, applies at once."""
        from desktop.agents.json_model import ConfiguredModel

        return ConfiguredModel(self.settings)

    def search_stages(self) -> tuple[Reranker | None, HydeWriter | None]:
        """Rerank with a cloud chat model when ``extra.rerank`` asks for it; Ollama's stages otherwise."""
        s = self.settings
        if s.llm_provider in ("openai", "anthropic") and s.llm_model and (s.extra or {}).get("rerank"):
            return self._chat_reranker(), None
        return self.core.search_stages()

    def _chat_reranker(self) -> Reranker | None:
        """None (logged) when the provider cannot be built (no key stored, no key store): search runs without it."""
        from desktop.agents.providers import make_provider

        s = self.settings
        try:
            return ChatReranker(make_provider(s.llm_provider, model=s.llm_model, settings=s,
                                              timeout=stage_timeout(s)))
        except Exception as exc:  # a missing key must not stop search from opening
            log.info("rerank off: %s", exc)
            return None
