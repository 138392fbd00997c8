"""Known agent-runtime errors, each with a stable ``code`` the UI and CLI word.

A provider that is down, answers garbage or drops the connection mid-stream must
end the session cleanly with one of these codes, never with a traceback: the
session runner catches ``AgentError`` and records the outcome as a failure.
"""

from __future__ import annotations

from desktop.memory.store.errors import EngramError


class AgentError(EngramError):
    """Base class of every agent-runtime failure the user can act on."""

    code = "agent_error"


class ProviderUnavailable(AgentError):
    """The model server could not be reached (refused, DNS, timeout before any answer)."""

    code = "provider_unreachable"  # the same code as the embedding providers' for the same condition


class ProviderBadResponse(AgentError):
    """The model server answered something that is not its documented protocol."""

    code = "provider_bad_response"


class ProviderStreamBroken(AgentError):
    """The connection closed while the answer was still streaming."""

    code = "provider_stream_broken"


class ProviderAuthError(AgentError):
    """The provider refused the API key (401/403)."""

    code = "provider_auth_failed"


class ProviderHTTPError(AgentError):
    """Any other HTTP failure status from the provider."""

    code = "provider_http_error"

    def __init__(self, message: str, *, status: int = 0, detail: str | None = None) -> None:
        super().__init__(message, detail=detail)
        self.status = status


class ModelNotFound(AgentError):
    """The provider does not have the requested model."""

    code = "model_not_found"


class MissingApiKey(AgentError):
    """No API key is stored in the OS keyring for this provider."""

    code = "missing_api_key"


class NoSecureStore(AgentError):
    """The OS keyring is not available, so no key can be read."""

    code = "no_secure_store"


class UnknownProvider(AgentError):
    """The provider name is not one Engram knows."""

    code = "unknown_provider"


class PathOutsideProject(AgentError):
    """A tool was asked to touch a path outside the project root (traversal or symlink)."""

    code = "path_outside_project"


class ToolDenied(AgentError):
    """The user (or the approval policy) refused a write or a command."""

    code = "tool_denied"


class ScriptExhausted(AgentError):
    """The scripted provider was asked for more turns than its script has."""

    code = "script_exhausted"
