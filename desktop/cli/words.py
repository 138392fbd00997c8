"""The command line's words for every stable error code (the UI has its own, translated, in ui/messages.py).

The core raises ``EngramError``s with a ``code``; a person reads a sentence. A test
checks that every code any part of the core can raise is worded here and in the UI.
"""

from __future__ import annotations

WORDS: dict[str, str] = {
    # storage
    "engram_error": "Engram could not do this.",
    "store_error": "The memory database could not be used.",
    "corrupt_database": "The memory database of this project is damaged; Engram did not change it.",
    "newer_database": "This project's memory was saved by a newer Engram; update Engram to open it.",
    "read_only": "Engram cannot write to its data folder; check its permissions or use --data-dir.",
    "disk_full": "The disk is full; the last change was not saved, everything saved before is safe.",
    "busy": "Another Engram process kept the memory busy; try again.",
    "secret_refused": "This text contains what looks like a secret, so it was not saved.",
    "not_found": "That memory does not exist.",
    "invalid_input": "This input was not accepted.",
    "writer_closed": "The project was closing; the change was not saved.",
    # models: embedding and chat providers share these
    "provider_unreachable": "The model server did not answer; is it running, and is the address right?",
    "provider_timeout": "The model server took too long to answer.",
    "provider_auth_failed": "The model provider refused the API key; set a valid one in Settings.",
    "provider_rate_limited": "The model provider is rate-limiting requests; try again shortly.",
    "provider_error": "The model provider reported an error.",
    "provider_http_error": "The model provider answered with an HTTP error.",
    "provider_bad_response": "The model server answered something Engram does not understand.",
    "provider_stream_broken": "The connection to the model closed while it was answering.",
    "bad_response": "The embedding server answered something Engram does not understand.",
    "missing_api_key": "No API key is stored for this provider; add one in Settings (kept in the keyring).",
    "no_secure_store": "No secure credential store is available, so no API key can be kept.",
    "secure_store_failed": "The system keyring failed (locked or denied).",
    "model_not_found": "The model is not available; pull it (Ollama) or choose another in Settings.",
    "unknown_provider": "Unknown provider name.",
    # agents
    # trust and team
    "not_allowed": "Only you can do this to that memory; an agent asked for it and was refused.",
    "team_error": "Team sync could not do this.",
    "team_not_joined": "This project is not connected to a team.",
    "team_server_unreachable": "The team server cannot be reached.",
    "team_auth_failed": "The team server refused these credentials.",
    "team_server_newer": "The team server was upgraded by a newer Engram; update Engram to sync with it.",
    "team_server_not_ready": ("The team server is not ready for this version of Engram; "
                              "ask the team admin to run engram team init."),
    "team_unknown_role": "These credentials do not belong to a team on this server.",
    "team_bad_url": "This is not a PostgreSQL connection string: give it as postgresql://user:password@host/database.",
    "agent_error": "The agent stopped because of an error.",
    "tool_denied": "The agent's action was not allowed.",
    "path_outside_project": "The agent tried to reach a file outside the project folder.",
    "script_exhausted": "The scripted agent ran out of turns.",
    # code graph and observer
    "graph_target_not_found": "That file or symbol is not in the code graph.",
    "transcript_import_error": "A transcript could not be read.",
    "tour_only": "The scripted tour agent runs only on the tour's sample project.",
}


def word(code: str | None, fallback: str) -> str:
    """The sentence for ``code``; ``fallback`` (the error's own message) for an unknown one."""
    return WORDS.get(code or "", fallback)
