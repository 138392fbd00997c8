"""Chat providers: Ollama, OpenAI-compatible, Anthropic, and a scripted replay for tests/demos."""

from __future__ import annotations

import logging
from typing import Any

from desktop.agents.errors import AgentError, MissingApiKey, NoSecureStore, UnknownProvider
from desktop.agents.messages import Provider

log = logging.getLogger("engram.agents")

PROVIDERS = ("ollama", "openai", "anthropic", "scripted")
# The local chat model Engram suggests and uses when Ollama is chosen without naming one.
DEFAULT_OLLAMA_MODEL = "qwen2.5-coder"


def api_key_for(service: str) -> str:
    """The API key of ``service`` from the OS keyring; known errors when absent or no keyring."""
    from desktop.memory.secrets_store import KeyringUnavailable, SecretStoreError, get_api_key

    try:
        key = get_api_key(service)
    except KeyringUnavailable as exc:
        raise NoSecureStore("No secure key store is available on this system.") from exc
    except SecretStoreError as exc:
        raise NoSecureStore(f"The key store failed: {exc}") from exc
    if not key:
        raise MissingApiKey(f"No API key for {service} is stored; add it in Settings.")
    return key


def make_provider(name: str, *, model: str = "", settings: Any | None = None,
                  api_key: str | None = None, **options: Any) -> Provider:
    """Build the provider called ``name`` from settings (keys come from the keyring)."""
    if name == "ollama":
        from desktop.agents.providers.ollama_provider import OllamaProvider

        host = options.pop("host", None) or (settings.ollama_host if settings else "http://127.0.0.1:11434")
        return OllamaProvider(model or (settings.llm_model if settings else "") or DEFAULT_OLLAMA_MODEL,
                              host=host, **options)
    if name == "openai":
        from desktop.agents.providers.openai_compat import OpenAICompatProvider

        base = options.pop("base_url", None) or (settings.openai_base_url if settings else
                                                   "https://api.openai.com/v1")
        key, why = (api_key, None) if api_key is not None else _optional_key("openai", base)
        return OpenAICompatProvider(model or "gpt-4o-mini", base_url=base, api_key=key, key_error=why, **options)
    if name == "anthropic":
        from desktop.agents.providers.anthropic_provider import AnthropicProvider

        key = api_key if api_key is not None else api_key_for("anthropic")
        return AnthropicProvider(model or "claude-sonnet-4-5", api_key=key, **options)
    if name == "scripted":
        from desktop.agents.providers.scripted import ScriptedProvider

        script = options.pop("script", None)
        if script is None:
            raise UnknownProvider("The scripted provider needs a script (a JSON file of turns).")
        return ScriptedProvider.from_source(script, **options)
    raise UnknownProvider(f"Unknown provider {name!r}; choose one of {', '.join(PROVIDERS)}.")


def _optional_key(service: str, base_url: str) -> tuple[str | None, AgentError | None]:
    """OpenAI-compatible local servers (LM Studio, vLLM) need no key; api.openai.com does.

    Returns the key, or None and why there is none (reported if the server asks for a key).
    """
    try:
        return api_key_for(service), None
    except (MissingApiKey, NoSecureStore) as exc:
        if "api.openai.com" in base_url:
            raise
        log.info("no %s key (%s); calling %s without one", service, exc.code, base_url)
        return None, exc
