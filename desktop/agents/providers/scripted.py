"""A scripted / replay provider: the model's turns come from a list, a JSON file or a function.

Tests and demos use it to drive the full session loop (tools, injection,
observer, metrics) deterministically without a model server. A turn may also
name an error code to simulate a failing provider.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.agents.errors import (
    AgentError,
    ProviderBadResponse,
    ProviderStreamBroken,
    ProviderUnavailable,
    ScriptExhausted,
)
from desktop.agents.messages import (
    AgentFormat,
    AssistantTurn,
    ChatMessage,
    ClosingProvider,
    TextSink,
    ToolCallRequest,
    ToolSpec,
)

_ERRORS: dict[str, type[AgentError]] = {
    ProviderUnavailable.code: ProviderUnavailable,
    ProviderBadResponse.code: ProviderBadResponse,
    ProviderStreamBroken.code: ProviderStreamBroken,
}
TurnFn = Callable[[list[ChatMessage], int], dict[str, Any] | AssistantTurn]


def turn_from_dict(d: dict[str, Any], counter: int) -> AssistantTurn:
    """One scripted turn: ``{"text": ..., "tool_calls": [{"name": .., "arguments": {..}}]}``."""
    if d.get("error"):
        cls = _ERRORS.get(str(d["error"]), AgentError)
        raise cls(str(d.get("message") or f"scripted failure {d['error']}"))
    calls = [ToolCallRequest(str(c.get("id") or f"call_{counter}_{i}"), str(c["name"]),
                             dict(c.get("arguments") or {})) for i, c in enumerate(d.get("tool_calls") or [])]
    return AssistantTurn(text=str(d.get("text") or ""), tool_calls=calls, thinking=str(d.get("thinking") or ""),
                         stop_reason="tool_calls" if calls else "stop")


class ScriptedProvider(ClosingProvider):
    """Replays a fixed list of turns (or asks a function for each turn)."""

    name = "scripted"

    def __init__(self, turns: list[dict[str, Any]] | TurnFn, *, model: str = "scripted",
                 agent_format: AgentFormat = "plain", context_window: int = 32_768,
                 finish_text: str | None = "Done.", pace: float = 0.0) -> None:
        """``finish_text``: what to answer once the script is used up (None raises instead);
        ``pace``: seconds between streamed words (a demo's stream is seen, and can be stopped)."""
        self.model = model
        self.agent_format = agent_format
        self.context_window = context_window
        self.finish_text = finish_text
        self.pace = pace
        self._turns = turns
        self._index = 0
        self._lock = threading.Lock()
        self.seen: list[list[ChatMessage]] = []  # every conversation sent, for tests

    @classmethod
    def from_source(cls, source: str | Path | list[dict[str, Any]], **options: Any) -> ScriptedProvider:
        """From a list of turns or a JSON file holding ``{"turns": [...]}`` or a bare list."""
        if isinstance(source, list):
            return cls(source, **options)
        data = json.loads(Path(source).read_text(encoding="utf-8"))
        turns = data["turns"] if isinstance(data, dict) else data
        return cls(list(turns), **options)

    def chat(self, messages: list[ChatMessage], tools: list[ToolSpec], *,
             on_text: TextSink | None = None, cancel: Any | None = None) -> AssistantTurn:
        """The next scripted turn; its text is streamed word by word to ``on_text``."""
        with self._lock:
            index = self._index
            self._index += 1
            self.seen.append(list(messages))
        if callable(self._turns):
            raw = self._turns(messages, index)
            turn = raw if isinstance(raw, AssistantTurn) else turn_from_dict(raw, index)
        elif index < len(self._turns):
            turn = turn_from_dict(self._turns[index], index)
        elif self.finish_text is not None:
            turn = AssistantTurn(text=self.finish_text, stop_reason="stop")
        else:
            raise ScriptExhausted("The script has no more turns.")
        if on_text and turn.text:
            for word in turn.text.split(" "):
                if self.pace and self._paused(cancel):
                    break  # stopped: the view keeps what streamed so far
                on_text(word + " ")
        return turn

    def _paused(self, cancel: Any | None) -> bool:
        """Wait one ``pace``; True when the session was cancelled meanwhile."""
        if cancel is None:
            time.sleep(self.pace)
            return False
        return bool(cancel.wait(self.pace))

    def close(self) -> None:
        """Nothing to release."""
