"""What the core asks of models, and the factory the composition root injects to answer.

The core never imports the agent runtime: a project's embedding provider, the chat
model that writes memories from a session, and the optional search stages (a
reranker, a HyDE writer) come from a :class:`ModelFactory` handed to the
:class:`~desktop.memory.project.Project`. The composition root passes the agents'
factory (``desktop.agents.model_factory.AgentModels``), which knows the chat
providers; :class:`CoreModels` is what the core can build on its own (the embedding
provider the settings choose, Ollama's search stages, no chat model).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # only named in annotations (a hook process never loads numpy or a model)
    from desktop.memory.embedding.base import EmbeddingProvider
    from desktop.memory.retrieval.llm_stages import HydeWriter, Reranker
    from desktop.settings import Settings

log = logging.getLogger("engram.models")


class SynthesisModel(Protocol):
    """A chat model asked for one JSON reply (memory synthesis); closed with the project."""

    name: str

    def available(self) -> bool:
        """True when a model is configured now (the user may choose one while the project is open)."""
        ...

    def complete(self, system: str, prompt: str) -> str:
        """The model's reply text to ``prompt`` under ``system``; raises on timeout or transport failure."""
        ...

    def close(self) -> None:
        """Release the model's client."""
        ...


class ModelFactory(Protocol):
    """Builds the models a project uses, from the settings the composition root loaded once."""

    def embedding_provider(self) -> EmbeddingProvider:
        """The embedding provider the settings choose (never a network request)."""
        ...

    def synthesis_model(self) -> SynthesisModel | None:
        """The model that writes memories from a finished session; None when none can be built."""
        ...

    def search_stages(self) -> tuple[Reranker | None, HydeWriter | None]:
        """The optional LLM stages of search (a reranker, a HyDE writer); each None when off."""
        ...


class CoreModels:
    """The models the core builds by itself: embeddings from the settings, Ollama's search stages.

    No chat model: memory synthesis and a reranker on a cloud model need the agents'
    providers, which only the agents' factory knows.
    """

    def __init__(self, settings: Settings) -> None:
        """``settings``: the user's settings, loaded once by the composition root."""
        self.settings = settings

    def embedding_provider(self) -> EmbeddingProvider:
        """The provider :func:`~desktop.memory.embedding.detect.detect_provider` chooses."""
        from desktop.memory.embedding.detect import detect_provider

        return detect_provider(self.settings)

    def synthesis_model(self) -> SynthesisModel | None:
        """None: the rules alone learn."""
        return None

    def search_stages(self) -> tuple[Reranker | None, HydeWriter | None]:
        """Rerank (when ``extra.rerank``) and HyDE through Ollama when Ollama is the chosen model."""
        from desktop.memory.retrieval.llm_stages import OllamaHyde, OllamaReranker

        s = self.settings
        extra = s.extra or {}
        if s.llm_provider != "ollama" or not s.llm_model:
            return None, None
        timeout = stage_timeout(s)
        reranker = OllamaReranker(s.ollama_host, s.llm_model, timeout=timeout) if extra.get("rerank") else None
        hyde = OllamaHyde(s.ollama_host, s.llm_model, timeout=timeout) if extra.get("hyde", True) else None
        return reranker, hyde


def stage_timeout(settings: Settings) -> float:
    """Seconds an optional search stage may take (``extra.llm_stage_timeout_s``, default 3)."""
    return float((settings.extra or {}).get("llm_stage_timeout_s", 3.0))
