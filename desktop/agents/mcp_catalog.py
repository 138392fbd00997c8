"""What Engram's MCP server says about itself, as plain data that costs nothing to import.

The MCP SDK takes seconds to import (its pydantic models are built at import), and a
client gives a server about as long to answer ``initialize`` before it carries on
without it. So the handshake and the listings (``initialize``, ``ping``,
``tools/list``, ``resources/list``, ``resources/templates/list``, ``prompts/list``) are
answered from this table by ``mcp_front`` while the SDK and the project load behind it;
the SDK server is built from the same table (``mcp_server.build_server``), and
tests/agents/test_mcp_front.py checks that the SDK would answer exactly the same.
"""

from __future__ import annotations

from typing import Any

from desktop import __version__

SERVER_NAME = "engram"
PINNED_URI = "engram://memories/pinned"
INSTRUCTIONS = ("Engram is this project's long-term memory. Call search_memory before exploring, cite memories "
                "you use as [Memory #N: a few words] (N is the memory's number), and record_memory what a future "
                "session should know (a recorded memory is a candidate until a person confirms it).")
#: The protocol revisions the SDK negotiates through ``initialize`` (mcp_types.version), oldest first.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
CAPABILITIES: dict[str, Any] = {"prompts": {"listChanged": False},
                                "resources": {"listChanged": False, "subscribe": False},
                                "tools": {"listChanged": False}}
MEMORY_TYPES = ("gotcha", "decision", "preference", "pattern", "requirement", "error_pattern", "module_insight",
                "prefetch_pattern", "work_state", "causal_dependency", "task_calibration", "e2e_observation",
                "dead_end", "work_unit_outcome", "workflow_recipe", "context_cost", "code", "note")

#: Parameter descriptions (the model reads them in each tool's input schema).
PARAMS = {
    "query": "What to look for, in plain words or identifiers.",
    "limit": "How many memories at most (1-50).",
    "content": "The fact, decision or pitfall, in one or two sentences.",
    "type": "One of: " + ", ".join(MEMORY_TYPES) + ".",
    "files": "Project-relative files it is about (at most 10).",
    "task": "The task, in a sentence.",
    "target": "A project-relative file path, or path:symbol.",
    "depth": "How many dependency levels to follow (1-6).",
    "memory_id": "The memory's number (N in [Memory #N]).",
    "pinned": "true pins, false unpins.",
    "reason": "Why it is wrong or obsolete (kept in the audit log).",
}


def _hints(*, read_only: bool, destructive: bool = False) -> dict[str, bool]:
    return {"destructiveHint": destructive, "idempotentHint": True, "openWorldHint": False,
            "readOnlyHint": read_only}


def _prop(name: str, kind: str, **extra: Any) -> dict[str, Any]:
    return {"description": PARAMS[name], "title": name.replace("_", " ").title(), "type": kind, **extra}


def _schema(tool: str, required: list[str], props: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"properties": props, "required": required, "type": "object", "title": f"{tool}Arguments"}


MEMORY_ID = _prop("memory_id", "integer")
#: name -> (description, annotations, input schema), in the order clients list them.
TOOLS: dict[str, tuple[str, dict[str, bool], dict[str, Any]]] = {
    "search_memory": (
        "Search this project's long-term memory (decisions, gotchas, dead ends, recipes). Each result starts with "
        "its citation, [Memory #N]: cite what you use as [Memory #N: a few words].",
        _hints(read_only=True),
        _schema("search_memory", ["query"], {"query": _prop("query", "string"),
                                             "limit": _prop("limit", "integer", default=8, maximum=50, minimum=1)})),
    "record_memory": (
        "Record something a future session should know. It is stored as a candidate: not shown to agents until "
        "a person confirms it.",
        _hints(read_only=False),
        _schema("record_memory", ["content"], {
            "content": _prop("content", "string", maxLength=4000, minLength=1),
            "type": _prop("type", "string", default="note"),
            "files": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": None,
                      "description": PARAMS["files"], "title": "Files"}})),
    "get_workflow_recipe": (
        "How tasks like this one were done successfully in this project (recipes that are memories carry their "
        "[Memory #N]).",
        _hints(read_only=True),
        _schema("get_workflow_recipe", ["task"], {"task": _prop("task", "string")})),
    "analyze_impact": (
        "What depends on a file or symbol (path or path:symbol), from the code graph.",
        _hints(read_only=True),
        _schema("analyze_impact", ["target"], {"target": _prop("target", "string"),
                                               "depth": _prop("depth", "integer", default=3, maximum=6, minimum=1)})),
    "pin": (
        "Pin a memory so it is always injected (pinned=false unpins).",
        _hints(read_only=False),
        _schema("pin", ["memory_id"], {"memory_id": MEMORY_ID, "pinned": _prop("pinned", "boolean", default=True)})),
    "forget": (
        "Forget a memory that is wrong or obsolete: it is never injected again and is deleted later by pruning.",
        _hints(read_only=False, destructive=True),
        _schema("forget", ["memory_id"], {"memory_id": MEMORY_ID, "reason": _prop("reason", "string", default="")})),
}
RESOURCES = [{"description": "The project's pinned memories.", "mimeType": "text/plain", "name": "pinned-memories",
              "uri": PINNED_URI}]


def negotiate(requested: Any) -> str:
    """The protocol version the server answers ``initialize`` with (the SDK's rule)."""
    return requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]


def static_result(method: str, params: Any) -> dict[str, Any] | None:
    """The result of a request this table answers by itself, or None for one the SDK must answer."""
    if method == "initialize":
        version = negotiate(params.get("protocolVersion") if isinstance(params, dict) else None)
        return {"capabilities": CAPABILITIES, "instructions": INSTRUCTIONS, "protocolVersion": version,
                "serverInfo": {"name": SERVER_NAME, "version": __version__}}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": [{"annotations": hints, "description": text, "inputSchema": schema, "name": name}
                          for name, (text, hints, schema) in TOOLS.items()]}
    if method == "resources/list":
        return {"resources": RESOURCES}
    if method == "resources/templates/list":
        return {"resourceTemplates": []}
    if method == "prompts/list":
        return {"prompts": []}
    return None
