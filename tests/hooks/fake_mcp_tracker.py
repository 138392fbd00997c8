"""A tiny MCP server over stdio (JSON-RPC, one message a line), as Claude Code starts one from
``--mcp-config``: one tool, ``create_ticket``, that refuses the queue ``Ops`` the way a tracker's
argument validation does. Run as a script; it answers until its stdin closes."""

from __future__ import annotations

import json
import sys
from typing import Any

_TOOL = {"name": "create_ticket", "description": "Create a ticket in the tracker.",
         "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}, "queue": {"type": "string"}},
                         "required": ["title", "queue"]}}


def _answer(request: dict[str, Any]) -> dict[str, Any] | None:
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        return None  # a notification (``notifications/initialized``): nothing to answer
    if method == "initialize":
        version = (request.get("params") or {}).get("protocolVersion", "2025-06-18")
        result: dict[str, Any] = {"protocolVersion": version, "capabilities": {"tools": {}},
                                  "serverInfo": {"name": "tracker", "version": "1.0"}}
    elif method == "tools/list":
        result = {"tools": [_TOOL]}
    elif method == "tools/call":
        args = (request.get("params") or {}).get("arguments") or {}
        refused = args.get("queue") == "Ops"
        text = "Argument Validation Error" if refused else json.dumps({"id": "T-1", "title": args.get("title")})
        result = {"content": [{"type": "text", "text": text}], "isError": refused}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def main() -> None:
    """Answer each request line on stdin with one line on stdout."""
    for line in sys.stdin:
        if not line.strip():
            continue
        answer = _answer(json.loads(line))
        if answer is not None:
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
