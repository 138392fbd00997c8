"""Words for the core's error codes: the core returns codes, the UI words them."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from desktop.memory.store.errors import EngramError


def describe_error(exc: BaseException) -> str:
    """A sentence a person can act on, in the current language."""
    code = getattr(exc, "code", None)
    words = error_words()
    if code in words:
        text = words[code]
        if code == "secret_refused" and hasattr(exc, "excerpt"):
            text += f" {getattr(exc, 'excerpt', '')} ({getattr(exc, 'kind', '')})"  # the sentence is said once
        elif code in ("secret_refused", "invalid_input"):
            text += " " + str(exc)
        return text
    if isinstance(exc, EngramError):
        return str(exc)
    return QCoreApplication.translate("Messages", "Something went wrong inside Engram (a bug): %1").replace(
        "%1", f"{type(exc).__name__}: {exc}"
    )


def error_words() -> dict[str, str]:
    """Every stable error code, worded in the current language."""
    return {
        "corrupt_database": QCoreApplication.translate(
            "Messages", "The memory database of this project is damaged. Engram did not change it."
        ),
        "newer_database": QCoreApplication.translate(
            "Messages",
            "This project's memory was saved by a newer version of Engram. "
            "Update Engram to open it; nothing was changed.",
        ),
        "read_only": QCoreApplication.translate(
            "Messages",
            "Engram cannot write to its data folder. Check its permissions or choose "
            "another data location in Settings.",
        ),
        "disk_full": QCoreApplication.translate(
            "Messages", "The disk is full. The last change was not saved; everything saved before is safe."
        ),
        "busy": QCoreApplication.translate("Messages", "Another Engram window kept the memory busy. Please try again."),
        "secret_refused": QCoreApplication.translate(
            "Messages", "This text contains what looks like a secret, so it was not saved:"
        ),
        "not_found": QCoreApplication.translate("Messages", "That memory no longer exists."),
        "invalid_input": QCoreApplication.translate("Messages", "This input was not accepted:"),
        "writer_closed": QCoreApplication.translate("Messages", "The project is closing; the change was not saved."),
        "engram_error": QCoreApplication.translate("Messages", "Engram could not do this."),
        "store_error": QCoreApplication.translate("Messages", "The memory database could not be used."),
        "provider_unreachable": QCoreApplication.translate("Messages", "The model server did not answer. Is it running, and is its address right in Settings?"),  # noqa: E501 (one literal, for lupdate)
        "provider_timeout": QCoreApplication.translate("Messages", "The model server took too long to answer."),
        "provider_auth_failed": QCoreApplication.translate("Messages", "The model provider refused the API key. Set a valid one in Settings."),  # noqa: E501 (one literal, for lupdate)
        "provider_rate_limited": QCoreApplication.translate("Messages", "The model provider is limiting requests. Try again shortly."),  # noqa: E501 (one literal, for lupdate)
        "provider_error": QCoreApplication.translate("Messages", "The model provider reported an error."),
        "provider_http_error": QCoreApplication.translate("Messages", "The model provider answered with an HTTP error."),  # noqa: E501 (one literal, for lupdate)
        "provider_bad_response": QCoreApplication.translate("Messages", "The model server answered something Engram does not understand."),  # noqa: E501 (one literal, for lupdate)
        "provider_stream_broken": QCoreApplication.translate("Messages", "The connection to the model closed while it was answering."),  # noqa: E501 (one literal, for lupdate)
        "bad_response": QCoreApplication.translate("Messages", "The embedding server answered something Engram does not understand."),  # noqa: E501 (one literal, for lupdate)
        "missing_api_key": QCoreApplication.translate("Messages", "No API key is stored for this provider. Add one in Settings; it is kept in the system keyring."),  # noqa: E501 (one literal, for lupdate)
        "no_secure_store": QCoreApplication.translate("Messages", "No secure credential store is available on this computer, so no API key or team connection can be kept."),  # noqa: E501 (one literal, for lupdate)
        "secure_store_failed": QCoreApplication.translate("Messages", "The system keyring failed (locked or access denied)."),  # noqa: E501 (one literal, for lupdate)
        "model_not_found": QCoreApplication.translate("Messages", "This model is not available. Pull it with Ollama or choose another in Settings."),  # noqa: E501 (one literal, for lupdate)
        "unknown_provider": QCoreApplication.translate("Messages", "Unknown provider."),
        "not_allowed": QCoreApplication.translate("Messages", "Only you can do this to that memory; an agent asked for it and was refused."),  # noqa: E501 (one literal, for lupdate)
        "team_error": QCoreApplication.translate("Messages", "Team sync could not do this."),
        "team_not_joined": QCoreApplication.translate("Messages", "This project is not connected to a team."),
        "team_server_unreachable": QCoreApplication.translate("Messages", "The team server cannot be reached."),
        "team_auth_failed": QCoreApplication.translate("Messages", "The team server refused these credentials."),
        "team_server_newer": QCoreApplication.translate("Messages", "The team server was upgraded by a newer Engram; update Engram to sync with it."),  # noqa: E501 (one literal, for lupdate)
        "team_server_not_ready": QCoreApplication.translate("Messages", "The team server is not ready for this version of Engram; ask the team admin to run engram team init."),  # noqa: E501 (one literal, for lupdate)
        "team_unknown_role": QCoreApplication.translate("Messages", "These credentials do not belong to a team on this server."),  # noqa: E501 (one literal, for lupdate)
        "team_bad_url": QCoreApplication.translate("Messages", "This is not a PostgreSQL connection string: give it as postgresql://user:password@host/database."),
        "agent_error": QCoreApplication.translate("Messages", "The agent stopped because of an error."),
        "tool_denied": QCoreApplication.translate("Messages", "The agent's action was not allowed."),
        "path_outside_project": QCoreApplication.translate("Messages", "The agent tried to reach a file outside the project folder."),  # noqa: E501 (one literal, for lupdate)
        "script_exhausted": QCoreApplication.translate("Messages", "The tour agent ran out of scripted turns."),
        "graph_target_not_found": QCoreApplication.translate("Messages", "That file or symbol is not in the code graph."),  # noqa: E501 (one literal, for lupdate)
        "transcript_import_error": QCoreApplication.translate("Messages", "A transcript could not be read."),
        "tour_only": QCoreApplication.translate("Messages", "The scripted tour agent runs only on the tour's sample project."),  # noqa: E501 (one literal, for lupdate)
    }
