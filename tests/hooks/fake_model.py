"""A scripted model behind the Anthropic Messages API, as real ``claude -p`` sessions call it.

Claude Code posts to ``/v1/messages?beta=true`` and sends message shapes (system
reminders, ``role`` variants of its own) that the strict fake in tests/agents
rejects; this one accepts whatever the CLI sends, records every request, and
answers with the next scripted turn (the real SSE events, from the same
``stream_events`` the strict fake uses).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.agents.fake_anthropic import FakeAnthropic, message, stream_events
from tests.agents.fake_sse import Recorded, Turn


class ScriptedClaudeModel(FakeAnthropic):
    """Answers each model request with ``script(body, n)``; no key check."""

    def __init__(self, script: Callable[[dict[str, Any], int], Turn], *, lifetime: float = 120.0) -> None:
        """``script`` gets the request body and its number among model requests."""
        super().__init__(script, api_key=None, lifetime=lifetime)

    def handle_post(self, h: BaseHTTPRequestHandler, rec: Recorded) -> None:
        """``POST /v1/messages`` (any query string): the next scripted turn, streamed or whole."""
        if rec.path.split("?")[0] == "/v1/messages/count_tokens":
            self.send_json(h, 200, {"input_tokens": 100})
            return
        if rec.path.split("?")[0] != "/v1/messages":
            self.send_json(h, 404, {"type": "error", "error": {"type": "not_found_error", "message": rec.path}})
            return
        turn = self.next_plan(rec)
        assert isinstance(turn, Turn)
        n = len(self.model_requests)
        if rec.body.get("stream"):
            self.send_stream(h, stream_events(turn, n))
        else:
            self.send_json(h, 200, message(turn, n))

    def all_text(self, n: int) -> str:
        """Everything model request ``n`` carried (system and messages), as one JSON string."""
        body = self.model_requests[n].body
        return json.dumps({"system": body.get("system"), "messages": body.get("messages")}, ensure_ascii=False)
